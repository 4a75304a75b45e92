// SPDX-License-Identifier: MIT
// `vm`: the bytecode verifier for Python code in the image. vm.verify(fn, profile)
// proves a function (or a compiled code object) and, recursively, the children it
// makes; vm.check returns the rejection message instead of raising; vm.names lists the
// global names code uses; vm.check_replacement (and vm_check_rewrite from C) vets
// rewritten bytecode, the only path that accepts the rewriter's opcodes.
#include <string.h>

#include "py/bc.h"
#include "py/bc0.h"
#include "py/builtin.h"
#include "py/emitglue.h"
#include "py/gc.h"
#include "py/mpstate.h"
#include "py/objcode.h"
#include "py/objfun.h"
#include "py/objlist.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "verify.h"
#include "vm_check.h"
#include "vm_describe.h"

// Layouts private to py/objclosure.c and py/objboundmeth.c, restated (1.25.0).
typedef struct {
    mp_obj_base_t base;
    mp_obj_t fun;
    size_t n_closed;
    mp_obj_t closed[];
} vm_closure_t;
typedef struct {
    mp_obj_base_t base;
    mp_obj_t meth;
    mp_obj_t self;
} vm_bound_meth_t;
extern const mp_obj_type_t mp_type_closure;

// Code objects (compile(src, name, 'exec')) come in two layouts (py/objcode.h): BASIC
// holds the module's constants and proto-fun, MINIMUM a module function.
#if MICROPY_PY_BUILTINS_CODE != MICROPY_PY_BUILTINS_CODE_BASIC && \
    MICROPY_PY_BUILTINS_CODE != MICROPY_PY_BUILTINS_CODE_MINIMUM
#error "vm: code objects are read in the MINIMUM or BASIC layout only"
#endif

static void set_msg(vrf_result_t *res, int rule, const char *msg) {
    res->rule = rule;
    size_t n = strlen(msg);
    n = n < sizeof(res->msg) - 1 ? n : sizeof(res->msg) - 1;
    memcpy(res->msg, msg, n);
    res->msg[n] = 0;
}

enum {
    NAMES_LOADED,
    NAMES_STORED,
    NAMES_DELETED,
    NAMES_N
};

typedef struct {
    const vrf_profile_t *prof;
    vrf_result_t res;
    uint32_t functions;
    uint32_t bytes;  // decoded, over all functions
    uint32_t insns;
    mp_obj_t names[NAMES_N];  // sets of global names, for vm.names; NULL: not wanted
    mp_obj_t derefs;          // a list for the root's cell accesses (vm.derefs), or NULL
} walk_t;

// After fn verified: adds the global names its instructions use to w->names.
static void collect_names(walk_t *w, const vrf_fn_t *fn) {
    uint32_t off = 0, q;
    int op;
    while (vrf_next_qstr(fn, &w->res, &off, &op, &q)) {
        size_t which;
        switch (op) {
            case MP_BC_LOAD_NAME:
            case MP_BC_LOAD_GLOBAL:
                which = NAMES_LOADED;
                break;
            case MP_BC_STORE_NAME:
            case MP_BC_STORE_GLOBAL:
                which = NAMES_STORED;
                break;
            case MP_BC_DELETE_NAME:
            case MP_BC_DELETE_GLOBAL:
                which = NAMES_DELETED;
                break;
            default:
                continue;
        }
        qstr qs = vm_qstr_id(fn->ctx, q);
        if (qs == MP_QSTRnull) {
            // Verified code names only valid qstrs; frozen tables are trusted.
            mp_raise_ValueError(MP_ERROR_TEXT("verify: name operand is not a qstr"));
        }
        mp_obj_set_store(w->names[which], MP_OBJ_NEW_QSTR(qs));
    }
}

