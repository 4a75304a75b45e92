// SPDX-License-Identifier: MIT
// `_field.Field` methods on values: deposit, sense, last depositor, neighbourhood,
// gradient, region, total, top-k, tick and its mass bookkeeping, bulk reads.
#include <math.h>

#include "modfield.h"

static const field_flavour_t *flavour_of(field_t *f, mp_obj_t o, uint32_t *idx) {
    *idx = modfield_flavour(f, o);
    return &f->fl[*idx];
}

static const field_flavour_t *grid_of(field_t *f, mp_obj_t o, uint32_t *idx) {
    const field_flavour_t *fl = flavour_of(f, o, idx);
    if (fl->kind != FIELD_GRID) {
        mp_raise_msg_varg(&mp_type_FieldError, MP_ERROR_TEXT("'%s' is keyed, not a grid"),
                          fl->name);
    }
    return fl;
}

// deposit(flavour, where, amount[, who]): pending until the next tick().
static mp_obj_t deposit(size_t n_args, const mp_obj_t *args) {
    field_t *f = &modfield_self(args[0])->f;
    uint32_t i;
    const field_flavour_t *fl = flavour_of(f, args[1], &i);
    float amount = (float)mp_obj_get_float(args[3]);
    uint32_t who = n_args > 4 ? modfield_who(args[4]) : MODFIELD_REPL_ID;
    if (fl->kind == FIELD_GRID) {
        uint32_t x, y;
        modfield_xy(fl, args[2], &x, &y);
        modfield_check(field_deposit_xy(f, i, x, y, amount, who), "deposit");
    } else {
        size_t n;
        const uint8_t *k = modfield_key(args[2], &n);
        modfield_check(field_deposit_key(f, i, k, n, amount, who), "deposit");
    }
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_deposit_obj, 4, 5, deposit);

// sense(flavour, where) -> committed value (a key never deposited reads 0.0).
static mp_obj_t sense(mp_obj_t self_in, mp_obj_t fl_in, mp_obj_t where) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i;
    const field_flavour_t *fl = flavour_of(f, fl_in, &i);
    float v;
    if (fl->kind == FIELD_GRID) {
        uint32_t x, y;
        modfield_xy(fl, where, &x, &y);
        modfield_check(field_sense_xy(f, i, x, y, &v), "sense");
    } else {
        size_t n;
        const uint8_t *k = modfield_key(where, &n);
        modfield_check(field_sense_key(f, i, k, n, &v), "sense");
    }
    return mp_obj_new_float(v);
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_sense_obj, sense);

// last(flavour, where) -> id of the last depositor there, 0 = nobody.
static mp_obj_t last(mp_obj_t self_in, mp_obj_t fl_in, mp_obj_t where) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i, who;
    const field_flavour_t *fl = flavour_of(f, fl_in, &i);
    if (fl->kind == FIELD_GRID) {
        uint32_t x, y;
        modfield_xy(fl, where, &x, &y);
        modfield_check(field_last_xy(f, i, x, y, &who), "last");
    } else {
        size_t n;
        const uint8_t *k = modfield_key(where, &n);
        modfield_check(field_last_key(f, i, k, n, &who), "last");
    }
    return mp_obj_new_int_from_uint(who);
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_last_obj, last);

static void cell_args(field_t *f, const mp_obj_t *args, uint32_t *i, uint32_t *x, uint32_t *y) {
    const field_flavour_t *fl = grid_of(f, args[1], i);
    mp_obj_t xy[2] = { args[2], args[3] };
    modfield_xy(fl, mp_obj_new_tuple(2, xy), x, y);
}

// neighbourhood(flavour, x, y) -> 9 values row-major from (x-1, y-1); None off the grid.
static mp_obj_t neighbourhood(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    field_t *f = &modfield_self(args[0])->f;
    uint32_t i, x, y, mask;
    cell_args(f, args, &i, &x, &y);
    float v[9];
    modfield_check(field_neighbourhood(f, i, x, y, v, &mask), "neighbourhood");
    mp_obj_t out[9];
    for (int k = 0; k < 9; k++) {
        out[k] = (mask >> k) & 1 ? mp_obj_new_float(v[k]) : mp_const_none;
    }
    return mp_obj_new_tuple(9, out);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_neighbourhood_obj, 4, 4, neighbourhood);

