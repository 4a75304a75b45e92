// SPDX-License-Identifier: MIT
// `_mesh.manifest(m, flavours, budget_default, budget_max)`: the checked manifest that
// loci/python/locus_manifest.py's check_in_python(m, flavours) returns, built the same
// way (the same dicts, in the same order), or None. None means "ask Python": for any
// manifest this does not take as given (an error, whose message Python words; a subclass
// of a plain type; an io or mem grant; an int too big for a small int), so that what a
// manifest may say is written once, in Python, and this is only its fast path. A spawn
// costs a few thousand cycles here against a hundred thousand there.
// tests/qemu/test_mesh.py holds the two to the same answers on generated manifests.
#include <string.h>

#include "py/objstr.h"
#include "py/runtime.h"

#include "modmesh.h"

#define NAME_MAX_CHARS   24
#define MODULE_MAX_CHARS 64
#define CAPS_MAX         8
#define KEYS_MAX         4
#define KEY_MAX_BYTES    15
#define RECT_MAX         4096
#define ARGS_DEPTH       8
#define EXPIRES_MAX      ((mp_int_t)1 << 40)

// The qstr of a str (interned or not), or MP_QSTRnull for anything else.
static qstr qstr_of(mp_obj_t o) {
    if (mp_obj_is_qstr(o)) {
        return MP_OBJ_QSTR_VALUE(o);
    }
    if (!mp_obj_is_exact_type(o, &mp_type_str)) {
        return MP_QSTRnull;
    }
    size_t n;
    const char *s = mp_obj_str_get_data(o, &n);
    return qstr_find_strn(s, n);
}

static bool is_str(mp_obj_t o) {
    return mp_obj_is_qstr(o) || mp_obj_is_exact_type(o, &mp_type_str);
}

static bool is_seq(mp_obj_t o) {
    return mp_obj_is_exact_type(o, &mp_type_tuple) || mp_obj_is_exact_type(o, &mp_type_list);
}

// The values of a dict's keys among `known` (out[i] for known[i], MP_OBJ_NULL where
// absent), in one pass over the dict. False when a key is not known and `strict`.
static bool scan(mp_obj_t d, const qstr *known, size_t n, mp_obj_t *out, bool strict) {
    for (size_t i = 0; i < n; i++) {
        out[i] = MP_OBJ_NULL;
    }
    mp_map_t *map = mp_obj_dict_get_map(d);
    for (size_t s = 0; s < map->alloc; s++) {
        if (!mp_map_slot_is_filled(map, s)) {
            continue;
        }
        qstr q = qstr_of(map->table[s].key);
        size_t i = 0;
        while (i < n && known[i] != q) {
            i++;
        }
        if (i < n) {
            out[i] = map->table[s].value;
        } else if (strict) {
            return false;
        }
    }
    return true;
}

// The dicts this builds, each as Python builds it: a dict display of these keys, in this
// order (a wake condition then gets its `above`). Where each key lies in the table
// follows from that, so each shape is built once, by the same steps, and then copied
// and filled in place.
enum shape {
    SHAPE_OUT,
    SHAPE_GRANT,
    SHAPE_AT,
    SHAPE_KEY,
    SHAPE_REGION,
    SHAPE_WAKE_AT,
    SHAPE_WAKE_KEY,
    SHAPE_WAKE_REGION,
    SHAPES
};

#define SHAPE_KEYS 10

static const struct {
    uint8_t display;  // keys in the display; any after it are stored one by one
    uint8_t n;
    qstr keys[SHAPE_KEYS];
} shapes[SHAPES] = {
    [SHAPE_OUT] = { 9,
                    9,
                    { MP_QSTR_name, MP_QSTR_code, MP_QSTR_module, MP_QSTR_caps, MP_QSTR_budget,
                      MP_QSTR_restart, MP_QSTR_attend, MP_QSTR_wake, MP_QSTR_args } },
    [SHAPE_GRANT] = { 10,
                      10,
                      { MP_QSTR_flavours, MP_QSTR_ops, MP_QSTR_region, MP_QSTR_keys, MP_QSTR_rate,
                        MP_QSTR_expires, MP_QSTR_spawn, MP_QSTR_io, MP_QSTR_mem,
                        MP_QSTR_rewrite } },
    [SHAPE_AT] = { 2, 2, { MP_QSTR_flavour, MP_QSTR_at } },
    [SHAPE_KEY] = { 2, 2, { MP_QSTR_flavour, MP_QSTR_key } },
    [SHAPE_REGION] = { 2, 2, { MP_QSTR_flavour, MP_QSTR_region } },
    [SHAPE_WAKE_AT] = { 2, 3, { MP_QSTR_flavour, MP_QSTR_at, MP_QSTR_above } },
    [SHAPE_WAKE_KEY] = { 2, 3, { MP_QSTR_flavour, MP_QSTR_key, MP_QSTR_above } },
    [SHAPE_WAKE_REGION] = { 2, 3, { MP_QSTR_flavour, MP_QSTR_region, MP_QSTR_above } },
};