// Verifies fn and every child it makes, depth first. Returns 0 or a rule number.
static int walk(walk_t *w, vrf_fn_t *fn, mp_raw_code_t *const *children, uint32_t depth) {
    if (depth > VRF_MAX_NESTING) {
        set_msg(&w->res, VRF_RULE_LIMIT,
                "verify: offset 0x0 children nested too deeply (rule 8: limit)");
        return VRF_RULE_LIMIT;
    }
    int r = vrf_verify_fn(fn, w->prof, &w->res);
    if (r) {
        return r;
    }
    w->functions++;
    w->bytes += w->res.n_bytes;
    w->insns += w->res.n_insns;
    if (w->names[0] != MP_OBJ_NULL) {
        collect_names(w, fn);  // before a child's verification reuses the tables
    }
    if (w->derefs != MP_OBJ_NULL && depth == 0) {
        uint32_t off = 0, local;
        int op;
        while (vrf_next_deref(fn, &w->res, &off, &op, &local)) {
            mp_obj_t t[2] = { MP_OBJ_NEW_SMALL_INT(op), MP_OBJ_NEW_SMALL_INT(local) };
            mp_obj_list_append(w->derefs, mp_obj_new_tuple(2, t));
        }
        return 0;  // the root's own accesses only
    }
    uint32_t n = fn->n_children == VM_UNSIZED ? 0 : fn->n_children;
    vrf_child_t how;
    if (fn->n_children == VM_UNSIZED) {
        // Frozen: the children used are those the verifier saw made.
        for (uint32_t i = 0; i < VRF_MAX_CHILDREN; i++) {
            if (vrf_child(i, &how) != -1) {
                n = i + 1;
            }
        }
    }
    if (n == 0) {
        return 0;
    }
    // The verifier's tables are reused by each child: keep this level's answers.
    vrf_child_t *made = m_new(vrf_child_t, n);
    int8_t *status = m_new(int8_t, n);
    for (uint32_t i = 0; i < n; i++) {
        status[i] = (int8_t)vrf_child(i, &made[i]);
    }
    const mp_module_constants_t *k = fn->ctx;
    for (uint32_t i = 0; i < n && r == 0; i++) {
        if (status[i] == -1) {
            continue;  // never made here: it cannot run
        }
        // A child is an mp_raw_code_t, or (frozen code without children of its own)
        // a direct pointer to its bytecode: mp_proto_fun_is_bytecode tells them apart.
        const mp_raw_code_t *rc = children[i];
        const byte *code = NULL;
        mp_raw_code_t *const *grandchildren = NULL;
        if (mp_proto_fun_is_bytecode(rc)) {
            code = (const byte *)rc;
        } else if (rc->kind == MP_CODE_BYTECODE) {
            code = rc->fun_data;
            grandchildren = rc->children;
        }
        if (status[i] < 0 || code == NULL) {
            int bad = status[i] < 0 ? VRF_RULE_STACK : VRF_RULE_DECODE;
            set_msg(&w->res, bad,
                    status[i] < 0
                        ? "verify: offset 0x0 child made in two different ways (rule 4: stack)"
                        : "verify: offset 0x0 child is not bytecode (rule 1: decode)");
            r = bad;
            break;
        }
        vrf_fn_t child;
        vm_describe(&child, code, 0, k, grandchildren, &made[i]);
        r = walk(w, &child, grandchildren, depth + 1);
    }
    m_del(vrf_child_t, made, n);
    m_del(int8_t, status, n);
    return r;
}

// What the verifier is given: a function's bytecode (closures and bound methods
// unwrapped) or a code object's module-level bytecode, with its constants and children.
typedef struct {
    const byte *bytecode;
    const mp_module_constants_t *constants;
    mp_raw_code_t *const *children;
    uint32_t n_free;
} target_t;

// The cells a closure passes to bytecode function f ahead of its arguments, for f given
// without its closure (the optimiser works on the function the profiler saw; a colony's
// env callback is one). The compiler passes a closure's free variables first and names
// them '*', which no parameter can be; a comprehension's iterator, its last argument, is
// named '*' too.
static uint32_t free_of(const mp_obj_fun_bc_t *f) {
    const byte *ip = f->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    (void)n_state, (void)n_exc_stack, (void)scope_flags, (void)n_def_pos_args;
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    (void)n_info, (void)n_cell;
    const byte *names = ip;
    qstr name = (qstr)mp_decode_uint(&names);
#if MICROPY_EMIT_BYTECODE_USES_QSTR_TABLE
    name = f->context->constants.qstr_table[name];
#endif
    uint32_t n = 0;
    for (; n < n_pos_args + n_kwonly_args; n++) {
        qstr q = (qstr)mp_decode_uint(&names);
#if MICROPY_EMIT_BYTECODE_USES_QSTR_TABLE
        q = f->context->constants.qstr_table[q];
#endif
        if (q != MP_QSTR__star_) {
            break;
        }
    }
    bool comprehension = name == MP_QSTR__lt_listcomp_gt_ || name == MP_QSTR__lt_dictcomp_gt_ ||
                         name == MP_QSTR__lt_setcomp_gt_ || name == MP_QSTR__lt_genexpr_gt_;
    return comprehension && n > 0 && n == n_pos_args ? n - 1 : n;
}