// gradient(flavour, x, y) -> (dx, dy) towards the highest higher neighbour, or (0, 0).
static mp_obj_t gradient(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    field_t *f = &modfield_self(args[0])->f;
    uint32_t i, x, y;
    cell_args(f, args, &i, &x, &y);
    int dx, dy;
    modfield_check(field_gradient(f, i, x, y, &dx, &dy), "gradient");
    mp_obj_t out[2] = { MP_OBJ_NEW_SMALL_INT(dx), MP_OBJ_NEW_SMALL_INT(dy) };
    return mp_obj_new_tuple(2, out);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_gradient_obj, 4, 4, gradient);

// region(flavour, x0, y0, w, h) -> (sum, max, (x, y) of the first maximum).
static mp_obj_t region(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    field_t *f = &modfield_self(args[0])->f;
    uint32_t i;
    const field_flavour_t *fl = grid_of(f, args[1], &i);
    double sum;
    float mx;
    uint32_t arg;
    modfield_check(field_region(f, i, modfield_u32(args[2], "x0"), modfield_u32(args[3], "y0"),
                                modfield_u32(args[4], "w"), modfield_u32(args[5], "h"), &sum, &mx,
                                &arg),
                   "region");
    mp_obj_t out[3] = { mp_obj_new_float(sum), mp_obj_new_float(mx),
                        modfield_where(fl, arg, NULL, 0) };
    return mp_obj_new_tuple(3, out);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_region_obj, 6, 6, region);

static mp_obj_t total(mp_obj_t self_in, mp_obj_t fl_in) {
    field_t *f = &modfield_self(self_in)->f;
    double sum;
    modfield_check(field_total(f, modfield_flavour(f, fl_in), &sum), "total");
    return mp_obj_new_float(sum);
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_total_obj, total);

#define TOPK_ON_STACK 16

static void free_hits(field_hit_t *hits, field_hit_t *stack_hits, uint32_t k) {
    if (hits != stack_hits) {
        m_del(field_hit_t, hits, k);
    }
}

// topk(flavour, k) -> [(where, value)], largest first; zeros never listed.
static mp_obj_t topk(mp_obj_t self_in, mp_obj_t fl_in, mp_obj_t k_in) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i;
    const field_flavour_t *fl = flavour_of(f, fl_in, &i);
    uint32_t k = modfield_u32(k_in, "k");
    uint32_t most = fl->kind == FIELD_GRID ? fl->w * fl->h : fl->count;
    if (k > most) {
        k = most;
    }
    // The usual k (a Locus's ctx.top) fits on the stack: one GC block fewer to find and
    // give back on every call.
    field_hit_t stack_hits[TOPK_ON_STACK];
    field_hit_t *hits = k <= TOPK_ON_STACK ? stack_hits : m_new(field_hit_t, k);
    uint32_t n = 0;
    int rc = field_topk(f, i, k, hits, &n);
    if (rc != FIELD_OK) {
        free_hits(hits, stack_hits, k);
        modfield_raise(rc, "topk");
    }
    mp_obj_t list = mp_obj_new_list(n, NULL);
    mp_obj_list_t *l = MP_OBJ_TO_PTR(list);
    for (uint32_t j = 0; j < n; j++) {
        mp_obj_t t[2] = { modfield_where(fl, hits[j].index, hits[j].key, hits[j].keylen),
                          mp_obj_new_float(hits[j].value) };
        l->items[j] = mp_obj_new_tuple(2, t);
    }
    free_hits(hits, stack_hits, k);
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_topk_obj, topk);

