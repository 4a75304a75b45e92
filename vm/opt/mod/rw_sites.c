// SPDX-License-Identifier: MIT
// Per-call-site caches of native code (vm/patches/0009 and 0026 call them through
// mp_fun_table): global loads, attribute loads and stores, method loads and a dict's
// subscript by a string literal, each keeping a guess per call site that is checked
// against the live maps on every use.
#include "py/nativeglue.h"
#include "py/obj.h"
#include "py/objtype.h"
#include "py/runtime.h"

#include "rw_cache.h"
#include "rw_promote.h"

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
#define RW_SLOW   __attribute__((noinline))
#define RW_INLINE static inline __attribute__((always_inline))

RW_INLINE rw_site_t *site_slot(const uint8_t *site) {
    return &rw_native_cache[((uintptr_t)site ^ ((uintptr_t)site >> 8)) & (RW_CACHE_SLOTS - 1)];
}

// The instance's members map when base is an instance of a user class, else NULL.
RW_INLINE mp_map_t *members_of(mp_obj_t base) {
    if (mp_obj_is_obj(base) &&
        mp_obj_is_instance_type(((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type)) {
        return &((mp_obj_instance_t *)MP_OBJ_TO_PTR(base))->members;
    }
    return NULL;
}

// A float site's attribute leaf (vm/patches/0029): base.attr where base is an instance
// whose members hold attr, what the bytecode VM's LOAD_ATTR finds first with no other
// effect; else NULL (an unbound local's NULL included), and the site's guard fails.
mp_obj_t mp_native_float_member(mp_obj_t base, qstr attr) {
    mp_map_t *m = base != MP_OBJ_NULL ? members_of(base) : NULL;
    mp_map_elem_t *e = m != NULL ? mp_map_lookup(m, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP) : NULL;
    return e != NULL ? e->value : MP_OBJ_NULL;
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

// A subscript load (vm/patches/0026): an exact dict indexed by a qstr, a string literal
// such as t["owner"], hits where this site last found that key. Dicts built alike (from
// one literal, in one order) keep a key at one index, so one entry serves them all. A
// key is in a dict's table at most once: holding the key there is finding it (deleted
// entries hold MP_OBJ_SENTINEL, never a qstr). Anything else is mp_obj_subscr.
static RW_SLOW mp_obj_t subscr_slow(mp_obj_t base, mp_obj_t index, const uint8_t *site) {
    mp_map_t *m = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(base))->map;
    mp_map_elem_t *e = mp_map_lookup(m, index, MP_MAP_LOOKUP);
    if (e == NULL) {
        return mp_obj_subscr(base, index, MP_OBJ_SENTINEL);  // raises the KeyError
    }
    rw_site_t *c = site_slot(site);
    c->ip = site;
    c->index = e - m->table;
    return e->value;
}

mp_obj_t mp_native_subscr(mp_obj_t base, mp_obj_t index, mp_obj_t value) {
    if (value != MP_OBJ_SENTINEL || !mp_obj_is_qstr(index) ||
        !mp_obj_is_exact_type(base, &mp_type_dict)) {
        return mp_obj_subscr(base, index, value);
    }
    const uint8_t *site = RW_SITE();
    mp_map_t *m = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(base))->map;
    rw_site_t *c = site_slot(site);
    if (c->ip == site && holds(m, c->index, index)) {
        return m->table[c->index].value;
    }
    return subscr_slow(base, index, site);
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
    if (c->ip == site && c->map == BUILTINS_MAP && holds(BUILTINS_MAP, c->index, key) &&
        not_overridden(key) && absent_from(gmap, key, c->hash)) {
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
        // Found in a globals map: the index is checked in the current one, whichever
        // it is. Code shared by namespaces built alike (every Locus of a manifest runs
        // the same twin, each in its own namespace) finds its names at the same index
        // in each, so the guess holds across them.
        if (c->map != BUILTINS_MAP && holds(gmap, c->index, key)) {
            return gmap->table[c->index].value;
        }
        // A builtin: absent from these globals and from the builtins override dict when
        // last probed, and no map has gained a key since, so still absent from both (else
        // load_global_slow probes again). An override dict made since then by a store
        // gained that key; one made by a `del builtins.x` is empty.
        if (c->map == BUILTINS_MAP && c->gmap == gmap && c->keys_added == mp_map_keys_added &&
            holds(BUILTINS_MAP, c->index, key)) {
            return BUILTINS_MAP->table[c->index].value;
        }
    }
    return load_global_slow(qst, site);
}

// A function that binds self the way a plain bytecode function does, with no __get__:
// the only values the method cache hands out.
RW_INLINE bool plain_method(mp_obj_t v) {
    return mp_obj_is_exact_type(v, &mp_type_fun_bc) ||
           mp_obj_is_exact_type(v, &rw_type_fun_promoted);
}

// Names mp_load_method answers before it reaches the class's locals dict.
RW_INLINE bool method_name_ok(qstr attr) {
    return attr != MP_QSTR___class__ && attr != MP_QSTR___next__ && attr != MP_QSTR___dict__;
}

// The site's guess: the method it loads is entry e of type t's locals dict lm.
RW_INLINE void note_method(const uint8_t *site, const mp_obj_type_t *t, const mp_map_t *lm,
                           const mp_map_elem_t *e) {
    rw_site_t *c = site_slot(site);
    c->ip = site;
    c->map = t;
    c->index = e - lm->table;
}

// obj.name(...) where obj is an instance of the site's cached user class T, name is not
// one of obj's own members and T's own locals dict holds a plain function under it at the
// cached index: mp_load_method gives (function, obj) on exactly that domain (the argument
// is at LOCIOS_BC_LOAD_METHOD_C in vm/rewrite/rw_ops.h). __class__, __next__ and
// __dict__ are answered before the class dict, so they never take the fast path.
static RW_SLOW void load_method_slow(mp_obj_t base, qstr attr, mp_obj_t *dest,
                                     const uint8_t *site) {
    if (members_of(base) != NULL && method_name_ok(attr)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type;
        if (MP_OBJ_TYPE_HAS_SLOT(t, locals_dict)) {
            mp_map_t *lm = &MP_OBJ_TYPE_GET_SLOT(t, locals_dict)->map;
            mp_map_elem_t *e = mp_map_lookup(lm, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP);
            if (e != NULL && plain_method(e->value)) {
                note_method(site, t, lm, e);
            }
        }
    }
    mp_load_method(base, attr, dest);
}

// An instance's method: the cached guess, checked, else the slow path.
static RW_SLOW void load_instance_method(mp_obj_t base, qstr attr, mp_obj_t *dest,
                                         const uint8_t *site) {
    if (method_name_ok(attr)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type;
        rw_site_t *c = site_slot(site);
        if (c->ip == site && c->map == t && MP_OBJ_TYPE_HAS_SLOT(t, locals_dict)) {
            mp_map_t *lm = &MP_OBJ_TYPE_GET_SLOT(t, locals_dict)->map;
            mp_obj_t key = MP_OBJ_NEW_QSTR(attr);
            if (holds(lm, c->index, key) && plain_method(lm->table[c->index].value) &&
                mp_map_lookup(members_of(base), key, MP_MAP_LOOKUP) == NULL) {
                dest[0] = lm->table[c->index].value;
                dest[1] = base;
                return;
            }
        }
    }
    load_method_slow(base, attr, dest, site);
}

// A built-in function that binds self (str.split, dict.get, list.append).
RW_INLINE bool builtin_method(mp_obj_t v) {
    if (!mp_obj_is_obj(v)) {
        return false;
    }
    mp_uint_t f = ((mp_obj_base_t *)MP_OBJ_TO_PTR(v))->type->flags;
    return (f & MP_TYPE_FLAG_BINDS_SELF) && (f & MP_TYPE_FLAG_BUILTIN_FUN);
}

// The fixed locals dict of a built-in type, else NULL. A type without an attr slot
// answers a method load from that dict alone, and the dict never changes; one with an
// attr slot (the mesh's Ctx) answers from it when the slot defers (sets dest[1] to
// MP_OBJ_SENTINEL), which deferred_method asks the slot on every use.
RW_INLINE mp_map_t *fixed_methods_of(const mp_obj_type_t *t) {
    if (!MP_OBJ_TYPE_HAS_SLOT(t, locals_dict)) {
        return NULL;
    }
    mp_map_t *lm = &MP_OBJ_TYPE_GET_SLOT(t, locals_dict)->map;
    return lm->is_fixed ? lm : NULL;
}

// What mp_load_method (py/runtime.c) raises when nothing answers name.
static NORETURN void no_attribute(mp_obj_t base, qstr attr) {
#if MICROPY_ERROR_REPORTING <= MICROPY_ERROR_REPORTING_TERSE
    (void)base, (void)attr;
    mp_raise_msg(&mp_type_AttributeError, MP_ERROR_TEXT("no such attribute"));
#else
    if (mp_obj_is_type(base, &mp_type_type)) {
        mp_raise_msg_varg(&mp_type_AttributeError,
                          MP_ERROR_TEXT("type object '%q' has no attribute '%q'"),
                          ((mp_obj_type_t *)MP_OBJ_TO_PTR(base))->name, attr);
    }
    mp_raise_msg_varg(&mp_type_AttributeError, MP_ERROR_TEXT("'%s' object has no attribute '%q'"),
                      mp_obj_get_type_str(base), attr);
#endif
}

// base.name(...) on a type with an attr slot, whose locals dict holds the built-in method
// m under name: what mp_load_method_maybe does, the slot asked first, exactly once. When
// the slot defers, the dict's entry for name is m (the caller checked it at the cached
// index), so the method is (m, base); when it answers, its answer stands, and an empty
// one raises mp_load_method's AttributeError.
static RW_SLOW void deferred_method(const mp_obj_type_t *t, mp_obj_t base, qstr attr, mp_obj_t m,
                                    mp_obj_t *dest) {
    dest[0] = MP_OBJ_NULL;
    dest[1] = MP_OBJ_NULL;
    MP_OBJ_TYPE_GET_SLOT(t, attr)(base, attr, dest);
    if (dest[1] == MP_OBJ_SENTINEL) {
        dest[0] = m;
        dest[1] = base;
        return;
    }
    if (dest[0] == MP_OBJ_NULL) {
        no_attribute(base, attr);
    }
}

// obj.name(...) where obj's type T is not a user class, has a fixed locals dict holding a
// built-in function under name at the cached index, and name is not one
// mp_load_method_maybe answers first: mp_load_method gives (function, obj) on that domain
// when T has no attr slot or its slot defers (mp_convert_member_lookup binds a built-in
// function to an object of a type that is not a user class). Dicts of built-in types are
// ordered and searched key by key: str's holds about 30 names. The guess is noted after
// mp_load_method ran, from the dict alone, so an attr slot runs once per load.
static RW_SLOW void load_builtin_method_slow(mp_obj_t base, qstr attr, mp_obj_t *dest,
                                             const uint8_t *site) {
    mp_load_method(base, attr, dest);
    const mp_obj_type_t *t = mp_obj_get_type(base);
    mp_map_t *lm = fixed_methods_of(t);
    if (lm != NULL && method_name_ok(attr) && dest[1] == base) {
        mp_map_elem_t *e = mp_map_lookup(lm, MP_OBJ_NEW_QSTR(attr), MP_MAP_LOOKUP);
        if (e != NULL && e->value == dest[0] && builtin_method(e->value)) {
            note_method(site, t, lm, e);
        }
    }
}

// An instance's method through load_instance_method; anything else's through the cache
// load_builtin_method_slow fills (the type is checked again on every use: its dict and
// slots are constant, so the name at the index is all that is left to check, and the
// attr slot's answer when it has one).
void mp_native_load_method(mp_obj_t base, qstr attr, mp_obj_t *dest) {
    const uint8_t *site = RW_SITE();
    if (members_of(base) != NULL) {
        load_instance_method(base, attr, dest, site);
        return;
    }
    const mp_obj_type_t *t = mp_obj_get_type(base);
    rw_site_t *c = site_slot(site);
    if (c->ip == site && c->map == t) {
        mp_map_t *lm = fixed_methods_of(t);
        if (lm != NULL && holds(lm, c->index, MP_OBJ_NEW_QSTR(attr)) &&
            builtin_method(lm->table[c->index].value)) {
            if (MP_OBJ_TYPE_HAS_SLOT(t, attr)) {
                deferred_method(t, base, attr, lm->table[c->index].value, dest);
                return;
            }
            dest[0] = lm->table[c->index].value;
            dest[1] = base;
            return;
        }
    }
    load_builtin_method_slow(base, attr, dest, site);
}

// obj.name = value where obj is an instance of a user class without special accessors
// (no property, descriptor or __setattr__ anywhere in its classes: the type flag
// mp_obj_instance_store_attr tests first): the store goes straight to obj's members, at
// the cached index when the name is there.
RW_INLINE mp_map_t *plain_members_of(mp_obj_t base) {
    mp_map_t *m = members_of(base);
    if (m != NULL && !(((mp_obj_base_t *)MP_OBJ_TO_PTR(base))->type->flags &
                       MP_TYPE_FLAG_HAS_SPECIAL_ACCESSORS)) {
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
