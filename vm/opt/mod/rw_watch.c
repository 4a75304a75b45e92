// SPDX-License-Identifier: MIT
// Exceptions escaping swapped functions (issue 7): a swap is rolled back when a new
// exception type appears. The optimiser watches each function it swaps with the exception
// types the original raised on the gates' inputs; the first other type that escapes a
// call of the function is noted here, and opt.check() rolls the swap back. Bytecode
// frames report through the VM's frame-raise hook (vm/patches/0011, vm/vm_hooks.h);
// promoted functions' native twins through their call slot (rw_promote.c), and resumed
// promoted generators through the generator hook (vm/patches/0020). Only raising
// pays: the hook tests rw_watch_n, then scans the watched entries.
#include "py/objfun.h"
#include "py/runtime.h"

#include "rw_watch.h"

// (function, allowed types tuple, first new type seen or NULL) per watched function; a
// root pointer so the tuples and types stay alive. The first rw_watch_n entries are in
// use (an unwatched entry is replaced by the last one), so an exception leaving any frame
// while swaps are watched scans only those.
#define RW_WATCH_MAX (256)
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_watch_table[768]);
size_t rw_watch_n;

static mp_obj_t *slot_of(mp_obj_t fn) {
    mp_obj_t *t = MP_STATE_VM(rw_watch_table);
    for (size_t i = 0; i < rw_watch_n; i++) {
        if (t[3 * i] == fn) {
            return &t[3 * i];
        }
    }
    return NULL;
}

bool rw_watch(mp_obj_t fn, mp_obj_t allowed) {
    mp_obj_t *s = slot_of(fn);
    if (s == NULL) {
        if (rw_watch_n == RW_WATCH_MAX) {
            return false;
        }
        s = &MP_STATE_VM(rw_watch_table)[3 * rw_watch_n++];
    }
    s[0] = fn;
    s[1] = allowed;
    s[2] = MP_OBJ_NULL;
    return true;
}

void rw_unwatch(mp_obj_t fn) {
    mp_obj_t *s = slot_of(fn);
    if (s != NULL) {
        mp_obj_t *last = &MP_STATE_VM(rw_watch_table)[3 * --rw_watch_n];
        s[0] = last[0];
        s[1] = last[1];
        s[2] = last[2];
        last[0] = last[1] = last[2] = MP_OBJ_NULL;
    }
}

mp_obj_t rw_watch_seen(mp_obj_t fn) {
    mp_obj_t *s = slot_of(fn);
    return s != NULL && s[2] != MP_OBJ_NULL ? s[2] : mp_const_none;
}

// The entry watching fun: fun's own, or, for a bytecode function, that of a watched
// bytecode function with the same code. Loci of one source share code but not function
// objects (loci/python/opt_locus.py), and an in-place rewrite changes the code for all.
static mp_obj_t *slot_of_raiser(mp_obj_t fun) {
    mp_obj_t *s = slot_of(fun);
    if (s != NULL || !mp_obj_is_exact_type(fun, &mp_type_fun_bc)) {
        return s;
    }
    const byte *code = ((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(fun))->bytecode;
    mp_obj_t *t = MP_STATE_VM(rw_watch_table);
    for (size_t i = 0; i < rw_watch_n; i++) {
        if (mp_obj_is_exact_type(t[3 * i], &mp_type_fun_bc) &&
            ((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(t[3 * i]))->bytecode == code) {
            return &t[3 * i];
        }
    }
    return NULL;
}

// exc escaped a call of fun: note its type if fun (or its code) is watched, the type is
// new and it is an Exception (not KeyboardInterrupt, SystemExit or GeneratorExit).
void rw_watch_raise(const mp_obj_base_t *fun, const mp_obj_base_t *exc) {
    mp_obj_t *s = slot_of_raiser(MP_OBJ_FROM_PTR(fun));
    if (s == NULL || s[2] != MP_OBJ_NULL) {
        return;
    }
    const mp_obj_type_t *t = mp_obj_get_type(MP_OBJ_FROM_PTR(exc));
    // KeyboardInterrupt, SystemExit and GeneratorExit say nothing about the code.
    if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(t), MP_OBJ_FROM_PTR(&mp_type_Exception))) {
        return;
    }
    mp_obj_t type = MP_OBJ_FROM_PTR(t);
    size_t n;
    mp_obj_t *allowed;
    mp_obj_tuple_get(s[1], &n, &allowed);
    for (size_t i = 0; i < n; i++) {
        if (allowed[i] == type) {
            return;
        }
    }
    s[2] = type;
}

// Soft reset: the table's objects were on the old heap.
void rw_watch_deinit(void) {
    mp_obj_t *t = MP_STATE_VM(rw_watch_table);
    for (size_t i = 0; i < 3 * RW_WATCH_MAX; i++) {
        t[i] = MP_OBJ_NULL;
    }
    rw_watch_n = 0;
}
