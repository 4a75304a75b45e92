// SPDX-License-Identifier: MIT
// _budget.kept(roots, stop, limit): the heap bytes reachable from the objects in roots
// without passing through those in stop, or limit + 1 once past limit. The mesh measures
// with it what a Locus keeps between its steps (its ctx.mem and its namespace), stopping
// at what it shares with the mesh (its ctx, the sandbox's built-ins).
#include "py/gc.h"
#include "py/runtime.h"

// Scratch of the walk: one entry per block it visits. Static, since the walk must not
// allocate (vm/patches/0016), and bounded: limits above KEPT_LIMIT_MAX are refused.
#define KEPT_WORK      ((1u << 16) + 64)
#define KEPT_STOPS     (32)
#define KEPT_ROOTS     (32)
#define KEPT_LIMIT_MAX ((size_t)(1u << 16) * MICROPY_BYTES_PER_GC_BLOCK)

static size_t kept_work[KEPT_WORK];

static size_t objects(mp_obj_t seq, const void **out, size_t cap, const char *what) {
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(seq, &n, &items);
    if (n > cap) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("_budget.kept: at most %d %s"),
                          (int)cap, what);
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = MP_OBJ_TO_PTR(items[i]);
    }
    return n;
}

static mp_obj_t budget_kept_fn(mp_obj_t roots_in, mp_obj_t stop_in, mp_obj_t limit_in) {
    const void *roots[KEPT_ROOTS];
    const void *stop[KEPT_STOPS];
    size_t n_roots = objects(roots_in, roots, KEPT_ROOTS, "roots");
    size_t n_stop = objects(stop_in, stop, KEPT_STOPS, "stops");
    mp_int_t limit = mp_obj_get_int(limit_in);
    if (limit < 0 || (size_t)limit > KEPT_LIMIT_MAX) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("_budget.kept: limit must be 0..%d bytes"),
                          (int)KEPT_LIMIT_MAX);
    }
    size_t got =
        gc_reachable_bytes(roots, n_roots, stop, n_stop, (size_t)limit, kept_work, KEPT_WORK);
    return mp_obj_new_int_from_uint(got);
}
MP_DEFINE_CONST_FUN_OBJ_3(budget_kept_obj, budget_kept_fn);