static void get_target(mp_obj_t fn, target_t *t) {
    t->n_free = 0;
#if MICROPY_PY_BUILTINS_CODE == MICROPY_PY_BUILTINS_CODE_MINIMUM
    if (mp_obj_is_type(fn, &mp_type_code)) {
        fn = ((mp_obj_code_t *)MP_OBJ_TO_PTR(fn))->module_fun;
    }
#else
    if (mp_obj_is_type(fn, &mp_type_code)) {
        mp_obj_code_t *co = MP_OBJ_TO_PTR(fn);
        const mp_raw_code_t *rc = mp_code_get_proto_fun(co);
        t->constants = mp_code_get_constants(co);
        // As in walk(): a bare bytecode pointer (frozen, no children) or a raw code.
        if (mp_proto_fun_is_bytecode(rc)) {
            t->bytecode = (const byte *)rc;
            t->children = NULL;
        } else if (rc->kind == MP_CODE_BYTECODE) {
            t->bytecode = rc->fun_data;
            t->children = rc->children;
        } else {
            mp_raise_TypeError(MP_ERROR_TEXT("code object is not bytecode"));
        }
        return;
    }
#endif
    if (mp_obj_is_type(fn, &mp_type_bound_meth)) {
        fn = ((vm_bound_meth_t *)MP_OBJ_TO_PTR(fn))->meth;
    }
    if (mp_obj_is_type(fn, &mp_type_closure)) {
        vm_closure_t *cl = MP_OBJ_TO_PTR(fn);
        t->n_free = (uint32_t)cl->n_closed;
        fn = cl->fun;
    }
    if (!mp_obj_is_type(fn, &mp_type_fun_bc) && !mp_obj_is_type(fn, &mp_type_gen_wrap)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a bytecode function or code object"));
    }
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    if (t->n_free == 0) {
        t->n_free = free_of(f);
    }
    t->bytecode = f->bytecode;
    t->constants = &f->context->constants;
    t->children = f->child_table;
}

static const vrf_profile_t *get_profile(size_t n_args, const mp_obj_t *args, size_t i) {
    const char *name = n_args > i ? mp_obj_str_get_str(args[i]) : "locus";
    const vrf_profile_t *p = vrf_profile_find(name);
    if (p == NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("unknown profile"));
    }
    return p;
}

// The verifier's tables are static and a walk reads them between allocations, which
// may collect garbage and run finalisers, that is bytecode: a finaliser that verified
// (vm.verify, or the rewriter's first-call check through vm_check_rewrite) would clobber
// the walk's tables. Set while run() works; nested verification is refused.
static uint8_t vm_busy;

static mp_obj_t run_unguarded(size_t n_args, const mp_obj_t *args, mp_obj_t code, int replace,
                              int stats, const mp_obj_t *names, mp_obj_t derefs);

// Verifies fn (or, with code, that bytecode in fn's place); the message or None.
// names: NAMES_N sets to fill with the global names used (vm.names), or NULL; derefs: a
// list to fill with the root function's cell accesses (vm.derefs), or MP_OBJ_NULL.
static mp_obj_t run(size_t n_args, const mp_obj_t *args, mp_obj_t code, int replace, int stats,
                    const mp_obj_t *names, mp_obj_t derefs) {
    if (vm_busy) {
        mp_raise_msg(&mp_type_RuntimeError,
                     MP_ERROR_TEXT("verify: verifier in use (called from a finaliser)"));
    }
    nlr_buf_t nlr;
    vm_busy = 1;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t out = run_unguarded(n_args, args, code, replace, stats, names, derefs);
        nlr_pop();
        vm_busy = 0;
        return out;
    }
    vm_busy = 0;
    nlr_jump(nlr.ret_val);
}

