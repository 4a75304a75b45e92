// SPDX-License-Identifier: MIT
// Heap copies of frozen bytecode: see rw_own.c.
#ifndef LOCIOS_VM_OPT_MOD_RW_OWN_H
#define LOCIOS_VM_OPT_MOD_RW_OWN_H

#include <stddef.h>
#include <stdint.h>

// How many bytes of opcodes, from code (a function's first opcode), control can reach:
// decoding stops at a return, raise or unconditional jump that lies past every jump and
// handler target seen so far. 0 when an instruction does not decode before limit.
size_t rw_reachable_len(const uint8_t *code, size_t limit);

#endif
