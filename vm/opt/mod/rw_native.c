// SPDX-License-Identifier: MIT
// Native promotion (issue 7): a hot bytecode function's new calls run a native twin
// compiled by the x64 emitter from the same source. The function object stays where every
// caller holds it and keeps its bytecode, context and child table untouched: only its type
// changes, to one whose call slot runs the twin. Frames and suspended generators already
// running the bytecode read nothing the promotion changes, and undoing it restores the
// type, so the bytes are identical by construction. Also: the native loops' back-edge
// poll (vm/patches/0008), the source texts the optimiser compiles twins from, and where
// each native block landed in the executable arena (for the journal's digest).
#include <string.h>

#include "py/bc.h"
#include "py/gc.h"
#include "py/nativeglue.h"
#include "py/objfun.h"
#include "py/objtype.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

#include "rw_cache.h"
#include "rw_native.h"
#include "rw_watch.h"

// ---- the back-edge poll ---------------------------------------------------------------

// What the bytecode VM does after a jump: the port's loop hook (budget accounting, which
// may request a VM abort), then pending exceptions (Ctrl-C), scheduled callbacks and the
// abort itself.
void mp_native_poll(void) {
    MICROPY_VM_HOOK_LOOP
    mp_handle_pending(true);
}

// A local read before it is bound, or after `del` (vm/patches/0009 checks each load):
// the exception the bytecode VM's LOAD_FAST raises.
void mp_native_unbound_local(void) {
    mp_raise_msg(&mp_type_NameError, MP_ERROR_TEXT("local variable referenced before assignment"));
}

// ---- per-call-site caches of native code ---------------------------------------------

// The native counterparts of the bytecode VM's cached LOAD_GLOBAL/LOAD_ATTR/LOAD_METHOD
// rewrites (vm/rewrite/rw_ops.h, whose comments argue each domain), plus STORE_ATTR. A
// site is the return address of the emitted call, so every call site has its own entry
// without the emitter reserving space (the code is in the W^X arena). Entries are guesses
// checked against the live maps on every use: a stale or colliding entry is a miss, which
// takes the general path and refills.
typedef struct {
    const uint8_t *ip;  // the call site
    const void *map;    // globals: the map the name was found in; methods: the class
    size_t index;       // where in that map
    size_t hash;        // globals found in the builtins: the name's hash (see absent_from),
    const void *gmap;   // the globals map it was last found absent from,
    size_t keys_added;  // and mp_map_keys_added then (py/map.c, vm/patches/0010)
} rw_site_t;
static rw_site_t rw_native_cache[RW_CACHE_SLOTS];

#define RW_SITE() ((const uint8_t *)__builtin_return_address(0))
// The hit paths are small enough to need no saved registers; each miss tail-calls a
// separate slow path, so they stay that way under -Os.
#define RW_SLOW __attribute__((noinline))
#define RW_INLINE static inline __attribute__((always_inline))

RW_INLINE rw_site_t *site_slot(const uint8_t *site) {
    return &rw_native_cache[((uintptr_t)site ^ ((uintptr_t)site >> 8)) & (RW_CACHE_SLOTS - 1)];
}

