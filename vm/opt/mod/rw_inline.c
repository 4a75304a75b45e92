// SPDX-License-Identifier: MIT
// Inlined calls (vm/patches/0030). While the optimiser compiles a twin it names, through
// _rw.inline(table), the small functions the twin may inline: for a call `name(...)` or
// `x.name(...)`, the function object the call must find (the guard compares with it) and
// the name its def has in the text compiled (the optimiser appends each callee's def
// under a name of its own). The table holds the objects only for that compile: the twin's
// constant table keeps each one it inlined (vm/opt/README.md, "Inlined calls").
#include "py/nativeglue.h"
#include "py/objtuple.h"
#include "py/runtime.h"
#include "rw_inline.h"

#if MICROPY_EMIT_NATIVE_POLL

uint8_t mp_native_inline_mode;
size_t mp_native_inline_made;

// A tuple of (method, name, def name, function), names as qstr objects; NULL when unset.
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_inline_table);
// MP_NATIVE_INLINE_ALL's raw codes (a list of pointers that are no objects, which nothing
// but the collector reads): machine code reads their fun_data in its guards.
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_inline_kept);

mp_obj_t mp_native_inline_target(bool method, qstr name, qstr *def_name) {
    mp_obj_t table = MP_STATE_VM(rw_inline_table);
    if (table == MP_OBJ_NULL) {
        return MP_OBJ_NULL;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_tuple_get(table, &n, &items);
    for (size_t i = 0; i < n; i++) {
        mp_obj_t *e;
        size_t len;
        mp_obj_tuple_get(items[i], &len, &e);
        if ((e[0] == mp_const_true) == method && e[1] == MP_OBJ_NEW_QSTR(name)) {
            *def_name = MP_OBJ_QSTR_VALUE(e[2]);
            return e[3];
        }
    }
    return MP_OBJ_NULL;
}

void mp_native_inline_keep(const void *raw_code) {
    if (MP_STATE_VM(rw_inline_kept) == MP_OBJ_NULL) {
        MP_STATE_VM(rw_inline_kept) = mp_obj_new_list(0, NULL);
    }
    mp_obj_list_append(MP_STATE_VM(rw_inline_kept), MP_OBJ_FROM_PTR(raw_code));
}

// inline(table) -> the previous mode: with a tuple of (method, name, def name, function),
// native code compiled from now on inlines calls of those functions; with None, none.
static mp_obj_t rw_inline_fn(mp_obj_t table) {
    mp_obj_t was = MP_OBJ_NEW_SMALL_INT(mp_native_inline_mode);
    if (table == mp_const_none) {
        MP_STATE_VM(rw_inline_table) = MP_OBJ_NULL;
        mp_native_inline_mode = MP_NATIVE_INLINE_OFF;
        return was;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(table, &n, &items);
    mp_obj_t out = mp_obj_new_tuple(n, NULL);
    mp_obj_tuple_t *t = MP_OBJ_TO_PTR(out);
    for (size_t i = 0; i < n; i++) {
        mp_obj_t *e;
        mp_obj_get_array_fixed_n(items[i], 4, &e);
        if (!mp_obj_is_str(e[1]) || !mp_obj_is_str(e[2])) {
            mp_raise_TypeError(MP_ERROR_TEXT("_rw.inline: (method, name, def name, function)"));
        }
        mp_obj_t entry[4] = {
            mp_obj_new_bool(mp_obj_is_true(e[0])),
            MP_OBJ_NEW_QSTR(mp_obj_str_get_qstr(e[1])),
            MP_OBJ_NEW_QSTR(mp_obj_str_get_qstr(e[2])),
            e[3],
        };
        t->items[i] = mp_obj_new_tuple(4, entry);
    }
    MP_STATE_VM(rw_inline_table) = out;
    mp_native_inline_mode = MP_NATIVE_INLINE_TABLE;
    return was;
}
MP_DEFINE_CONST_FUN_OBJ_1(rw_inline_obj, rw_inline_fn);

// inline_stats() -> calls inlined by native code compiled since boot.
static mp_obj_t rw_inline_stats_fn(void) {
    return mp_obj_new_int_from_uint(mp_native_inline_made);
}
MP_DEFINE_CONST_FUN_OBJ_0(rw_inline_stats_obj, rw_inline_stats_fn);

// Soft reset: the table and the kept raw codes were on the old heap.
void rw_inline_deinit(void) {
    MP_STATE_VM(rw_inline_table) = MP_OBJ_NULL;
    MP_STATE_VM(rw_inline_kept) = MP_OBJ_NULL;
    if (mp_native_inline_mode == MP_NATIVE_INLINE_TABLE) {
        mp_native_inline_mode = MP_NATIVE_INLINE_OFF;
    }
}

#endif
