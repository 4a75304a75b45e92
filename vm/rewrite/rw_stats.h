// SPDX-License-Identifier: MIT
// Guard-miss counts of the rewritten opcodes (issue 7): each slow path records its head
// ip, so the optimiser can roll back a rewrite whose guard keeps failing.
#ifndef LOCIOS_VM_REWRITE_RW_STATS_H
#define LOCIOS_VM_REWRITE_RW_STATS_H

#include <stddef.h>
#include <stdint.h>

// Slots of the direct-mapped miss table (power of two).
#define RW_MISS_SLOTS (1024)

// One guard miss at the head byte `ip` (a new opcode's slow path calls it first).
void rw_miss(const uint8_t *ip);
// Misses recorded at heads in [lo, hi) (e.g. one function's opcode area).
uint32_t rw_misses_between(const uint8_t *lo, const uint8_t *hi);
// Forgets every count.
void rw_misses_reset(void);

#endif
