// SPDX-License-Identifier: MIT
// Where native code went: see rw_exec.c. Plain C, no MicroPython types.
#ifndef LOCIOS_VM_OPT_MOD_RW_EXEC_H
#define LOCIOS_VM_OPT_MOD_RW_EXEC_H

#include <stddef.h>

// Called by the port for each block committed to the executable arena.
void rw_exec_note(const void *at, size_t len);
// The committed block of native code starting at `start` (its length in *len), or NULL
// when it is no longer among the blocks remembered.
const void *rw_exec_block(const void *start, size_t *len);
void rw_exec_deinit(void);

#endif
