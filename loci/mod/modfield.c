// SPDX-License-Identifier: MIT
// The `_field` MicroPython module: the Field type (set-up, flavours, status), the
// exception mapping and argument helpers. Operations are in modfield_ops.c and
// modfield_prov.c; the Python API around it is loci/python/field.py.
#include <string.h>

#include "py/gc.h"
#include "py/objexcept.h"
#include "py/objstr.h"

#include "modfield.h"

MP_DEFINE_EXCEPTION(FieldError, ValueError)

// ---- errors and arguments -------------------------------------------------------------

NORETURN void modfield_raise(int rc, const char *op) {
    const mp_obj_type_t *t = &mp_type_FieldError;
    switch (rc) {
        case FIELD_ERR_FLAVOUR:
            t = &mp_type_KeyError;
            break;
        case FIELD_ERR_RANGE:
            t = &mp_type_IndexError;
            break;
        case FIELD_ERR_NOMEM:
            t = &mp_type_MemoryError;
            break;
        default:
            break;
    }
    mp_raise_msg_varg(t, MP_ERROR_TEXT("%s: %s"), op, field_err_name(rc));
}

mp_field_t *modfield_self(mp_obj_t o) {
    return MP_OBJ_TO_PTR(mp_obj_cast_to_native_base(o, MP_OBJ_FROM_PTR(&mp_type_Field)));
}

uint32_t modfield_flavour(const field_t *f, mp_obj_t o) {
    if (mp_obj_is_int(o)) {
        mp_int_t i = mp_obj_get_int(o);
        if (i < 0 || (mp_uint_t)i >= f->nflavours) {
            mp_raise_msg_varg(&mp_type_KeyError, MP_ERROR_TEXT("no flavour number %d"), (int)i);
        }
        return (uint32_t)i;
    }
    if (!mp_obj_is_str(o)) {
        mp_raise_TypeError(MP_ERROR_TEXT("flavour must be a name (str) or an index (int)"));
    }
    const char *name = mp_obj_str_get_str(o);
    uint32_t idx;
    if (field_find(f, name, &idx) != FIELD_OK) {
        mp_raise_msg_varg(&mp_type_KeyError, MP_ERROR_TEXT("unknown flavour '%s'"), name);
    }
    return idx;
}

uint32_t modfield_u32(mp_obj_t o, const char *what) {
    mp_int_t v = mp_obj_get_int(o);
    if (v < 0 || (uint64_t)v > 0xffffffffu) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("%s %d out of range"), what, (int)v);
    }
    return (uint32_t)v;
}

void modfield_xy(const field_flavour_t *fl, mp_obj_t where, uint32_t *x, uint32_t *y) {
    if (fl->kind != FIELD_GRID) {
        mp_raise_msg_varg(&mp_type_FieldError, MP_ERROR_TEXT("'%s' is keyed: give a key"),
                          fl->name);
    }
    mp_int_t xi, yi;
    if (mp_obj_is_int(where)) {
        mp_int_t c = mp_obj_get_int(where);
        if (c < 0 || (uint64_t)c >= (uint64_t)fl->w * fl->h) {
            mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("cell %d outside '%s' (%ux%u)"),
                              (int)c, fl->name, (unsigned)fl->w, (unsigned)fl->h);
        }
        *x = (uint32_t)(c % fl->w);
        *y = (uint32_t)(c / fl->w);
        return;
    }
    size_t n;
    mp_obj_t *items;
    if (!mp_obj_is_type(where, &mp_type_tuple) && !mp_obj_is_type(where, &mp_type_list)) {
        mp_raise_msg_varg(&mp_type_TypeError,
                          MP_ERROR_TEXT("'%s' is a grid: give (x, y) or a cell index"), fl->name);
    }
    mp_obj_get_array(where, &n, &items);
    if (n != 2) {
        mp_raise_TypeError(MP_ERROR_TEXT("a cell is (x, y)"));
    }
    xi = mp_obj_get_int(items[0]);
    yi = mp_obj_get_int(items[1]);
    if (xi < 0 || yi < 0 || (uint64_t)xi >= fl->w || (uint64_t)yi >= fl->h) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("cell (%d, %d) outside '%s' (%ux%u)"),
                          (int)xi, (int)yi, fl->name, (unsigned)fl->w, (unsigned)fl->h);
    }
    *x = (uint32_t)xi;
    *y = (uint32_t)yi;
}

