// SPDX-License-Identifier: MIT
// `_mesh.Record`: what the mesh knows about one Locus, as C fields (modmesh.h) that the
// scheduler reads directly and Python reads and writes as attributes. Fixed fields
// instead of an instance dict: no map lookup per access, and a third of the bytes.
#include <stddef.h>
#include <string.h>

#include "py/objstr.h"
#include "py/runtime.h"

#include "modmesh.h"

// Lines kept in a Locus's log ring, and the characters of each.
#define LOG_LINES 8
#define LOG_TEXT  80

mesh_record_t *mesh_record_of(mp_obj_t o) {
    if (!mp_obj_is_type(o, &mesh_type_Record)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a Locus record"));
    }
    return MP_OBJ_TO_PTR(o);
}

// Record(lid, man, seed): a live Locus of checked manifest `man`, nothing granted yet.
static mp_obj_t record_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
                                const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 3, 3, false);
    mesh_record_t *r = mp_obj_malloc(mesh_record_t, type);
    mp_obj_t man = args[1];
#define INIT_NONE(f) r->f = mp_const_none;
    MESH_RECORD_OBJECTS(INIT_NONE)
#undef INIT_NONE
    r->id = mp_obj_get_int(args[0]);
    r->name = mesh_item(man, MP_QSTR_name);
    r->man = man;
    r->args = mesh_item(man, MP_QSTR_args);
    r->budget = mesh_item(man, MP_QSTR_budget);
    r->mem = mp_obj_new_dict(0);
    r->caps = mp_obj_new_list(0, NULL);  // [(Cap, rights, flavour mask)] in grant order
    r->attend = mesh_item(man, MP_QSTR_attend);
    r->wake = mesh_item(man, MP_QSTR_wake);
    mp_obj_t at = mesh_dict_get(r->attend, MP_QSTR_at);
    if (at != MP_OBJ_NULL) {
        r->pos = at;
    } else if (r->attend != mp_const_none && !mp_obj_is_type(r->attend, &mp_type_dict) &&
               mp_obj_is_true(
                   mp_binary_op(MP_BINARY_OP_CONTAINS, r->attend, MP_OBJ_NEW_QSTR(MP_QSTR_at)))) {
        r->pos = mesh_item(r->attend, MP_QSTR_at);
    }
    r->state = MP_OBJ_NEW_QSTR(MP_QSTR_live);
    // keys (a root's: keyed flavour index -> [keys its lineage added]) and log are made
    // at their first use: most Loci never log, and only roots keep keys.
    r->keys = MP_OBJ_NULL;
    r->log = MP_OBJ_NULL;
    r->root = r->id;  // the console-spawned ancestor (itself, if it is one)
    // Python's (seed * 2654435761 + lid * 40503) & 0xFFFFFFFF: only the low 32 bits of
    // each operand matter.
    uint32_t seed = (uint32_t)mp_obj_get_int_truncated(args[2]);
    uint32_t x = seed * 2654435761u + (uint32_t)r->id * 40503u;
    r->rng = x != 0 ? x : 0x9E3779B9u;
    return MP_OBJ_FROM_PTR(r);
}

mp_obj_t mesh_record_new(const mp_obj_t *args) {
    return record_make_new(&mesh_type_Record, 3, 0, args);
}

uint32_t mesh_record_next_rand(mesh_record_t *r) {
    uint32_t x = r->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    r->rng = x;
    return x >> 2;
}

static mp_obj_t *made(mp_obj_t *field) {
    if (*field == MP_OBJ_NULL) {
        *field = mp_obj_new_list(0, NULL);
    }
    return field;
}