// The instance's members map when base is an instance of a user class, else NULL.
RW_INLINE mp_map_t *members_of(mp_obj_t base) {
    if (mp_obj_is_obj(base) && mp_obj_is_instance_type(((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type)) {
        return &((mp_obj_instance_t *)MP_OBJ_TO_PTR(base))->members;
    }
    return NULL;
}

// Whether entry i of map m holds key.
RW_INLINE bool holds(const mp_map_t *m, size_t i, mp_obj_t key) {
    return i < m->alloc && m->table[i].key == key;
}

// An instance's own members first (what the bytecode VM's LOAD_ATTR fast path does, and
// what the instance's attr slot would find first anyway), then the general mp_load_attr.
static RW_SLOW mp_obj_t load_attr_slow(mp_obj_t base, qstr attr, const uint8_t *site) {
    mp_map_t *m = members_of(base);
    if (m != NULL) {
        mp_map_elem_t *elem = mp_map_lookup(m, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP);
        if (elem != NULL) {
            rw_site_t *c = site_slot(site);
            c->ip = site;
            c->index = elem - m->table;
            return elem->value;
        }
    }
    return mp_load_attr(base, attr);
}

mp_obj_t mp_native_load_attr(mp_obj_t base, qstr attr) {
    const uint8_t *site = RW_SITE();
    mp_map_t *m = members_of(base);
    if (m == NULL) {
        return mp_load_attr(base, attr);
    }
    rw_site_t *c = site_slot(site);
    if (c->ip == site && holds(m, c->index, MP_OBJ_NEW_QSTR(attr))) {
        return m->table[c->index].value;
    }
    return load_attr_slow(base, attr, site);
}

// What mp_load_global (py/runtime.c) returns: the current globals first, then the
// builtins table unless the builtins override dict holds the name. The builtins table
// is constant, so its cached index never goes stale; a cached builtin is still only
// used while the globals and the override dict lack the name.
extern const mp_obj_dict_t mp_module_builtins_globals;
#define BUILTINS_MAP ((mp_map_t *)&mp_module_builtins_globals.map)

static bool not_overridden(mp_obj_t key) {
    #if MICROPY_CAN_OVERRIDE_BUILTINS
    mp_obj_dict_t *over = MP_STATE_VM(mp_module_builtins_override_dict);
    return over == NULL || mp_map_lookup(&over->map, key, MP_MAP_LOOKUP) == NULL;
    #else
    (void)key;
    return true;
    #endif
}

// Whether key is not in m: the probe mp_map_lookup (py/map.c) makes from the key's hash,
// without finding the hash again; mp_map_lookup itself when m compares keys by more than
// pointer (not all its keys are qstrs) or is ordered.
RW_INLINE bool absent_from(mp_map_t *m, mp_obj_t key, size_t hash) {
    if (!m->all_keys_are_qstrs || m->is_ordered) {
        return mp_map_lookup(m, key, MP_MAP_LOOKUP) == NULL;
    }
    if (m->alloc == 0) {
        return true;
    }
    const mp_map_elem_t *table = m->table;
    size_t alloc = m->alloc;
    size_t start = hash % alloc;
    size_t pos = start;
    do {
        mp_obj_t k = table[pos].key;
        if (k == MP_OBJ_NULL) {
            return true;
        }
        if (k == key) {
            return false;
        }
        pos = pos + 1 == alloc ? 0 : pos + 1;
    } while (pos != start);
    return true;
}

static RW_SLOW mp_obj_t load_global_slow(qstr qst, const uint8_t *site) {
    mp_obj_t key = MP_OBJ_NEW_QSTR(qst);
    mp_map_t *gmap = &mp_globals_get()->map;
    rw_site_t *c = site_slot(site);
    if (c->ip == site && c->map == BUILTINS_MAP && holds(BUILTINS_MAP, c->index, key)
        && not_overridden(key) && absent_from(gmap, key, c->hash)) {
        c->gmap = gmap;
        c->keys_added = mp_map_keys_added;
        return BUILTINS_MAP->table[c->index].value;
    }
    mp_map_elem_t *e = mp_map_lookup(gmap, key, MP_MAP_LOOKUP);
    mp_map_t *in = gmap;
    if (e == NULL && not_overridden(key)) {
        e = mp_map_lookup(BUILTINS_MAP, key, MP_MAP_LOOKUP);
        in = BUILTINS_MAP;
    }
    if (e != NULL) {
        c->ip = site;
        c->map = in;
        c->index = e - in->table;
        c->hash = qstr_hash(qst);
        c->gmap = gmap;
        c->keys_added = mp_map_keys_added;
        return e->value;
    }
    // An overridden builtin or an undefined name (NameError).
    return mp_load_global(qst);
}

mp_obj_t mp_native_load_global(qstr qst) {
    const uint8_t *site = RW_SITE();
    mp_map_t *gmap = &mp_globals_get()->map;
    rw_site_t *c = site_slot(site);
    if (c->ip == site) {
        mp_obj_t key = MP_OBJ_NEW_QSTR(qst);
        if (c->map == gmap && holds(gmap, c->index, key)) {
            return gmap->table[c->index].value;
        }
        #if MICROPY_CAN_OVERRIDE_BUILTINS
        bool over = MP_STATE_VM(mp_module_builtins_override_dict) != NULL;
        #else
        bool over = false;
        #endif
        // A builtin: absent from these globals when last probed, and no map has gained
        // a key since, so still absent (else load_global_slow probes again).
        if (c->map == BUILTINS_MAP && !over && c->gmap == gmap
            && c->keys_added == mp_map_keys_added && holds(BUILTINS_MAP, c->index, key)) {
            return BUILTINS_MAP->table[c->index].value;
        }
    }
    return load_global_slow(qst, site);
}

// A function that binds self the way a plain bytecode function does, with no __get__:
// the only values the method cache hands out.
RW_INLINE bool plain_method(mp_obj_t v) {
    return mp_obj_is_exact_type(v, &mp_type_fun_bc) || mp_obj_is_exact_type(v, &rw_type_fun_promoted);
}

// Names mp_load_method answers before it reaches the class's locals dict.
RW_INLINE bool method_name_ok(qstr attr) {
    return attr != MP_QSTR___class__ && attr != MP_QSTR___next__ && attr != MP_QSTR___dict__;
}

// obj.name(...) where obj is an instance of the site's cached user class T, name is not
// one of obj's own members and T's own locals dict holds a plain function under it at the
// cached index: mp_load_method gives (function, obj) on exactly that domain (the argument
// is at LOCIOS_BC_LOAD_METHOD_C in vm/rewrite/rw_ops.h). __class__, __next__ and
// __dict__ are answered before the class dict, so they never take the fast path.
static RW_SLOW void load_method_slow(mp_obj_t base, qstr attr, mp_obj_t *dest, const uint8_t *site) {
    if (members_of(base) != NULL && method_name_ok(attr)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type;
        if (MP_OBJ_TYPE_HAS_SLOT(t, locals_dict)) {
            mp_map_t *lm = &MP_OBJ_TYPE_GET_SLOT(t, locals_dict)->map;
            mp_map_elem_t *e = mp_map_lookup(lm, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP);
            if (e != NULL && plain_method(e->value)) {
                rw_site_t *c = site_slot(site);
                c->ip = site;
                c->map = t;
                c->index = e - lm->table;
            }
        }
    }
    mp_load_method(base, attr, dest);
}

// An instance's method: the cached guess, checked, else the slow path.
static RW_SLOW void load_instance_method(mp_obj_t base, qstr attr, mp_obj_t *dest, const uint8_t *site) {
    if (method_name_ok(attr)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type;
        rw_site_t *c = site_slot(site);
        if (c->ip == site && c->map == t && MP_OBJ_TYPE_HAS_SLOT(t, locals_dict)) {
            mp_map_t *lm = &MP_OBJ_TYPE_GET_SLOT(t, locals_dict)->map;
            mp_obj_t key = MP_OBJ_NEW_QSTR(attr);
            if (holds(lm, c->index, key) && plain_method(lm->table[c->index].value)
                && mp_map_lookup(members_of(base), key, MP_MAP_LOOKUP) == NULL) {
                dest[0] = lm->table[c->index].value;
                dest[1] = base;
                return;
            }
        }
    }
    load_method_slow(base, attr, dest, site);
}

// Methods of everything but instances of user classes (str.split, dict.get, ...) go
// straight to mp_load_method: no cache to consult, and nothing to pay for it.
void mp_native_load_method(mp_obj_t base, qstr attr, mp_obj_t *dest) {
    if (members_of(base) == NULL) {
        mp_load_method(base, attr, dest);
        return;
    }
    load_instance_method(base, attr, dest, RW_SITE());
}

// obj.name = value where obj is an instance of a user class without special accessors
// (no property, descriptor or __setattr__ anywhere in its classes: the type flag
// mp_obj_instance_store_attr tests first): the store goes straight to obj's members, at
// the cached index when the name is there.
RW_INLINE mp_map_t *plain_members_of(mp_obj_t base) {
    mp_map_t *m = members_of(base);
    if (m != NULL && !(((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type->flags & MP_TYPE_FLAG_HAS_SPECIAL_ACCESSORS)) {
        return m;
    }
    return NULL;
}

static RW_SLOW void store_attr_slow(mp_obj_t base, qstr attr, mp_obj_t value, const uint8_t *site) {
    mp_map_t *m = plain_members_of(base);
    if (m != NULL) {
        mp_map_elem_t *e = mp_map_lookup(m, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP_ADD_IF_NOT_FOUND);
        e->value = value;
        rw_site_t *c = site_slot(site);
        c->ip = site;
        c->index = e - m->table;
        return;
    }
    mp_store_attr(base, attr, value);
}

void mp_native_store_attr(mp_obj_t base, qstr attr, mp_obj_t value) {
    const uint8_t *site = RW_SITE();
    mp_map_t *m = plain_members_of(base);
    if (m == NULL) {
        mp_store_attr(base, attr, value);
        return;
    }
    rw_site_t *c = site_slot(site);
    if (c->ip == site && holds(m, c->index, MP_OBJ_NEW_QSTR(attr))) {
        m->table[c->index].value = value;
        return;
    }
    store_attr_slow(base, attr, value, site);
}

// ---- source texts ---------------------------------------------------------------------

// The newest RW_SRC_KEEP texts given to the lexer as strings (the REPL, exec, compile)
// that define a function, as (name, bytes) tuples; slot rw_src_next is the next to go.
#define RW_SRC_KEEP (8)
#define RW_SRC_MAX (256 * 1024)
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_src_ring[8]);
static size_t rw_src_next;

static bool defines_a_function(const char *s, size_t len) {
    for (size_t i = 0; i + 4 <= len; i++) {
        if (s[i] == 'd' && s[i + 1] == 'e' && s[i + 2] == 'f' && (s[i + 3] == ' ' || s[i + 3] == '\t')) {
            return true;
        }
    }
    return false;
}

void rw_src_keep(size_t name, const char *str, size_t len) {
    // "<twin>" is the optimiser compiling a twin: keeping that would push out the
    // sources it came from.
    if (strcmp(qstr_str(name), "<twin>") == 0 || len > RW_SRC_MAX
        || !defines_a_function(str, len)) {
        return;
    }
    #if defined(LOCIOS_BUDGET_HOOKS) && LOCIOS_BUDGET_HOOKS
    // Code compiled inside a budgeted call (a Locus's step) is never optimised: its
    // allocation budget must not pay for a copy.
    if (budget_armed) {
        return;
    }
    #endif
    // Keeping a copy is optional: a full heap (or an allocation budget) must fail the
    // copy, never the compile that asked for it.
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t item[2] = { MP_OBJ_NEW_QSTR(name), mp_obj_new_bytes((const byte *)str, len) };
        MP_STATE_VM(rw_src_ring)[rw_src_next] = mp_obj_new_tuple(2, item);
        rw_src_next = (rw_src_next + 1) % RW_SRC_KEEP;
        nlr_pop();
    }
}

mp_obj_t rw_src_list(void) {
    mp_obj_t out = mp_obj_new_list(0, NULL);
    for (size_t i = 1; i <= RW_SRC_KEEP; i++) {
        mp_obj_t t = MP_STATE_VM(rw_src_ring)[(rw_src_next + RW_SRC_KEEP - i) % RW_SRC_KEEP];
        if (t != MP_OBJ_NULL) {
            mp_obj_list_append(out, t);
        }
    }
    return out;
}

// ---- where native code went -------------------------------------------------------------

#define RW_EXEC_KEEP (64)
static struct { const void *at; size_t len; } rw_exec[RW_EXEC_KEEP];
static size_t rw_exec_next;

void rw_exec_note(const void *at, size_t len) {
    rw_exec[rw_exec_next].at = at;
    rw_exec[rw_exec_next].len = len;
    rw_exec_next = (rw_exec_next + 1) % RW_EXEC_KEEP;
}

// The machine code of a native function (its whole committed block), or NULL.
const void *rw_exec_block(const void *start, size_t *len) {
    for (size_t i = 0; i < RW_EXEC_KEEP; i++) {
        if (rw_exec[i].at == start && rw_exec[i].len) {
            *len = rw_exec[i].len;
            return start;
        }
    }
    return NULL;
}

// ---- promotion --------------------------------------------------------------------------

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

static mp_obj_t promoted_call(mp_obj_t self_in, size_t n_args, size_t n_kw, const mp_obj_t *args) {
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
    rw_watch_raise(self_in, MP_OBJ_FROM_PTR(nlr.ret_val));
    nlr_jump(nlr.ret_val);
}

static void promoted_print(const mp_print_t *print, mp_obj_t o_in, mp_print_kind_t kind) {
    (void)kind;
    mp_printf(print, "<function %q at 0x%p>", mp_obj_fun_get_name(o_in), MP_OBJ_TO_PTR(o_in));
}

// Named 'function' so that classes bind it as a method (mp_obj_is_fun checks the name),
// with the bytecode function's attributes (__name__, __globals__ read the unchanged
// bytecode and context).
MP_DEFINE_CONST_OBJ_TYPE(
    rw_type_fun_promoted,
    MP_QSTR_function,
    MP_TYPE_FLAG_BINDS_SELF,
    print, promoted_print,
    attr, mp_obj_fun_bc_attr,
    call, promoted_call
    );

// A generator function's twin is a native generator function: calling it makes a native
// generator instance.
static mp_obj_t promoted_gen_call(mp_obj_t self_in, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_obj_t twin = twin_of(self_in);
    return MP_OBJ_TYPE_GET_SLOT(&mp_type_native_gen_wrap, call)(twin, n_args, n_kw, args);
}

MP_DEFINE_CONST_OBJ_TYPE(
    rw_type_gen_promoted,
    MP_QSTR_generator,
    MP_TYPE_FLAG_BINDS_SELF,
    attr, mp_obj_fun_bc_attr,
    call, promoted_gen_call
    );

static bool is_promoted(mp_obj_t fn) {
    return mp_obj_is_exact_type(fn, &rw_type_fun_promoted)
           || mp_obj_is_exact_type(fn, &rw_type_gen_promoted);
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

#define RW_SIG_FLAGS (MP_SCOPE_FLAG_GENERATOR | MP_SCOPE_FLAG_VARKEYWORDS | \
    MP_SCOPE_FLAG_VARARGS | MP_SCOPE_FLAG_DEFKWARGS)

void rw_promote(mp_obj_t fn, mp_obj_t twin) {
    // A bytecode function with a native function twin, or a bytecode generator function
    // with a native generator function twin.
    bool gen = mp_obj_is_exact_type(fn, &mp_type_gen_wrap);
    if (!gen && !mp_obj_is_exact_type(fn, &mp_type_fun_bc)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: promote needs a plain bytecode function"));
    }
    if (!mp_obj_is_exact_type(twin, gen ? &mp_type_native_gen_wrap : &mp_type_fun_native)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: the twin must be native code of the same kind"));
    }
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    mp_obj_fun_bc_t *g = MP_OBJ_TO_PTR(twin);
    if (is_promoted(fn)) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw: already promoted"));
    }
    rw_sig_t a = sig_of(f->bytecode);
    rw_sig_t b = sig_of(mp_obj_fun_native_get_prelude_ptr(g));
    if ((a.scope_flags & RW_SIG_FLAGS) != (b.scope_flags & RW_SIG_FLAGS)
        || a.n_pos_args != b.n_pos_args || a.n_kwonly_args != b.n_kwonly_args
        || a.n_def_pos_args != b.n_def_pos_args) {
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
    f->base.type = gen ? &rw_type_gen_promoted : &rw_type_fun_promoted;
}

mp_obj_t rw_demote(mp_obj_t fn) {
    if (!is_promoted(fn)) {
        return mp_const_none;
    }
    mp_obj_t twin = twin_of(fn);
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    f->base.type = f->base.type == &rw_type_gen_promoted ? &mp_type_gen_wrap : &mp_type_fun_bc;
    table_remove(fn);
    return twin;
}

mp_obj_t rw_twin(mp_obj_t fn) {
    if (!is_promoted(fn)) {
        return mp_const_none;
    }
    return twin_of(fn);
}

// Soft reset: the heap and the executable arena start again, forget both tables.
void rw_native_deinit(void) {
    memset(MP_STATE_VM(rw_src_ring), 0, sizeof(MP_STATE_VM(rw_src_ring)));
    memset(MP_STATE_VM(rw_promoted), 0, sizeof(MP_STATE_VM(rw_promoted)));
    memset(rw_exec, 0, sizeof(rw_exec));
    rw_src_next = rw_exec_next = rw_promoted_n = 0;
}