const uint8_t *modfield_key(mp_obj_t o, size_t *len) {
    if (!mp_obj_is_str_or_bytes(o)) {
        mp_raise_TypeError(MP_ERROR_TEXT("a key is str or bytes"));
    }
    const uint8_t *k = (const uint8_t *)mp_obj_str_get_data(o, len);
    if (*len == 0 || *len > FIELD_KEY_MAX) {
        mp_raise_msg_varg(&mp_type_FieldError, MP_ERROR_TEXT("key must be 1..%d bytes, got %u"),
                          FIELD_KEY_MAX, (unsigned)*len);
    }
    return k;
}

uint32_t modfield_who(mp_obj_t o) {
    if (mp_obj_is_str(o) && strcmp(mp_obj_str_get_str(o), "repl") == 0) {
        return MODFIELD_REPL_ID;
    }
    mp_int_t v = mp_obj_get_int(o);
    if (v <= 0 || (uint64_t)v > 0xffffffffu) {
        mp_raise_msg_varg(&mp_type_FieldError,
                          MP_ERROR_TEXT("depositor id must be 1..2**32-1 or 'repl', got %d"),
                          (int)v);
    }
    return (uint32_t)v;
}

mp_obj_t modfield_where(const field_flavour_t *fl, uint32_t index, const uint8_t *key,
                        uint8_t keylen) {
    if (fl->kind == FIELD_GRID) {
        mp_obj_t xy[2] = { MP_OBJ_NEW_SMALL_INT(index % fl->w),
                           MP_OBJ_NEW_SMALL_INT(index / fl->w) };
        return mp_obj_new_tuple(2, xy);
    }
    return mp_obj_new_bytes(key, keylen);
}

// ---- the Field type: construction and flavours ------------------------------------------

// Field(arena_bytes, journal_cap, depositor_cap, watch_cap): an empty field whose arena is
// one GC block of arena_bytes (loci/python/field.py sizes it from the declared flavours).
static mp_obj_t field_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
                               const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 4, 4, false);
    mp_int_t size = mp_obj_get_int(args[0]);
    uint32_t jcap = modfield_u32(args[1], "journal capacity");
    uint32_t dcap = modfield_u32(args[2], "depositor capacity");
    uint32_t wcap = modfield_u32(args[3], "watch capacity");
    if (size <= 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("arena size must be > 0"));
    }
    mp_field_t *o = mp_obj_malloc(mp_field_t, type);
    uint8_t *arena = m_new_maybe(uint8_t, (size_t)size);
    if (arena == NULL) {
        gc_info_t info;
        gc_info(&info);
        mp_raise_msg_varg(&mp_type_MemoryError,
                          MP_ERROR_TEXT("field needs %u bytes; the heap's largest free run is %u"),
                          (unsigned)size, (unsigned)(info.max_free * MICROPY_BYTES_PER_GC_BLOCK));
    }
    int rc = field_init(&o->f, arena, (size_t)size, jcap, dcap, wcap);
    if (rc != FIELD_OK) {
        m_del(uint8_t, arena, (size_t)size);
        modfield_raise(rc, "Field");
    }
    return MP_OBJ_FROM_PTR(o);
}

static void get_params(mp_obj_t e, mp_obj_t g, mp_obj_t cap, mp_obj_t mn, field_params_t *p) {
    p->evaporation = (float)mp_obj_get_float(e);
    p->diffusion = (float)mp_obj_get_float(g);
    p->cap = (float)mp_obj_get_float(cap);
    p->min = (float)mp_obj_get_float(mn);
}