MP_REGISTER_ROOT_POINTER(mp_obj_t mesh_shapes[8]);
static uint8_t shape_slot[SHAPES][SHAPE_KEYS];

// A new dict of `shape`, every value None (or, for a grant, its default).
static mp_obj_t shaped(enum shape sh) {
    mp_obj_t t = MP_STATE_VM(mesh_shapes)[sh];
    if (t == MP_OBJ_NULL) {
        t = mp_obj_new_dict(shapes[sh].display);
        for (size_t i = 0; i < shapes[sh].n; i++) {
            mp_obj_dict_store(t, MP_OBJ_NEW_QSTR(shapes[sh].keys[i]), mp_const_none);
        }
        mp_map_t *map = mp_obj_dict_get_map(t);
        for (size_t i = 0; i < shapes[sh].n; i++) {
            shape_slot[sh][i] =
                (uint8_t)(mp_map_lookup(map, MP_OBJ_NEW_QSTR(shapes[sh].keys[i]), MP_MAP_LOOKUP) -
                          map->table);
        }
        if (sh == SHAPE_GRANT) {
            // _cap's defaults: flavours (), ops (), rate -1.0, spawn and rewrite False.
            mp_map_elem_t *e = map->table;
            e[shape_slot[sh][0]].value = mp_const_empty_tuple;
            e[shape_slot[sh][1]].value = mp_const_empty_tuple;
            e[shape_slot[sh][4]].value = mp_obj_new_float(-1.0);
            e[shape_slot[sh][6]].value = mp_const_false;
            e[shape_slot[sh][9]].value = mp_const_false;
        }
        MP_STATE_VM(mesh_shapes)[sh] = t;
    }
    return mp_obj_dict_copy(t);
}

void mesh_manifest_deinit(void) {
    for (size_t i = 0; i < SHAPES; i++) {
        MP_STATE_VM(mesh_shapes)[i] = MP_OBJ_NULL;
    }
    MP_STATE_VM(mesh_budget_defaults) = MP_OBJ_NULL;
    MP_STATE_VM(mesh_budget_template) = MP_OBJ_NULL;
}

// d[shapes[sh].keys[i]] = v, in the slot the key has in every dict of that shape.
static void set(mp_obj_t d, enum shape sh, size_t i, mp_obj_t v) {
    mp_obj_dict_get_map(d)->table[shape_slot[sh][i]].value = v;
}

// _int: an int (not a bool) in lo..hi.
static bool small_int(mp_obj_t v, mp_int_t lo, mp_int_t hi, mp_int_t *out) {
    if (!mp_obj_is_small_int(v)) {
        return false;
    }
    *out = MP_OBJ_SMALL_INT_VALUE(v);
    return *out >= lo && *out <= hi;
}

// _num: an int or a float, not a bool, not NaN; as a float.
static mp_obj_t number(mp_obj_t v) {
    if (mp_obj_is_float(v)) {
        mp_float_t f = mp_obj_float_get(v);
        return f == f ? v : MP_OBJ_NULL;
    }
    if (mp_obj_is_small_int(v)) {
        return mp_obj_new_float((mp_float_t)MP_OBJ_SMALL_INT_VALUE(v));
    }
    return MP_OBJ_NULL;
}

static bool letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool digit(char c) {
    return c >= '0' && c <= '9';
}

// NAME_CHARS: [A-Za-z0-9_.-].
static bool name_chars(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!letter(s[i]) && !digit(s[i]) && s[i] != '.' && s[i] != '-') {
            return false;
        }
    }
    return true;
}

