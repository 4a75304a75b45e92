// SPDX-License-Identifier: MIT
// Native promotion (issue 7): a hot bytecode function's new calls run a native twin
// compiled by the x64 emitter from the same source. The function object stays where every
// caller holds it and keeps its bytecode, context and child table untouched: only its type
// changes, to one whose call slot runs the twin. Frames and suspended generators already
// running the bytecode read nothing the promotion changes, and undoing it restores the
// type, so the bytes are identical by construction.
#include <string.h>

#include "py/bc.h"
#include "py/gc.h"
#include "py/nativeglue.h"
#include "py/objfun.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

#include "rw_promote.h"
#include "rw_watch.h"

// (function, twin) pairs, open addressing on the function's address with linear probes;
// a root pointer, so the collector keeps every twin alive while it is promoted.
#define RW_PROMOTE_SLOTS (512)
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_promoted[2 * 512]);
static size_t rw_promoted_n;

static size_t slot_of(mp_obj_t fn) {
    return ((uintptr_t)fn >> 4) & (RW_PROMOTE_SLOTS - 1);
}

static mp_obj_t twin_of(mp_obj_t fn) {
    mp_obj_t *t = MP_STATE_VM(rw_promoted);
    for (size_t i = slot_of(fn);; i = (i + 1) & (RW_PROMOTE_SLOTS - 1)) {
        if (t[2 * i] == fn) {
            return t[2 * i + 1];
        }
        if (t[2 * i] == MP_OBJ_NULL) {
            return MP_OBJ_NULL;
        }
    }
}

static void table_put(mp_obj_t fn, mp_obj_t twin) {
    mp_obj_t *t = MP_STATE_VM(rw_promoted);
    size_t i = slot_of(fn);
    while (t[2 * i] != MP_OBJ_NULL) {
        i = (i + 1) & (RW_PROMOTE_SLOTS - 1);
    }
    t[2 * i] = fn;
    t[2 * i + 1] = twin;
    rw_promoted_n++;
}

// Removal with backward shift: the entries after the hole that probed past it move up,
// so a lookup's probe never stops early at a hole.
static void table_remove(mp_obj_t fn) {
    mp_obj_t *t = MP_STATE_VM(rw_promoted);
    size_t i = slot_of(fn);
    while (t[2 * i] != fn) {
        i = (i + 1) & (RW_PROMOTE_SLOTS - 1);
    }
    for (size_t j = (i + 1) & (RW_PROMOTE_SLOTS - 1); t[2 * j] != MP_OBJ_NULL;
         j = (j + 1) & (RW_PROMOTE_SLOTS - 1)) {
        size_t home = slot_of(t[2 * j]);
        // Move j into the hole i unless j's home lies cyclically in (i, j].
        bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            t[2 * i] = t[2 * j];
            t[2 * i + 1] = t[2 * j + 1];
            i = j;
        }
    }
    t[2 * i] = MP_OBJ_NULL;
    t[2 * i + 1] = MP_OBJ_NULL;
    rw_promoted_n--;
}

mp_obj_t rw_promoted_call(mp_obj_t self_in, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_obj_t twin = twin_of(self_in);
    mp_cstack_check();
    mp_call_fun_t code = mp_obj_fun_native_get_function_start(MP_OBJ_TO_PTR(twin));
    if (rw_watch_n == 0) {
        return code(twin, n_args, n_kw, args);
    }
    // A watched swap (rw_watch.c): an exception escaping the twin is reported as one
    // escaping the function, as the VM's frame-raise hook does for bytecode, then goes on.
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t ret = code(twin, n_args, n_kw, args);
        nlr_pop();
        return ret;
    }
    rw_watch_raise(MP_OBJ_TO_PTR(self_in), nlr.ret_val);
    nlr_jump(nlr.ret_val);
}

static void promoted_print(const mp_print_t *print, mp_obj_t o_in, mp_print_kind_t kind) {
    (void)kind;
    mp_printf(print, "<function %q at 0x%p>", mp_obj_fun_get_name(o_in), MP_OBJ_TO_PTR(o_in));
}