// add_grid(name, w, h, E, G, cap, min) -> flavour index
static mp_obj_t field_add_grid_m(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_field_t *s = modfield_self(args[0]);
    field_params_t p;
    get_params(args[4], args[5], args[6], args[7], &p);
    uint32_t idx;
    modfield_check(field_add_grid(&s->f, mp_obj_str_get_str(args[1]),
                                  modfield_u32(args[2], "width"), modfield_u32(args[3], "height"),
                                  &p, &idx),
                   "add_grid");
    return MP_OBJ_NEW_SMALL_INT(idx);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(field_add_grid_obj, 8, 8, field_add_grid_m);

// add_keyed(name, capacity, E, cap, min) -> flavour index
static mp_obj_t field_add_keyed_m(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_field_t *s = modfield_self(args[0]);
    field_params_t p;
    get_params(args[3], MP_OBJ_NEW_SMALL_INT(0), args[4], args[5], &p);
    uint32_t idx;
    modfield_check(field_add_keyed(&s->f, mp_obj_str_get_str(args[1]),
                                   modfield_u32(args[2], "capacity"), &p, &idx),
                   "add_keyed");
    return MP_OBJ_NEW_SMALL_INT(idx);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(field_add_keyed_obj, 6, 6, field_add_keyed_m);

// flavours() -> [(name, kind, w, h, E, G, cap, min, count)]; kind 'grid' or 'keyed'.
static mp_obj_t field_flavours(mp_obj_t self_in) {
    field_t *f = &modfield_self(self_in)->f;
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = 0; i < f->nflavours; i++) {
        const field_flavour_t *fl = &f->fl[i];
        mp_obj_t t[9] = {
            mp_obj_new_str(fl->name, fl->name_len),
            MP_OBJ_NEW_QSTR(fl->kind == FIELD_GRID ? MP_QSTR_grid : MP_QSTR_keyed),
            mp_obj_new_int_from_uint(fl->w),
            mp_obj_new_int_from_uint(fl->h),
            mp_obj_new_float(fl->p.evaporation),
            mp_obj_new_float(fl->p.diffusion),
            mp_obj_new_float(fl->p.cap),
            mp_obj_new_float(fl->p.min),
            mp_obj_new_int_from_uint(fl->kind == FIELD_GRID ? fl->w * fl->h : fl->count),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(9, t));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_1(field_flavours_obj, field_flavours);

// info() -> dict of the counters a console or a test wants at a glance.
static mp_obj_t field_info(mp_obj_t self_in) {
    field_t *f = &modfield_self(self_in)->f;
    mp_obj_t d = mp_obj_new_dict(10);
#define PUT(k, v) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_##k), mp_obj_new_int_from_uint(v))
    PUT(tick, f->tick);
    PUT(journal_next, f->journal_next);
    PUT(journal_oldest, field_journal_oldest(f));
    PUT(journal_lost, f->journal_lost);
    PUT(journal_cap, f->journal_cap);
    PUT(arena_used, f->arena_used);
    PUT(arena_size, f->arena_size);
    PUT(depositors, f->deps_count);
    PUT(depositor_cap, f->deps_cap);
    PUT(watch_cap, f->watch_cap);
#undef PUT
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_1(field_info_obj, field_info);

// check(on[, rel_tol]): make every tick() verify the mass invariant (FieldError if not).
static mp_obj_t field_set_check(size_t n_args, const mp_obj_t *args) {
    field_t *f = &modfield_self(args[0])->f;
    f->check_invariant = mp_obj_is_true(args[1]);
    if (n_args > 2) {
        f->invariant_tol = mp_obj_get_float(args[2]);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(field_set_check_obj, 2, 3, field_set_check);

static const mp_rom_map_elem_t field_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_add_grid), MP_ROM_PTR(&field_add_grid_obj) },
    { MP_ROM_QSTR(MP_QSTR_add_keyed), MP_ROM_PTR(&field_add_keyed_obj) },
    { MP_ROM_QSTR(MP_QSTR_flavours), MP_ROM_PTR(&field_flavours_obj) },
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&field_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_check), MP_ROM_PTR(&field_set_check_obj) },
    { MP_ROM_QSTR(MP_QSTR_deposit), MP_ROM_PTR(&modfield_deposit_obj) },
    { MP_ROM_QSTR(MP_QSTR_sense), MP_ROM_PTR(&modfield_sense_obj) },
    { MP_ROM_QSTR(MP_QSTR_last), MP_ROM_PTR(&modfield_last_obj) },
    { MP_ROM_QSTR(MP_QSTR_neighbourhood), MP_ROM_PTR(&modfield_neighbourhood_obj) },
    { MP_ROM_QSTR(MP_QSTR_gradient), MP_ROM_PTR(&modfield_gradient_obj) },
    { MP_ROM_QSTR(MP_QSTR_region), MP_ROM_PTR(&modfield_region_obj) },
    { MP_ROM_QSTR(MP_QSTR_total), MP_ROM_PTR(&modfield_total_obj) },
    { MP_ROM_QSTR(MP_QSTR_topk), MP_ROM_PTR(&modfield_topk_obj) },
    { MP_ROM_QSTR(MP_QSTR_tick), MP_ROM_PTR(&modfield_tick_obj) },
    { MP_ROM_QSTR(MP_QSTR_check_invariant), MP_ROM_PTR(&modfield_check_invariant_obj) },
    { MP_ROM_QSTR(MP_QSTR_tick_stats), MP_ROM_PTR(&modfield_tick_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_grid_bytes), MP_ROM_PTR(&modfield_grid_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_keyed_items), MP_ROM_PTR(&modfield_keyed_items_obj) },
    { MP_ROM_QSTR(MP_QSTR_entropy), MP_ROM_PTR(&modfield_entropy_obj) },
    { MP_ROM_QSTR(MP_QSTR_journal), MP_ROM_PTR(&modfield_journal_obj) },
    { MP_ROM_QSTR(MP_QSTR_depositors), MP_ROM_PTR(&modfield_depositors_obj) },
    { MP_ROM_QSTR(MP_QSTR_watch), MP_ROM_PTR(&modfield_watch_obj) },
    { MP_ROM_QSTR(MP_QSTR_unwatch), MP_ROM_PTR(&modfield_unwatch_obj) },
    { MP_ROM_QSTR(MP_QSTR_watches), MP_ROM_PTR(&modfield_watches_obj) },
    { MP_ROM_QSTR(MP_QSTR_snapshot), MP_ROM_PTR(&modfield_snapshot_obj) },
    { MP_ROM_QSTR(MP_QSTR_digest), MP_ROM_PTR(&modfield_digest_obj) },
    { MP_ROM_QSTR(MP_QSTR_load), MP_ROM_PTR(&modfield_restore_obj) },
    { MP_ROM_QSTR(MP_QSTR_replay_from), MP_ROM_PTR(&modfield_replay_obj) },
    { MP_ROM_QSTR(MP_QSTR_journal_bytes), MP_ROM_PTR(&modfield_journal_bytes_obj) },
    { MP_ROM_QSTR(MP_QSTR_replay_bytes), MP_ROM_PTR(&modfield_replay_bytes_obj) },
};
static MP_DEFINE_CONST_DICT(field_locals_dict, field_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(mp_type_Field, MP_QSTR_Field, MP_TYPE_FLAG_NONE, make_new, field_make_new,
                         locals_dict, &field_locals_dict);

// ---- module-level sizing helpers ----------------------------------------------------

static mp_obj_t mod_base_size(mp_obj_t j, mp_obj_t d, mp_obj_t w) {
    return mp_obj_new_int_from_uint(field_base_size(modfield_u32(j, "journal capacity"),
                                                    modfield_u32(d, "depositor capacity"),
                                                    modfield_u32(w, "watch capacity")));
}
static MP_DEFINE_CONST_FUN_OBJ_3(mod_base_size_obj, mod_base_size);

static mp_obj_t mod_grid_size(mp_obj_t w, mp_obj_t h) {
    return mp_obj_new_int_from_uint(
        field_grid_size(modfield_u32(w, "width"), modfield_u32(h, "height")));
}
static MP_DEFINE_CONST_FUN_OBJ_2(mod_grid_size_obj, mod_grid_size);

static mp_obj_t mod_keyed_size(mp_obj_t c) {
    return mp_obj_new_int_from_uint(field_keyed_size(modfield_u32(c, "capacity")));
}
static MP_DEFINE_CONST_FUN_OBJ_1(mod_keyed_size_obj, mod_keyed_size);

static const mp_rom_map_elem_t field_module_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__field) },
    { MP_ROM_QSTR(MP_QSTR_Field), MP_ROM_PTR(&mp_type_Field) },
    { MP_ROM_QSTR(MP_QSTR_FieldError), MP_ROM_PTR(&mp_type_FieldError) },
    { MP_ROM_QSTR(MP_QSTR_base_size), MP_ROM_PTR(&mod_base_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_grid_size), MP_ROM_PTR(&mod_grid_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_keyed_size), MP_ROM_PTR(&mod_keyed_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_snap_info), MP_ROM_PTR(&modfield_snap_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_snap_layout), MP_ROM_PTR(&modfield_snap_layout_obj) },
    { MP_ROM_QSTR(MP_QSTR_diff), MP_ROM_PTR(&modfield_diff_obj) },
    { MP_ROM_QSTR(MP_QSTR_journal_info), MP_ROM_PTR(&modfield_journal_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_ALIGN), MP_ROM_INT(FIELD_ALIGN) },
    { MP_ROM_QSTR(MP_QSTR_MAX_FLAVOURS), MP_ROM_INT(FIELD_MAX_FLAVOURS) },
    { MP_ROM_QSTR(MP_QSTR_KEYED_MAX), MP_ROM_INT(FIELD_KEYED_MAX_CAP) },
    { MP_ROM_QSTR(MP_QSTR_REPL), MP_ROM_INT(MODFIELD_REPL_ID) },
};
static MP_DEFINE_CONST_DICT(field_module_globals, field_module_table);

const mp_obj_module_t mp_module_field = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&field_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__field, mp_module_field);