void mesh_record_add_log(mesh_record_t *r, mp_obj_t tick, mp_obj_t text) {
    made(&r->log);
    // locus_text.short keeps a str of up to LOG_TEXT characters as it is and describes
    // anything else without calling its str(): the Locus's values are never formatted
    // here.
    size_t len = 0;
    if (!mp_obj_is_str(text) || (mp_obj_str_get_data(text, &len), len > LOG_TEXT)) {
        mp_obj_t mod = mp_import_name(MP_QSTR_locus_text, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
        mp_obj_t a[2] = { text, MP_OBJ_NEW_SMALL_INT(LOG_TEXT) };
        text = mp_call_function_n_kw(mp_load_attr(mod, MP_QSTR_short), 2, 0, a);
    }
    vstr_t v;
    mp_print_t print;
    vstr_init_print(&v, 16, &print);
    mp_obj_print_helper(&print, tick, PRINT_STR);
    vstr_add_str(&v, ": ");
    mp_obj_print_helper(&print, text, PRINT_STR);
    mp_obj_list_append(r->log, mp_obj_new_str_from_vstr(&v));
    size_t n;
    mp_obj_t *items;
    mp_obj_list_get(r->log, &n, &items);
    if (n > LOG_LINES) {
        mp_obj_t dest[3];
        mp_load_method(r->log, MP_QSTR_pop, dest);
        dest[2] = MP_OBJ_NEW_SMALL_INT(0);
        mp_call_method_n_kw(1, 0, dest);
    }
}

static mp_obj_t record_next_rand(mp_obj_t self) {
    return MP_OBJ_NEW_SMALL_INT(mesh_record_next_rand(mesh_record_of(self)));
}
static MP_DEFINE_CONST_FUN_OBJ_1(record_next_rand_obj, record_next_rand);

static mp_obj_t record_add_log(mp_obj_t self, mp_obj_t tick, mp_obj_t text) {
    mesh_record_add_log(mesh_record_of(self), tick, text);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_3(record_add_log_obj, record_add_log);

// The line ps() shows: the same dict, built in the same order, as the Python it replaces.
static mp_obj_t record_row(mp_obj_t self) {
    mesh_record_t *r = mesh_record_of(self);
    mp_obj_t d = mp_obj_new_dict(8);
#define PUT(k, v) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_##k), v)
    PUT(id, mp_obj_new_int(r->id));
    PUT(name, r->name);
    PUT(state, r->state);
    PUT(steps, mp_obj_new_int(r->steps));
    PUT(strikes, mp_obj_new_int(r->strikes));
    PUT(ops, mp_obj_new_int(r->ops_last));
    PUT(alloc, mp_obj_new_int(r->alloc));
    PUT(caps, mp_obj_len(r->caps));
#undef PUT
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_1(record_row_obj, record_row);

// Attributes: each field of modmesh.h by its name, read and written; never deleted.
static void record_attr(mp_obj_t self, qstr attr, mp_obj_t *dest) {
    mesh_record_t *r = MP_OBJ_TO_PTR(self);
    mp_obj_t *obj = NULL;
    mp_int_t *num = NULL;
    switch (attr) {
#define CASE_OBJECT(f) \
    case MP_QSTR_##f:  \
        obj = &r->f;   \
        break;
#define CASE_INT(f)   \
    case MP_QSTR_##f: \
        num = &r->f;  \
        break;
        MESH_RECORD_OBJECTS(CASE_OBJECT)
        MESH_RECORD_INTS(CASE_INT)
#undef CASE_OBJECT
#undef CASE_INT
        case MP_QSTR_rng:
            if (dest[0] == MP_OBJ_NULL) {
                dest[0] = mp_obj_new_int_from_uint(r->rng);
            } else if (dest[1] != MP_OBJ_NULL) {
                r->rng = (uint32_t)mp_obj_get_int_truncated(dest[1]);
                dest[0] = MP_OBJ_NULL;
            }
            return;
        case MP_QSTR_retire_asked:
            if (dest[0] == MP_OBJ_NULL) {
                dest[0] = mp_obj_new_bool(r->retire_asked);
            } else if (dest[1] != MP_OBJ_NULL) {
                r->retire_asked = mp_obj_is_true(dest[1]);
                dest[0] = MP_OBJ_NULL;
            }
            return;
        default:
            dest[1] = MP_OBJ_SENTINEL;  // a method, from locals_dict
            return;
    }
    if (dest[0] == MP_OBJ_NULL) {
        if (obj == &r->log) {
            made(obj);
        } else if (obj == &r->keys && *obj == MP_OBJ_NULL) {
            *obj = mp_obj_new_dict(0);
        }
        dest[0] = obj != NULL ? *obj : mp_obj_new_int(*num);
    } else if (dest[1] != MP_OBJ_NULL) {
        if (obj != NULL) {
            *obj = dest[1];
            if (obj == &r->attend) {
                r->seen_attend.kind = MESH_SEEN_NOT_YET;
            } else if (obj == &r->wake) {
                r->seen_wake.kind = MESH_SEEN_NOT_YET;
            } else if (obj == &r->budget) {
                r->limits.known = false;
            }
        } else {
            *num = mp_obj_get_int(dest[1]);
        }
        dest[0] = MP_OBJ_NULL;
    }
}

static void record_print(const mp_print_t *print, mp_obj_t self, mp_print_kind_t kind) {
    (void)kind;
    mesh_record_t *r = MP_OBJ_TO_PTR(self);
    mp_printf(print, "<Record %d %q>", (int)r->id,
              mp_obj_is_qstr(r->state) ? MP_OBJ_QSTR_VALUE(r->state) : MP_QSTR_);
}

static const mp_rom_map_elem_t record_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_next_rand), MP_ROM_PTR(&record_next_rand_obj) },
    { MP_ROM_QSTR(MP_QSTR_add_log), MP_ROM_PTR(&record_add_log_obj) },
    { MP_ROM_QSTR(MP_QSTR_row), MP_ROM_PTR(&record_row_obj) },
};
static MP_DEFINE_CONST_DICT(record_locals_dict, record_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(mesh_type_Record, MP_QSTR_Record, MP_TYPE_FLAG_NONE, make_new,
                         record_make_new, print, record_print, attr, record_attr, locals_dict,
                         &record_locals_dict);