static mp_obj_t run_unguarded(size_t n_args, const mp_obj_t *args, mp_obj_t code, int replace,
                              int stats, const mp_obj_t *names, mp_obj_t derefs) {
    target_t tg;
    get_target(args[0], &tg);
    // A root: its defaults were fixed when it was made (by a verified parent, or frozen).
    vrf_child_t root = { (int16_t)tg.n_free, -1, -1, 0 };
    walk_t *w = m_new_obj(walk_t);
    w->prof = get_profile(n_args, args, 1);
    w->functions = w->bytes = w->insns = 0;
    for (size_t i = 0; i < NAMES_N; i++) {
        w->names[i] = names ? names[i] : MP_OBJ_NULL;
    }
    w->derefs = derefs;
    vrf_fn_t fn;
    int r;
    if (code == mp_const_none) {
        vm_describe(&fn, tg.bytecode, 0, tg.constants, tg.children, &root);
        r = walk(w, &fn, tg.children, 0);
    } else {
        mp_buffer_info_t buf;
        mp_get_buffer_raise(code, &buf, MP_BUFFER_READ);
        vm_describe(&fn, buf.buf, buf.len, tg.constants, tg.children, &root);
        if (replace) {
            vrf_fn_t orig;
            vm_describe(&orig, tg.bytecode, 0, tg.constants, tg.children, &root);
            r = vrf_verify_replacement(&fn, &orig, w->prof, &w->res);
        } else {
            r = walk(w, &fn, tg.children, 0);
        }
    }
    mp_obj_t out;
    if (r) {
        out = mp_obj_new_str(w->res.msg, strlen(w->res.msg));
    } else if (stats) {
        mp_obj_t t[3] = { MP_OBJ_NEW_SMALL_INT(w->functions), MP_OBJ_NEW_SMALL_INT(w->bytes),
                          MP_OBJ_NEW_SMALL_INT(w->insns) };
        out = mp_obj_new_tuple(3, t);
    } else {
        out = MP_OBJ_NEW_SMALL_INT(w->functions ? w->functions : 1);
    }
    m_del_obj(walk_t, w);
    return out;
}

int vm_check_rewrite(mp_obj_t fun, uint32_t n_free, const uint8_t *code, size_t len,
                     const char *profile, char *msg, size_t cap) {
    vrf_result_t res;
    int r;
    const vrf_profile_t *prof = vrf_profile_find(profile);
    target_t tg;
    if (vm_busy || prof == NULL) {
        memset(&res, 0, sizeof(res));
        r = VRF_RULE_LIMIT;
        set_msg(&res, r,
                prof ? "verify: offset 0x0 verifier in use (rule 8: limit)"
                     : "verify: offset 0x0 unknown profile (rule 7: profile)");
        r = prof ? r : VRF_RULE_PROFILE;
    } else {
        get_target(fun, &tg);  // raises TypeError for what is not bytecode: as vm.check
        vrf_child_t root = { (int16_t)(tg.n_free ? tg.n_free : n_free), -1, -1, 0 };
        vrf_fn_t fn, orig;
        vm_describe(&fn, code, len, tg.constants, tg.children, &root);
        vm_describe(&orig, tg.bytecode, 0, tg.constants, tg.children, &root);
        vm_busy = 1;  // nothing below allocates or raises
        r = vrf_verify_replacement(&fn, &orig, prof, &res);
        vm_busy = 0;
    }
    if (msg && cap) {
        size_t n = r ? strlen(res.msg) : 0;
        n = n < cap - 1 ? n : cap - 1;
        memcpy(msg, res.msg, n);
        msg[n] = 0;
    }
    return r;
}

