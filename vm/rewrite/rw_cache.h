// SPDX-License-Identifier: MIT
// Per-site caches of the qstr-operand rewritten opcodes (LOAD_GLOBAL_C, LOAD_ATTR_C,
// LOAD_METHOD_C): a static direct-mapped table indexed by a hash of the head ip (rewrites are length-
// preserving, so there is no inline space). Declarations only: rw_ops.h includes this at
// block scope inside the VM.
#ifndef LOCIOS_VM_REWRITE_RW_CACHE_H
#define LOCIOS_VM_REWRITE_RW_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define RW_CACHE_SLOTS (1024)

// A site's guess: where its name was last found. `map`: LOAD_GLOBAL_C, the globals map
// or the builtins table it was found in; LOAD_METHOD_C, the instance's type (whose own
// locals map `index` points into); unused by LOAD_ATTR_C (each instance has its own
// map). Only ever compared and bounds-checked against the live maps, never trusted or
// followed: a stale entry is a miss, not a wrong answer.
typedef struct {
    const uint8_t *ip;
    const void *map;
    size_t index;
} rw_cache_t;

extern rw_cache_t rw_cache[RW_CACHE_SLOTS];

#define RW_CACHE_SLOT(ip) \
    (&rw_cache[((uintptr_t)(ip) ^ ((uintptr_t)(ip) >> 8)) & (RW_CACHE_SLOTS - 1)])

#endif