// Named 'function' so that classes bind it as a method (mp_obj_is_fun checks the name),
// with the bytecode function's attributes (__name__, __globals__ read the unchanged
// bytecode and context).
MP_DEFINE_CONST_OBJ_TYPE(rw_type_fun_promoted, MP_QSTR_function, MP_TYPE_FLAG_BINDS_SELF, print,
                         promoted_print, attr, mp_obj_fun_bc_attr, call, rw_promoted_call);

// A generator function's twin is a native generator function: calling it makes a native
// generator instance.
static mp_obj_t promoted_gen_call(mp_obj_t self_in, size_t n_args, size_t n_kw,
                                  const mp_obj_t *args) {
    mp_obj_t twin = twin_of(self_in);
    return MP_OBJ_TYPE_GET_SLOT(&mp_type_native_gen_wrap, call)(twin, n_args, n_kw, args);
}

MP_DEFINE_CONST_OBJ_TYPE(rw_type_gen_promoted, MP_QSTR_generator, MP_TYPE_FLAG_BINDS_SELF, attr,
                         mp_obj_fun_bc_attr, call, promoted_gen_call);

// The attributes of a native function whose type the optimiser changed (promoted, or
// recorded: rw_record.c). mp_obj_fun_get_name finds a native function's name in its
// prelude only for mp_type_fun_native itself, so __name__ is read here.
void rw_native_fun_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    if (dest[0] == MP_OBJ_NULL && attr == MP_QSTR___name__) {
        mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(self_in);
        const byte *ip = mp_obj_fun_native_get_prelude_ptr(f);
        MP_BC_PRELUDE_SIG_DECODE(ip);
        MP_BC_PRELUDE_SIZE_DECODE(ip);
        (void)n_state, (void)n_exc_stack, (void)scope_flags, (void)n_pos_args;
        (void)n_kwonly_args, (void)n_def_pos_args, (void)n_info, (void)n_cell;
        mp_uint_t name = mp_decode_uint_value(ip);
#if MICROPY_EMIT_BYTECODE_USES_QSTR_TABLE
        name = f->context->constants.qstr_table[name];
#endif
        dest[0] = MP_OBJ_NEW_QSTR(name);
        return;
    }
    mp_obj_fun_bc_attr(self_in, attr, dest);
}

void rw_native_fun_print(const mp_print_t *print, mp_obj_t o_in, mp_print_kind_t kind) {
    mp_obj_t name[2] = { MP_OBJ_NULL, MP_OBJ_NULL };
    rw_native_fun_attr(o_in, MP_QSTR___name__, name);
    (void)kind;
    mp_printf(print, "<function %q at 0x%p>", MP_OBJ_QSTR_VALUE(name[0]), MP_OBJ_TO_PTR(o_in));
}

// A promoted native function (a @micropython.native def whose twin is compiled by the
// optimiser's second tier): demoting it gives back mp_type_fun_native.
MP_DEFINE_CONST_OBJ_TYPE(rw_type_native_promoted, MP_QSTR_function, MP_TYPE_FLAG_BINDS_SELF, print,
                         rw_native_fun_print, attr, rw_native_fun_attr, call, rw_promoted_call);

static bool is_promoted(mp_obj_t fn) {
    return mp_obj_is_exact_type(fn, &rw_type_fun_promoted) ||
           mp_obj_is_exact_type(fn, &rw_type_gen_promoted) ||
           mp_obj_is_exact_type(fn, &rw_type_native_promoted);
}

typedef struct {
    size_t n_state, n_exc_stack, scope_flags, n_pos_args, n_kwonly_args, n_def_pos_args;
} rw_sig_t;

static rw_sig_t sig_of(const byte *ip) {
    rw_sig_t s;
    MP_BC_PRELUDE_SIG_DECODE_INTO(ip, s.n_state, s.n_exc_stack, s.scope_flags, s.n_pos_args,
                                  s.n_kwonly_args, s.n_def_pos_args);
    return s;
}

#define RW_SIG_FLAGS                                                               \
    (MP_SCOPE_FLAG_GENERATOR | MP_SCOPE_FLAG_VARKEYWORDS | MP_SCOPE_FLAG_VARARGS | \
     MP_SCOPE_FLAG_DEFKWARGS)