static bool ident(const char *s, size_t n) {
    if (n == 0 || !letter(s[0])) {
        return false;
    }
    for (size_t i = 1; i < n; i++) {
        if (!letter(s[i]) && !digit(s[i])) {
            return false;
        }
    }
    return true;
}

// _module: 'package.module' or 'package.module:ATTR', dotted identifiers.
static bool module_name(mp_obj_t v) {
    if (!is_str(v)) {
        return false;
    }
    size_t n;
    const char *s = mp_obj_str_get_data(v, &n);
    if (n < 1 || n > MODULE_MAX_CHARS) {
        return false;
    }
    const char *colon = memchr(s, ':', n);
    size_t mod = colon ? (size_t)(colon - s) : n;
    if (colon && !ident(colon + 1, n - mod - 1)) {
        return false;
    }
    size_t start = 0;
    for (size_t i = 0; i <= mod; i++) {
        if (i == mod || s[i] == '.') {
            if (!ident(s + start, i - start)) {
                return false;
            }
            start = i + 1;
        }
    }
    return true;
}

// _key: str or bytes of 1..15 bytes, as bytes.
static mp_obj_t key(mp_obj_t k) {
    if (!is_str(k) && !mp_obj_is_exact_type(k, &mp_type_bytes)) {
        return MP_OBJ_NULL;
    }
    size_t n;
    const char *s = mp_obj_str_get_data(k, &n);
    if (n < 1 || n > KEY_MAX_BYTES) {
        return MP_OBJ_NULL;
    }
    return is_str(k) ? mp_obj_new_bytes((const byte *)s, n) : k;
}

// (kind, w, h) of the flavour a str names in `flavours`, or false.
static bool flavour(mp_obj_t flavours, mp_obj_t f, qstr *kind, mp_int_t *w, mp_int_t *h) {
    if (!is_str(f)) {
        return false;
    }
    mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(flavours), f, MP_MAP_LOOKUP);
    if (e == NULL || !mp_obj_is_exact_type(e->value, &mp_type_tuple)) {
        return false;
    }
    size_t n;
    mp_obj_t *t;
    mp_obj_tuple_get(e->value, &n, &t);
    if (n != 3 || !mp_obj_is_qstr(t[0]) || !mp_obj_is_small_int(t[1]) ||
        !mp_obj_is_small_int(t[2])) {
        return false;
    }
    *kind = MP_OBJ_QSTR_VALUE(t[0]);
    *w = MP_OBJ_SMALL_INT_VALUE(t[1]);
    *h = MP_OBJ_SMALL_INT_VALUE(t[2]);
    return true;
}