// vm.verify(fn, profile="locus") -> number of functions proved; raises ValueError.
static mp_obj_t vm_verify(size_t n_args, const mp_obj_t *args) {
    mp_obj_t r = run(n_args, args, mp_const_none, 0, 0, NULL, MP_OBJ_NULL);
    if (!mp_obj_is_small_int(r)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s"), mp_obj_str_get_str(r));
    }
    return r;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(vm_verify_obj, 1, 2, vm_verify);

// vm.check(fn, profile="locus", code=None) -> None, or the rejection message.
static mp_obj_t vm_check(size_t n_args, const mp_obj_t *args) {
    mp_obj_t r = run(n_args, args, n_args > 2 ? args[2] : mp_const_none, 0, 0, NULL, MP_OBJ_NULL);
    return mp_obj_is_small_int(r) ? mp_const_none : r;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(vm_check_obj, 1, 3, vm_check);

// vm.check_replacement(fn, code, profile="locus") -> None, or the rejection message.
static mp_obj_t vm_check_replacement(size_t n_args, const mp_obj_t *args) {
    mp_obj_t a[2] = { args[0], n_args > 2 ? args[2] : MP_OBJ_NEW_QSTR(MP_QSTR_locus) };
    mp_obj_t r = run(2, a, args[1], 1, 0, NULL, MP_OBJ_NULL);
    return mp_obj_is_small_int(r) ? mp_const_none : r;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(vm_check_replacement_obj, 2, 3, vm_check_replacement);

// vm.stats(fn, profile="locus") -> (functions, bytes, instructions) verified, or the
// rejection message: what a benchmark divides its time by.
static mp_obj_t vm_stats(size_t n_args, const mp_obj_t *args) {
    return run(n_args, args, mp_const_none, 0, 1, NULL, MP_OBJ_NULL);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(vm_stats_obj, 1, 2, vm_stats);

// vm.names(fn_or_code) -> (loaded, stored, deleted): sorted tuples of the global names
// (LOAD/STORE/DELETE_NAME and _GLOBAL) of the code and all its children, once it
// verifies structurally ('trusted'); else ValueError with the verifier's message.
static mp_obj_t vm_names(mp_obj_t fn_in) {
    mp_obj_t sets[NAMES_N];
    for (size_t i = 0; i < NAMES_N; i++) {
        sets[i] = mp_obj_new_set(0, NULL);
    }
    mp_obj_t a[2] = { fn_in, MP_OBJ_NEW_QSTR(MP_QSTR_trusted) };
    mp_obj_t r = run(2, a, mp_const_none, 0, 0, sets, MP_OBJ_NULL);
    if (!mp_obj_is_small_int(r)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s"), mp_obj_str_get_str(r));
    }
    mp_obj_t out[NAMES_N];
    for (size_t i = 0; i < NAMES_N; i++) {
        mp_obj_t sorted = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_builtin_sorted_obj), sets[i]);
        size_t len;
        mp_obj_t *items;
        mp_obj_list_get(sorted, &len, &items);
        out[i] = mp_obj_new_tuple(len, items);
    }
    return mp_obj_new_tuple(NAMES_N, out);
}
static MP_DEFINE_CONST_FUN_OBJ_1(vm_names_obj, vm_names);

// vm.bytecode(fn_or_code) -> bytes of heap bytecode, or None for frozen code.
static mp_obj_t vm_bytecode(mp_obj_t fn_in) {
    target_t t;
    get_target(fn_in, &t);
    size_t n = vm_heap_bytes(t.bytecode);
    return n ? mp_obj_new_bytes(t.bytecode, n) : mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(vm_bytecode_obj, vm_bytecode);

// vm.derefs(fn) -> (n_free, ((opcode, local), ...)): the cells fn's closure passes it, and
// fn's own cell accesses (LOAD_DEREF, STORE_DEREF, DELETE_DEREF) in code order, among the
// instructions verified reachable; ValueError when fn does not verify. Two compilations of one def read the same cells in the same order
// exactly when their free variables are in the same order (opt's native twin of a
// closure, vm/opt/_source.py).
static mp_obj_t vm_derefs(mp_obj_t fn_in) {
    mp_obj_t out = mp_obj_new_list(0, NULL);
    mp_obj_t a[2] = { fn_in, MP_OBJ_NEW_QSTR(MP_QSTR_trusted) };
    mp_obj_t r = run(2, a, mp_const_none, 0, 0, NULL, out);
    if (!mp_obj_is_small_int(r)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s"), mp_obj_str_get_str(r));
    }
    size_t len;
    mp_obj_t *items;
    mp_obj_list_get(out, &len, &items);
    target_t tg;
    get_target(fn_in, &tg);
    mp_obj_t pair[2] = { MP_OBJ_NEW_SMALL_INT(tg.n_free), mp_obj_new_tuple(len, items) };
    return mp_obj_new_tuple(2, pair);
}
static MP_DEFINE_CONST_FUN_OBJ_1(vm_derefs_obj, vm_derefs);

static const mp_rom_map_elem_t vm_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_vm) },
    { MP_ROM_QSTR(MP_QSTR_verify), MP_ROM_PTR(&vm_verify_obj) },
    { MP_ROM_QSTR(MP_QSTR_check), MP_ROM_PTR(&vm_check_obj) },
    { MP_ROM_QSTR(MP_QSTR_check_replacement), MP_ROM_PTR(&vm_check_replacement_obj) },
    { MP_ROM_QSTR(MP_QSTR_derefs), MP_ROM_PTR(&vm_derefs_obj) },
    { MP_ROM_QSTR(MP_QSTR_bytecode), MP_ROM_PTR(&vm_bytecode_obj) },
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&vm_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_names), MP_ROM_PTR(&vm_names_obj) },
    { MP_ROM_QSTR(MP_QSTR_MAX_CODE), MP_ROM_INT(VRF_MAX_CODE) },
};
static MP_DEFINE_CONST_DICT(vm_globals, vm_globals_table);

const mp_obj_module_t vm_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&vm_globals,
};

MP_REGISTER_MODULE(MP_QSTR_vm, vm_user_cmodule);
