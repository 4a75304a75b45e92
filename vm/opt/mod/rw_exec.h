// SPDX-License-Identifier: MIT
// Where native code went: see rw_exec.c. Plain C, no MicroPython types.
#ifndef LOCIOS_VM_OPT_MOD_RW_EXEC_H
#define LOCIOS_VM_OPT_MOD_RW_EXEC_H

#include <stddef.h>
#include <stdint.h>

// Called by the port for each block committed to the executable arena.
void rw_exec_note(const void *at, size_t len);
// The committed block of native code starting at `start` (its length in *len), or NULL
// when it is no longer among the blocks remembered.
const void *rw_exec_block(const void *start, size_t *len);
// The same, and the serial number of the kept source text the block was compiled from
// (rw_source.c; 0 when that text was not kept) in *src.
const void *rw_exec_block_src(const void *start, size_t *len, uint32_t *src);
void rw_exec_deinit(void);

#endif