// _rect: (x0, y0, w, h) inside a w x h grid.
static mp_obj_t rect(mp_obj_t v, mp_int_t gw, mp_int_t gh) {
    if (!is_seq(v)) {
        return MP_OBJ_NULL;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(v, &n, &items);
    mp_int_t c[4];
    if (n != 4) {
        return MP_OBJ_NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (!small_int(items[i], 0, RECT_MAX, &c[i])) {
            return MP_OBJ_NULL;
        }
    }
    if (c[2] < 1 || c[3] < 1 || c[0] + c[2] > gw || c[1] + c[3] > gh) {
        return MP_OBJ_NULL;
    }
    mp_obj_t t[4] = { MP_OBJ_NEW_SMALL_INT(c[0]), MP_OBJ_NEW_SMALL_INT(c[1]),
                      MP_OBJ_NEW_SMALL_INT(c[2]), MP_OBJ_NEW_SMALL_INT(c[3]) };
    return mp_obj_new_tuple(4, t);
}

// _plain: a private copy of plain data.
static mp_obj_t plain(mp_obj_t v, int depth) {
    if (depth > ARGS_DEPTH) {
        return MP_OBJ_NULL;
    }
    if (v == mp_const_none || v == mp_const_true || v == mp_const_false || mp_obj_is_small_int(v) ||
        mp_obj_is_float(v) || is_str(v) || mp_obj_is_exact_type(v, &mp_type_bytes)) {
        return v;
    }
    if (is_seq(v)) {
        size_t n;
        mp_obj_t *items;
        mp_obj_get_array(v, &n, &items);
        bool tuple = mp_obj_is_exact_type(v, &mp_type_tuple);
        mp_obj_t out = tuple ? mp_obj_new_tuple(n, NULL) : mp_obj_new_list(n, NULL);
        mp_obj_t *dst;
        mp_obj_get_array(out, &n, &dst);
        for (size_t i = 0; i < n; i++) {
            if ((dst[i] = plain(items[i], depth + 1)) == MP_OBJ_NULL) {
                return MP_OBJ_NULL;
            }
        }
        return out;
    }
    if (mp_obj_is_exact_type(v, &mp_type_dict)) {
        mp_map_t *map = mp_obj_dict_get_map(v);
        mp_obj_t out = mp_obj_new_dict(0);
        for (size_t i = 0; i < map->alloc; i++) {
            if (!mp_map_slot_is_filled(map, i)) {
                continue;
            }
            mp_obj_t x =
                is_str(map->table[i].key) ? plain(map->table[i].value, depth + 1) : MP_OBJ_NULL;
            if (x == MP_OBJ_NULL) {
                return MP_OBJ_NULL;
            }
            mp_obj_dict_store(out, map->table[i].key, x);
        }
        return out;
    }
    return MP_OBJ_NULL;
}

// _attend: where a Locus attends (wake: or waits, `above` its threshold, a number).
static mp_obj_t attend(mp_obj_t a, mp_obj_t flavours, bool wake) {
    static const qstr known[] = { MP_QSTR_flavour, MP_QSTR_at, MP_QSTR_key, MP_QSTR_region,
                                  MP_QSTR_above };
    mp_obj_t v[MP_ARRAY_SIZE(known)];
    if (!mp_obj_is_exact_type(a, &mp_type_dict)) {
        return MP_OBJ_NULL;
    }
    scan(a, known, MP_ARRAY_SIZE(known), v, false);  // other keys: Python ignores them too
    mp_obj_t f = v[0], above = MP_OBJ_NULL;
    qstr kind;
    mp_int_t w, h;
    if (f == MP_OBJ_NULL || !flavour(flavours, f, &kind, &w, &h) ||
        (v[1] != MP_OBJ_NULL) + (v[2] != MP_OBJ_NULL) + (v[3] != MP_OBJ_NULL) != 1 ||
        (wake && (v[4] == MP_OBJ_NULL || (above = number(v[4])) == MP_OBJ_NULL))) {
        return MP_OBJ_NULL;
    }
    enum shape sh;
    mp_obj_t where;
    if (v[1] != MP_OBJ_NULL) {
        size_t n;
        mp_obj_t *p;
        mp_int_t x, y;
        if (kind != MP_QSTR_grid || !is_seq(v[1]) || (mp_obj_get_array(v[1], &n, &p), n != 2) ||
            !small_int(p[0], 0, w - 1, &x) || !small_int(p[1], 0, h - 1, &y)) {
            return MP_OBJ_NULL;
        }
        mp_obj_t xy[2] = { MP_OBJ_NEW_SMALL_INT(x), MP_OBJ_NEW_SMALL_INT(y) };
        where = mp_obj_new_tuple(2, xy);
        sh = wake ? SHAPE_WAKE_AT : SHAPE_AT;
    } else if (v[2] != MP_OBJ_NULL) {
        if (kind != MP_QSTR_keyed || (where = key(v[2])) == MP_OBJ_NULL) {
            return MP_OBJ_NULL;
        }
        sh = wake ? SHAPE_WAKE_KEY : SHAPE_KEY;
    } else {
        if (kind != MP_QSTR_grid || (where = rect(v[3], w, h)) == MP_OBJ_NULL) {
            return MP_OBJ_NULL;
        }
        sh = wake ? SHAPE_WAKE_REGION : SHAPE_REGION;
    }
    mp_obj_t out = shaped(sh);
    set(out, sh, 0, f);
    set(out, sh, 1, where);
    if (wake) {
        set(out, sh, 2, above);
    }
    return out;
}

// A sequence of str, each passing `ok`: as a tuple.
static mp_obj_t names(mp_obj_t v, bool (*ok)(mp_obj_t s, mp_obj_t ctx), mp_obj_t ctx) {
    if (!is_seq(v)) {
        return MP_OBJ_NULL;
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(v, &n, &items);
    for (size_t i = 0; i < n; i++) {
        if (!ok(items[i], ctx)) {
            return MP_OBJ_NULL;
        }
    }
    return mp_obj_new_tuple(n, items);
}

static bool known_flavour(mp_obj_t f, mp_obj_t flavours) {
    qstr kind;
    mp_int_t w, h;
    return flavour(flavours, f, &kind, &w, &h);
}

static bool known_op(mp_obj_t o, mp_obj_t unused) {
    (void)unused;
    qstr q = qstr_of(o);
    return q == MP_QSTR_sense || q == MP_QSTR_deposit;
}

// _cap: one grant, with every field given a value.
static mp_obj_t grant(mp_obj_t c, mp_obj_t flavours) {
    // CAP_KEYS but io and mem, the console's (Python checks them).
    static const qstr known[] = {
        MP_QSTR_flavours, MP_QSTR_ops,     MP_QSTR_region, MP_QSTR_keys,
        MP_QSTR_rate,     MP_QSTR_expires, MP_QSTR_spawn,  MP_QSTR_rewrite
    };
    mp_obj_t v[MP_ARRAY_SIZE(known)];
    if (!mp_obj_is_exact_type(c, &mp_type_dict) || !scan(c, known, MP_ARRAY_SIZE(known), v, true)) {
        return MP_OBJ_NULL;
    }
    mp_obj_t out = shaped(SHAPE_GRANT);
    mp_obj_t fls =
        v[0] == MP_OBJ_NULL ? mp_const_empty_tuple : names(v[0], known_flavour, flavours);
    mp_obj_t ops =
        v[1] == MP_OBJ_NULL ? mp_const_empty_tuple : names(v[1], known_op, mp_const_none);
    if (fls == MP_OBJ_NULL || ops == MP_OBJ_NULL ||
        (fls != mp_const_empty_tuple && mp_obj_len(fls) != MP_OBJ_NEW_SMALL_INT(0) &&
         mp_obj_len(ops) == MP_OBJ_NEW_SMALL_INT(0))) {
        return MP_OBJ_NULL;
    }
    set(out, SHAPE_GRANT, 0, fls);
    set(out, SHAPE_GRANT, 1, ops);
    if (v[2] != MP_OBJ_NULL && v[2] != mp_const_none) {
        size_t n;
        mp_obj_t *f;
        mp_obj_tuple_get(fls, &n, &f);
        mp_obj_t r = MP_OBJ_NULL;
        for (size_t i = 0; i < n; i++) {
            qstr kind;
            mp_int_t w, h;
            flavour(flavours, f[i], &kind, &w, &h);
            if (kind == MP_QSTR_grid && (r = rect(v[2], w, h)) == MP_OBJ_NULL) {
                return MP_OBJ_NULL;
            }
        }
        if (r == MP_OBJ_NULL) {
            return MP_OBJ_NULL;  // no grid flavour
        }
        set(out, SHAPE_GRANT, 2, r);
    }
    if (v[3] != MP_OBJ_NULL && v[3] != mp_const_none) {
        size_t n;
        mp_obj_t *ks;
        if (!is_seq(v[3]) || (mp_obj_get_array(v[3], &n, &ks), n < 1 || n > KEYS_MAX)) {
            return MP_OBJ_NULL;
        }
        mp_obj_tuple_t *t = MP_OBJ_TO_PTR(mp_obj_new_tuple(n, NULL));
        for (size_t i = 0; i < n; i++) {
            if ((t->items[i] = key(ks[i])) == MP_OBJ_NULL) {
                return MP_OBJ_NULL;
            }
        }
        set(out, SHAPE_GRANT, 3, MP_OBJ_FROM_PTR(t));
    }
    if (v[4] != MP_OBJ_NULL && v[4] != mp_const_none) {
        mp_obj_t rate = number(v[4]);
        if (rate == MP_OBJ_NULL) {
            return MP_OBJ_NULL;
        }
        set(out, SHAPE_GRANT, 4, rate);
    }
    if (v[5] != MP_OBJ_NULL && v[5] != mp_const_none) {
        mp_int_t e;
        if (!small_int(v[5], 1, EXPIRES_MAX, &e)) {
            return MP_OBJ_NULL;
        }
        set(out, SHAPE_GRANT, 5, v[5]);
    }
    // spawn and rewrite, the shape's 7th and 10th keys.
    static const uint8_t flag_slot[2] = { 6, 9 };
    for (size_t i = 0; i < 2; i++) {
        mp_obj_t f = v[6 + i];
        if (f != MP_OBJ_NULL) {
            if (f != mp_const_true && f != mp_const_false) {
                return MP_OBJ_NULL;
            }
            set(out, SHAPE_GRANT, flag_slot[i], f);
        }
    }
    return out;
}

// RESTART: "never" or "on-failure" (a qstr name cannot spell the hyphen).
static bool restart_policy(mp_obj_t v) {
    if (!is_str(v)) {
        return false;
    }
    size_t n;
    const char *s = mp_obj_str_get_data(v, &n);
    return (n == 5 && memcmp(s, "never", 5) == 0) || (n == 10 && memcmp(s, "on-failure", 10) == 0);
}

// dict(defaults), as Python makes it (a new dict filled in the defaults' order, which
// sets where each key lies), made once and kept while the defaults are what it holds.
MP_REGISTER_ROOT_POINTER(mp_obj_t mesh_budget_defaults);
MP_REGISTER_ROOT_POINTER(mp_obj_t mesh_budget_template);

static mp_obj_t defaults_dict(mp_obj_t defaults) {
    mp_map_t *map = mp_obj_dict_get_map(defaults);
    mp_obj_t t = MP_STATE_VM(mesh_budget_template);
    if (t != MP_OBJ_NULL && MP_STATE_VM(mesh_budget_defaults) == defaults &&
        mp_obj_dict_get_map(t)->used == map->used) {
        bool same = true;
        for (size_t i = 0; i < map->alloc && same; i++) {
            if (mp_map_slot_is_filled(map, i)) {
                mp_map_elem_t *e =
                    mp_map_lookup(mp_obj_dict_get_map(t), map->table[i].key, MP_MAP_LOOKUP);
                same = e != NULL && e->value == map->table[i].value;
            }
        }
        if (same) {
            return t;
        }
    }
    t = mp_obj_new_dict(0);
    for (size_t i = 0; i < map->alloc; i++) {
        if (mp_map_slot_is_filled(map, i)) {
            mp_obj_dict_store(t, map->table[i].key, map->table[i].value);
        }
    }
    MP_STATE_VM(mesh_budget_defaults) = defaults;
    MP_STATE_VM(mesh_budget_template) = t;
    return t;
}

// The budget: the defaults with what the manifest gives. A manifest that gives none gets
// the one dict of the defaults, shared: the mesh never changes a budget in place.
static mp_obj_t budget(mp_obj_t b, mp_obj_t defaults, mp_obj_t maxima) {
    mp_obj_t t = defaults_dict(defaults);
    if (b == MP_OBJ_NULL) {
        return t;
    }
    if (!mp_obj_is_exact_type(b, &mp_type_dict)) {
        return MP_OBJ_NULL;
    }
    mp_obj_t out = mp_obj_dict_copy(t);
    mp_map_t *map = mp_obj_dict_get_map(b);
    for (size_t i = 0; i < map->alloc; i++) {
        if (!mp_map_slot_is_filled(map, i)) {
            continue;
        }
        mp_obj_t k = map->table[i].key;
        mp_map_elem_t *most = is_str(k) && mp_obj_is_exact_type(maxima, &mp_type_dict)
                                  ? mp_map_lookup(mp_obj_dict_get_map(maxima), k, MP_MAP_LOOKUP)
                                  : NULL;
        mp_int_t v, hi;
        // A frozen module's large constant (1 << 40) is a long int object.
        if (most == NULL || mesh_dict_get(defaults, qstr_of(k)) == MP_OBJ_NULL ||
            !mp_obj_get_int_maybe(most->value, &hi)) {
            return MP_OBJ_NULL;
        }
        if (!small_int(map->table[i].value, qstr_of(k) == MP_QSTR_cycles ? 0 : 1, hi, &v)) {
            return MP_OBJ_NULL;
        }
        mp_obj_dict_store(out, k, map->table[i].value);
    }
    return out;
}

mp_obj_t mesh_manifest_check(mp_obj_t m, mp_obj_t flavours, mp_obj_t defaults, mp_obj_t maxima) {
    // KEYS, in the order of the checked manifest's display.
    static const qstr known[] = { MP_QSTR_name,   MP_QSTR_code,   MP_QSTR_module,
                                  MP_QSTR_caps,   MP_QSTR_budget, MP_QSTR_restart,
                                  MP_QSTR_attend, MP_QSTR_wake,   MP_QSTR_args };
    enum {
        NAME,
        CODE,
        MODULE,
        CAPS,
        BUDGET,
        RESTART,
        ATTEND,
        WAKE,
        ARGS
    };
    mp_obj_t v[MP_ARRAY_SIZE(known)];
    if (!mp_obj_is_exact_type(m, &mp_type_dict) || !mp_obj_is_exact_type(flavours, &mp_type_dict) ||
        !mp_obj_is_exact_type(defaults, &mp_type_dict) ||
        !scan(m, known, MP_ARRAY_SIZE(known), v, true)) {
        return MP_OBJ_NULL;
    }
    size_t n;
    if (v[NAME] == MP_OBJ_NULL || !is_str(v[NAME])) {
        return MP_OBJ_NULL;
    }
    const char *name = mp_obj_str_get_data(v[NAME], &n);
    if (n < 1 || n > NAME_MAX_CHARS || !name_chars(name, n)) {
        return MP_OBJ_NULL;
    }
    mp_obj_t code = v[CODE], module = v[MODULE];
    if ((code == MP_OBJ_NULL) == (module == MP_OBJ_NULL)) {
        return MP_OBJ_NULL;
    }
    if (code != MP_OBJ_NULL && (!is_str(code) || (mp_obj_str_get_data(code, &n), n == 0))) {
        return MP_OBJ_NULL;
    }
    if (module != MP_OBJ_NULL && !module_name(module)) {
        return MP_OBJ_NULL;
    }
    mp_obj_t *grants = NULL;
    size_t ngrants = 0;
    if (v[CAPS] != MP_OBJ_NULL &&
        (!is_seq(v[CAPS]) || (mp_obj_get_array(v[CAPS], &ngrants, &grants), ngrants > CAPS_MAX))) {
        return MP_OBJ_NULL;
    }
    mp_obj_t bud = budget(v[BUDGET], defaults, maxima);
    if (bud == MP_OBJ_NULL || (v[RESTART] != MP_OBJ_NULL && !restart_policy(v[RESTART]))) {
        return MP_OBJ_NULL;
    }
    mp_obj_t out = shaped(SHAPE_OUT);
    set(out, SHAPE_OUT, NAME, v[NAME]);
    set(out, SHAPE_OUT, CODE, code != MP_OBJ_NULL ? code : mp_const_none);
    set(out, SHAPE_OUT, MODULE, module != MP_OBJ_NULL ? module : mp_const_none);
    mp_obj_list_t *checked = MP_OBJ_TO_PTR(mp_obj_new_list(ngrants, NULL));
    for (size_t i = 0; i < ngrants; i++) {
        if ((checked->items[i] = grant(grants[i], flavours)) == MP_OBJ_NULL) {
            return MP_OBJ_NULL;
        }
    }
    set(out, SHAPE_OUT, CAPS, MP_OBJ_FROM_PTR(checked));
    set(out, SHAPE_OUT, BUDGET, bud);
    set(out, SHAPE_OUT, RESTART,
        v[RESTART] != MP_OBJ_NULL ? v[RESTART] : MP_OBJ_NEW_QSTR(MP_QSTR_never));
    mp_obj_t a = plain(v[ARGS] != MP_OBJ_NULL ? v[ARGS] : mp_obj_new_dict(0), 0);
    if (a == MP_OBJ_NULL) {
        return MP_OBJ_NULL;
    }
    set(out, SHAPE_OUT, ARGS, a);
    for (size_t i = ATTEND; i <= WAKE; i++) {
        if (v[i] != MP_OBJ_NULL && v[i] != mp_const_none) {
            if ((a = attend(v[i], flavours, i == WAKE)) == MP_OBJ_NULL) {
                return MP_OBJ_NULL;
            }
            set(out, SHAPE_OUT, i, a);
        }
    }
    return out;
}

static mp_obj_t mesh_manifest(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_obj_t out = mesh_manifest_check(args[0], args[1], args[2], args[3]);
    return out != MP_OBJ_NULL ? out : mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_manifest_obj, 4, 4, mesh_manifest);