// tick([n]) -> tick count after n ticks. With set_check(True), a broken mass invariant
// raises FieldError after the tick that broke it (that tick stays applied).
static mp_obj_t tick(size_t n_args, const mp_obj_t *args) {
    field_t *f = &modfield_self(args[0])->f;
    mp_int_t n = n_args > 1 ? mp_obj_get_int(args[1]) : 1;
    for (mp_int_t j = 0; j < n; j++) {
        modfield_check(field_tick(f), "tick");
    }
    return mp_obj_new_int_from_uint(f->tick);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_tick_obj, 1, 2, tick);

static mp_obj_t check_invariant(mp_obj_t self_in, mp_obj_t fl_in, mp_obj_t tol) {
    field_t *f = &modfield_self(self_in)->f;
    int rc = field_check_invariant(f, modfield_flavour(f, fl_in), mp_obj_get_float(tol));
    if (rc != FIELD_OK && rc != FIELD_ERR_INVARIANT) {
        modfield_raise(rc, "check_invariant");
    }
    return mp_obj_new_bool(rc == FIELD_OK);
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_check_invariant_obj, check_invariant);

// tick_stats(flavour) -> (before, deposited, clipped, dropped, after) of the last tick.
static mp_obj_t tick_stats(mp_obj_t self_in, mp_obj_t fl_in) {
    field_t *f = &modfield_self(self_in)->f;
    const field_tick_stats_t *s = &f->fl[modfield_flavour(f, fl_in)].stats;
    mp_obj_t t[5] = { mp_obj_new_float(s->before), mp_obj_new_float(s->deposited),
                      mp_obj_new_float(s->clipped), mp_obj_new_float(s->dropped),
                      mp_obj_new_float(s->after) };
    return mp_obj_new_tuple(5, t);
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_tick_stats_obj, tick_stats);

// grid_bytes(flavour) -> the committed values as W*H little-endian float32, row-major
// (x86-64 is little-endian, so this is a plain copy).
static mp_obj_t grid_bytes(mp_obj_t self_in, mp_obj_t fl_in) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i;
    const field_flavour_t *fl = grid_of(f, fl_in, &i);
    return mp_obj_new_bytes((const byte *)fl->cells, (size_t)fl->w * fl->h * sizeof(float));
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_grid_bytes_obj, grid_bytes);

// keyed_items(flavour) -> [(key, value, pending, last depositor)] in key order.
static mp_obj_t keyed_items(mp_obj_t self_in, mp_obj_t fl_in) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i;
    const field_flavour_t *fl = flavour_of(f, fl_in, &i);
    if (fl->kind != FIELD_KEYED) {
        mp_raise_msg_varg(&mp_type_FieldError, MP_ERROR_TEXT("'%s' is a grid, not keyed"),
                          fl->name);
    }
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t j = 0; j < fl->count; j++) {
        const field_entry_t *e = &fl->entries[j];
        mp_obj_t t[4] = { mp_obj_new_bytes(e->key, e->len), mp_obj_new_float(e->value),
                          mp_obj_new_float(e->pending), mp_obj_new_int_from_uint(e->last) };
        mp_obj_list_append(list, mp_obj_new_tuple(4, t));
    }
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_keyed_items_obj, keyed_items);

// entropy(flavour) -> Shannon entropy in bits of the values read as a distribution
// (0 for an empty flavour; log2(cells) for a uniform grid). Sums in double.
static mp_obj_t entropy(mp_obj_t self_in, mp_obj_t fl_in) {
    field_t *f = &modfield_self(self_in)->f;
    uint32_t i;
    const field_flavour_t *fl = flavour_of(f, fl_in, &i);
    size_t n = fl->kind == FIELD_GRID ? (size_t)fl->w * fl->h : fl->count;
    double t = 0.0, s = 0.0;
    for (size_t j = 0; j < n; j++) {
        double v = fl->kind == FIELD_GRID ? fl->cells[j] : fl->entries[j].value;
        if (v > 0.0) {
            t += v;
            s += v * log2(v);
        }
    }
    return mp_obj_new_float(t > 0.0 ? log2(t) - s / t : 0.0);
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_entropy_obj, entropy);
