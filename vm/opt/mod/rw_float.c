// SPDX-License-Identifier: MIT
// Type feedback for float sites (vm/patches/0029). A twin is first compiled to probe:
// before each site (an arithmetic expression on locals, their attributes and number
// constants), the machine code passes every such leaf's value to mp_native_float_probe,
// which notes what it held (an attribute that is no instance's member: "other"). The optimiser replays the function's recorded calls on that twin, then
// compiles the twin again reading the notes: a site whose leaves each held one type, a
// float or a small int, on every call gets its fast path on doubles, guarded by those
// types; any other site keeps the generic code alone (vm/opt/README.md, "Float sites").
#include <string.h>

#include "py/nativeglue.h"
#include "py/obj.h"

#if MICROPY_EMIT_NATIVE_POLL

uint8_t mp_native_float_mode;
size_t mp_native_float_sites;
size_t mp_native_float_made;
size_t mp_native_float_unboxed;

// What each leaf of each site held in the probing runs: MP_NATIVE_FLOAT_SEEN_* bits.
static uint8_t seen[MP_NATIVE_FLOAT_SITES * MP_NATIVE_FLOAT_LEAVES];

void mp_native_float_probe(mp_uint_t at, mp_obj_t value) {
    if (at >= sizeof(seen)) {
        return;
    }
    uint8_t kind;
    if (mp_obj_is_small_int(value)) {
        kind = MP_NATIVE_FLOAT_SEEN_INT;
    } else if (value != MP_OBJ_NULL && mp_obj_is_exact_type(value, &mp_type_float)) {
        kind = MP_NATIVE_FLOAT_SEEN_FLOAT;
    } else {
        kind = MP_NATIVE_FLOAT_SEEN_OTHER;  // unbound (NULL), a subclass, anything else
    }
    seen[at] |= kind;
}

void mp_native_float_probe_attr(mp_uint_t at, mp_obj_t base, qstr attr) {
    mp_native_float_probe(at, mp_native_float_member(base, attr));
}

uint8_t mp_native_float_kind(size_t site, size_t leaf) {
    if (site >= MP_NATIVE_FLOAT_SITES || leaf >= MP_NATIVE_FLOAT_LEAVES) {
        return 0;
    }
    return seen[site * MP_NATIVE_FLOAT_LEAVES + leaf];
}

// Forgets every note: the optimiser clears them before it probes a function.
void rw_float_forget(void) {
    memset(seen, 0, sizeof(seen));
}

// The sites with at least one leaf noted (a probed site that ran).
size_t rw_float_noted(void) {
    size_t n = 0;
    for (size_t s = 0; s < MP_NATIVE_FLOAT_SITES; s++) {
        for (size_t l = 0; l < MP_NATIVE_FLOAT_LEAVES; l++) {
            if (seen[s * MP_NATIVE_FLOAT_LEAVES + l]) {
                n++;
                break;
            }
        }
    }
    return n;
}

#endif
