// SPDX-License-Identifier: MIT
// What the verifier needs to know of a MicroPython function's code (a vrf_fn_t), read
// from the objects and their GC blocks. `vm` (modvm.c) and the rewriter's aggressive mode
// (vm/rewrite/mod/rw_aggr.c, which checks a rewrite at a function's first call without
// going through Python) both describe functions with it. Static functions, so each
// includer keeps its own inlined copy.
#ifndef LOCIOS_VM_VERIFIER_MOD_VM_DESCRIBE_H
#define LOCIOS_VM_VERIFIER_MOD_VM_DESCRIBE_H

#include <string.h>

#include "py/bc.h"
#include "py/emitglue.h"
#include "py/gc.h"
#include "py/mpstate.h"
#include "py/objtuple.h"

#include "verify.h"

// Heap tables are sized by their GC block; frozen ones (in the image) are not sized at
// run time, so their indices are bounded only by this and the code is trusted there.
#define VM_UNSIZED (0xffff)

static inline size_t vm_heap_bytes(const void *p) {
    return p ? gc_nbytes(p) : 0;
}

// The qstr behind operand q of code with constants k, or MP_QSTRnull if none.
static inline qstr vm_qstr_id(const mp_module_constants_t *k, uint32_t q) {
    const qstr_short_t *table = k->qstr_table;
    size_t n = vm_heap_bytes(table);
    if (n && q >= n / sizeof(qstr_short_t)) {
        return MP_QSTRnull;
    }
    const qstr_pool_t *pool = MP_STATE_VM(last_pool);
    qstr qs = table[q];
    return qs >= pool->total_prev_len + pool->len ? MP_QSTRnull : qs;
}

// vrf_fn_t.qstr and .obj_kind, with ctx the function's module constants.
static inline const char *vm_qstr(void *ctx, uint32_t q, size_t *len) {
    qstr qs = vm_qstr_id(ctx, q);
    return qs == MP_QSTRnull ? NULL : (const char *)qstr_data(qs, len);
}

static inline int vm_obj_kind(void *ctx, uint32_t i) {
    const mp_module_constants_t *k = ctx;
    mp_obj_t o = k->obj_table[i];
    if (o == MP_OBJ_NULL) {
        return VRF_OBJ_INVALID;
    }
    if (mp_obj_is_type(o, &mp_type_tuple)) {
        size_t len;
        mp_obj_t *items;
        mp_obj_tuple_get(o, &len, &items);
        return len <= VRF_MAX_TUPLE ? VRF_OBJ_TUPLE + (int)len : VRF_OBJ_OTHER;
    }
    return VRF_OBJ_OTHER;
}

// Fills fn for bytecode code (code_len bytes; 0: its GC block's, or unbounded for frozen
// code) with module constants k and children table children, made as `made` says.
static inline void vm_describe(vrf_fn_t *fn, const byte *code, size_t code_len,
                               const mp_module_constants_t *k, mp_raw_code_t *const *children,
                               const vrf_child_t *made) {
    memset(fn, 0, sizeof(*fn));
    fn->code = code;
    size_t n = code_len ? code_len : vm_heap_bytes(code);
    fn->len = n ? n : VRF_MAX_CODE;
    fn->len_is_bound = n == 0;
    size_t qn = vm_heap_bytes(k->qstr_table);
    fn->n_qstr = qn ? (uint32_t)(qn / sizeof(qstr_short_t)) : VM_UNSIZED;
    size_t on = vm_heap_bytes(k->obj_table);
    fn->n_obj = on ? (uint32_t)(on / sizeof(mp_obj_t)) : (k->obj_table ? VM_UNSIZED : 0);
    size_t cn = vm_heap_bytes(children);
    if (cn) {
        // Only the leading non-NULL entries are children; the rest is block slack.
        uint32_t c = 0;
        while (c < cn / sizeof(void *) && children[c] != NULL) {
            c++;
        }
        fn->n_children = c;
    } else {
        fn->n_children = children ? VM_UNSIZED : 0;
    }
    fn->n_free = (uint32_t)made->n_free;
    fn->class_body = made->class_body;
    fn->n_defaults = made->n_defaults;
    fn->kw_defaults = made->kw_defaults;
    fn->qstr = vm_qstr;
    fn->obj_kind = vm_obj_kind;
    fn->ctx = (void *)k;
}

#endif