void rw_promote(mp_obj_t fn, mp_obj_t twin) {
    // A bytecode function with a native function twin, or a bytecode generator function
    // with a native generator function twin.
    bool gen = mp_obj_is_exact_type(fn, &mp_type_gen_wrap);
    bool native = mp_obj_is_exact_type(fn, &mp_type_fun_native);
    if (!gen && !native && !mp_obj_is_exact_type(fn, &mp_type_fun_bc)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: promote needs a plain bytecode or native function"));
    }
    if (!mp_obj_is_exact_type(twin, gen ? &mp_type_native_gen_wrap : &mp_type_fun_native)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: the twin must be native code of the same kind"));
    }
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    mp_obj_fun_bc_t *g = MP_OBJ_TO_PTR(twin);
    if (is_promoted(fn)) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw: already promoted"));
    }
    rw_sig_t a = sig_of(native ? mp_obj_fun_native_get_prelude_ptr(f) : f->bytecode);
    rw_sig_t b = sig_of(mp_obj_fun_native_get_prelude_ptr(g));
    if ((a.scope_flags & RW_SIG_FLAGS) != (b.scope_flags & RW_SIG_FLAGS) ||
        a.n_pos_args != b.n_pos_args || a.n_kwonly_args != b.n_kwonly_args ||
        a.n_def_pos_args != b.n_def_pos_args) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw: the twin's signature differs"));
    }
    size_t n_extra = a.n_def_pos_args + ((a.scope_flags & MP_SCOPE_FLAG_DEFKWARGS) ? 1 : 0);
    if (gc_nbytes(g) < sizeof(*g) + n_extra * sizeof(mp_obj_t)) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw: the twin has no room for the defaults"));
    }
    if (rw_promoted_n >= RW_PROMOTE_SLOTS / 2) {
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("_rw: promotion table full"));
    }
    // The twin takes the original's default values (the very objects: a mutable default
    // is shared, as it is between calls) and its globals, whatever namespace it was
    // compiled in.
    memcpy(g->extra_args, f->extra_args, n_extra * sizeof(mp_obj_t));
    ((mp_module_context_t *)g->context)->module.globals = f->context->module.globals;
    table_put(fn, twin);
    f->base.type = gen      ? &rw_type_gen_promoted
                   : native ? &rw_type_native_promoted
                            : &rw_type_fun_promoted;
}

mp_obj_t rw_demote(mp_obj_t fn) {
    if (!is_promoted(fn)) {
        return mp_const_none;
    }
    mp_obj_t twin = twin_of(fn);
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    f->base.type = f->base.type == &rw_type_gen_promoted      ? &mp_type_gen_wrap
                   : f->base.type == &rw_type_native_promoted ? &mp_type_fun_native
                                                              : &mp_type_fun_bc;
    table_remove(fn);
    return twin;
}

// An exception left a resumed native generator whose function is `twin`: if it is a
// promoted generator's twin, report it for that generator function (rw_watch.c). A scan
// of the table, only when an exception leaves a native generator while swaps are watched.
void rw_watch_raise_twin(const mp_obj_base_t *twin, const mp_obj_base_t *exc) {
    const mp_obj_t *t = MP_STATE_VM(rw_promoted);
    for (size_t i = 0; i < RW_PROMOTE_SLOTS; i++) {
        if (t[2 * i] != MP_OBJ_NULL && t[2 * i + 1] == MP_OBJ_FROM_PTR(twin)) {
            rw_watch_raise(MP_OBJ_TO_PTR(t[2 * i]), exc);
            return;
        }
    }
}

mp_obj_t rw_twin(mp_obj_t fn) {
    if (!is_promoted(fn)) {
        return mp_const_none;
    }
    return twin_of(fn);
}

// Soft reset: the heap starts again, forget the table.
void rw_promote_deinit(void) {
    memset(MP_STATE_VM(rw_promoted), 0, sizeof(MP_STATE_VM(rw_promoted)));
    rw_promoted_n = 0;
}
