// SPDX-License-Identifier: MIT
// The heat of native code: back edges counted by the place they return to
// (rw_native_glue.c), read by `_rw.native_heat()` (modrw.c).
#ifndef LOCIOS_VM_OPT_MOD_RW_NATIVE_HEAT_H
#define LOCIOS_VM_OPT_MOD_RW_NATIVE_HEAT_H

#include <stdint.h>

#define RW_HEAT_SLOTS (256)  // a power of two

typedef struct {
    uintptr_t at;  // the return address of a back edge's poll call, 0 = empty
    uint64_t n;    // back edges taken there (less the collisions it outlived)
} rw_heat_slot_t;

extern rw_heat_slot_t rw_native_heat[RW_HEAT_SLOTS];
void rw_native_heat_reset(void);
// Before the first twin is compiled with direct calls: learn what the direct entries
// recognise (rw_native_glue.c). Allocates nothing.
#include <stdbool.h>
extern bool mp_native_direct_calls;
extern bool mp_native_count_ops;
void rw_native_tier_init(void);

#endif
