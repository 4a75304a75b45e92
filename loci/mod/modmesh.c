// SPDX-License-Identifier: MIT
// The `_mesh` MicroPython module: the hot part of Mesh.round (loci/python/mesh.py) in C.
// ready(mesh, rn, age_weight, patience) walks mesh.loci in the dict's own order, sets
// each record's state (backoff or live), skips a Locus whose wake condition is not met,
// computes its activation from the trace it attends to plus its age, draws its tie-break
// from mesh.rng (xorshift32, the same draws in the same order as the Python it
// replaces), and returns the records sorted by (-activation, draw). Draws never repeat
// within 2**32 - 1, so no two keys are equal and the order is the one Python's sort of
// those pairs gives. A condition or attention that is not a plain cell (a key, a region)
// goes to mesh._value, the Python definition, so the meaning stays in one place.
//
// steps(mesh, ready, now, order) runs those records' steps in that order as
// Mesh._step(r, now) would, each under its budget (vm/budget's budget_run, the C that
// `_budget.run` calls), with the same accounting; Mesh._after_step (children to start,
// strikes, retirement) is called only when it has something to do, and Mesh._step
// itself for anything unusual (no step function, a budgeted call already running).
#include <string.h>

#include "py/nlr.h"
#include "py/obj.h"
#include "py/runtime.h"

#include "budget.h"
#include "modfield.h"

typedef struct {
    mp_float_t key;  // -(activation + age_weight * age)
    uint32_t draw;
    mp_obj_t rec;
} ready_t;

static mp_obj_t dict_get(mp_obj_t d, qstr k) {
    mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(d), MP_OBJ_NEW_QSTR(k), MP_MAP_LOOKUP);
    return e ? e->value : MP_OBJ_NULL;
}

// The value a Locus attends to (or waits on), as Mesh._value(a, pos) gives it.
static mp_float_t value(mp_obj_t mesh, mp_obj_t field, mp_obj_t a, mp_obj_t pos) {
    if (a == mp_const_none) {
        return 0;
    }
    if (mp_obj_is_exact_type(a, &mp_type_dict) && !dict_get(a, MP_QSTR_key) &&
        !dict_get(a, MP_QSTR_region)) {
        mp_obj_t fl = dict_get(a, MP_QSTR_flavour);
        mp_obj_t at = pos != mp_const_none ? pos : dict_get(a, MP_QSTR_at);
        if (fl != MP_OBJ_NULL && at != MP_OBJ_NULL) {
            // The C method field.sense would run (field.Field does not override it).
            mp_obj_t args[3] = { field, fl, at };
            return mp_obj_get_float(
                mp_call_function_n_kw(MP_OBJ_FROM_PTR(&modfield_sense_obj), 3, 0, args));
        }
    }
    mp_obj_t dest[4];
    mp_load_method(mesh, MP_QSTR__value, dest);
    dest[2] = a;
    dest[3] = pos;
    return mp_obj_get_float(mp_call_method_n_kw(2, 0, dest));
}

static bool before(const ready_t *a, const ready_t *b) {
    return a->key < b->key || (a->key == b->key && a->draw < b->draw);
}

// Bottom-up merge sort of n entries, tmp as large as v.
static void sort_ready(ready_t *v, ready_t *tmp, size_t n) {
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                tmp[k++] = before(&v[j], &v[i]) ? v[j++] : v[i++];
            }
            while (i < mid) {
                tmp[k++] = v[i++];
            }
            while (j < hi) {
                tmp[k++] = v[j++];
            }
        }
        memcpy(v, tmp, n * sizeof(*v));
    }
}

static mp_obj_t mesh_ready(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_obj_t mesh = args[0];
    mp_int_t rn = mp_obj_get_int(args[1]);
    mp_float_t age_weight = mp_obj_get_float(args[2]);
    mp_int_t patience = mp_obj_get_int(args[3]);
    mp_obj_t loci = mp_load_attr(mesh, MP_QSTR_loci);
    mp_obj_t field = mp_load_attr(mesh, MP_QSTR_field);
    if (!mp_obj_is_type(loci, &mp_type_dict)) {
        mp_raise_TypeError(MP_ERROR_TEXT("ready: mesh.loci is not a dict"));
    }
    mp_map_t *map = mp_obj_dict_get_map(loci);
    uint32_t x = (uint32_t)mp_obj_get_int_truncated(mp_load_attr(mesh, MP_QSTR_rng));
    size_t cap = map->used ? map->used : 1;
    ready_t *v = m_new(ready_t, 2 * cap);
    size_t n = 0;
    mp_obj_t live = MP_OBJ_NEW_QSTR(MP_QSTR_live);
    mp_obj_t retired = MP_OBJ_NEW_QSTR(MP_QSTR_retired);
    for (size_t i = 0; i < map->alloc; i++) {
        if (!mp_map_slot_is_filled(map, i)) {
            continue;
        }
        mp_obj_t r = map->table[i].value;
        mp_obj_t st = mp_load_attr(r, MP_QSTR_state);
        if (st == retired || mp_obj_equal(st, retired)) {
            continue;
        }
        if (mp_obj_get_int(mp_load_attr(r, MP_QSTR_backoff_until)) > rn) {
            mp_store_attr(r, MP_QSTR_state, MP_OBJ_NEW_QSTR(MP_QSTR_backoff));
            continue;
        }
        mp_store_attr(r, MP_QSTR_state, live);
        mp_int_t age = rn - mp_obj_get_int(mp_load_attr(r, MP_QSTR_last_round));
        mp_obj_t w = mp_load_attr(r, MP_QSTR_wake);
        if (w != mp_const_none && age < patience) {
            mp_obj_t above = mp_obj_subscr(w, MP_OBJ_NEW_QSTR(MP_QSTR_above), MP_OBJ_SENTINEL);
            if (value(mesh, field, w, mp_const_none) <= mp_obj_get_float(above)) {
                continue;
            }
        }
        mp_float_t act =
            value(mesh, field, mp_load_attr(r, MP_QSTR_attend), mp_load_attr(r, MP_QSTR_pos));
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (n == cap) {
            // Never past the array, even if a Python fallback added Loci meanwhile.
            v = m_renew(ready_t, v, 2 * cap, 4 * cap);
            cap *= 2;
        }
        v[n].key = -(act + age_weight * (mp_float_t)age);
        v[n].draw = x;
        v[n].rec = r;
        n++;
    }
    mp_store_attr(mesh, MP_QSTR_rng, mp_obj_new_int_from_uint(x));
    sort_ready(v, v + cap, n);
    mp_obj_list_t *out = MP_OBJ_TO_PTR(mp_obj_new_list(n, NULL));
    for (size_t i = 0; i < n; i++) {
        out->items[i] = v[i].rec;
    }
    m_del(ready_t, v, 2 * cap);
    return MP_OBJ_FROM_PTR(out);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_ready_obj, 4, 4, mesh_ready);

static mp_obj_t call_method(mp_obj_t obj, qstr name, size_t n, const mp_obj_t *args) {
    mp_obj_t dest[2 + 4];
    mp_load_method(obj, name, dest);
    for (size_t i = 0; i < n; i++) {
        dest[2 + i] = args[i];
    }
    return mp_call_method_n_kw(n, 0, dest);
}

// obj.name += by, with Python's int arithmetic.
static void add_attr(mp_obj_t obj, qstr name, mp_obj_t by) {
    mp_store_attr(obj, name, mp_binary_op(MP_BINARY_OP_INPLACE_ADD, mp_load_attr(obj, name), by));
}

// As `_budget.run` reads a limit (vm/budget/mod/modbudget.c).
static uint64_t limit(mp_obj_t budget, qstr name) {
    mp_int_t v = mp_obj_get_int(mp_obj_subscr(budget, MP_OBJ_NEW_QSTR(name), MP_OBJ_SENTINEL));
    if (v < 0) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("_budget.run: %s must be >= 0 (0 means no limit), got %d"),
                          qstr_str(name), (int)v);
    }
    return (uint64_t)v;
}

// One step of record r: Mesh._step(r, now), its common case in C.
static void step_one(mp_obj_t mesh, mp_obj_t r, mp_obj_t now) {
    mp_obj_t fn = mp_load_attr(r, MP_QSTR_step_fn);
    if (fn == mp_const_none || budget_active() || !mp_obj_is_callable(fn)) {
        mp_obj_t args[2] = { r, now };
        call_method(mesh, MP_QSTR__step, 2, args);
        return;
    }
    mp_obj_t ctx = mp_load_attr(r, MP_QSTR_ctx);
    mp_store_attr(ctx, MP_QSTR_tick, now);
    mp_store_attr(r, MP_QSTR_last_round, mp_load_attr(mesh, MP_QSTR_rounds));
    mp_obj_t b = mp_load_attr(r, MP_QSTR_budget);
    mp_obj_t first_new = mp_load_attr(mesh, MP_QSTR_next_id);
    struct budget_limits lim;
    lim.ops = limit(b, MP_QSTR_ops);
    lim.cycles = limit(b, MP_QSTR_cycles);
    lim.alloc = limit(b, MP_QSTR_alloc);
    struct budget_result res;
    budget_run(fn, ctx, &lim, &res);
    mp_obj_t alloc = mp_obj_new_int_from_ull(res.alloc);
    mp_obj_t ops = mp_obj_new_int_from_ull(res.ops);
    add_attr(mesh, MP_QSTR_steps, MP_OBJ_NEW_SMALL_INT(1));
    add_attr(r, MP_QSTR_steps, MP_OBJ_NEW_SMALL_INT(1));
    add_attr(r, MP_QSTR_ops, ops);
    mp_store_attr(r, MP_QSTR_ops_last, ops);
    mp_store_attr(r, MP_QSTR_alloc, alloc);
    mp_store_attr(r, MP_QSTR_cycles, mp_obj_new_int_from_ull(res.cycles));
    add_attr(r, MP_QSTR_kept_bound, alloc);
    // Mesh._after_step does nothing in this case; anything else is its business.
    bool quiet =
        res.status == BUDGET_OK && mp_obj_equal(mp_load_attr(mesh, MP_QSTR_next_id), first_new) &&
        !mp_obj_is_true(mp_load_attr(mesh, MP_QSTR_starting)) &&
        !mp_obj_is_true(
            mp_binary_op(MP_BINARY_OP_MORE, mp_load_attr(r, MP_QSTR_kept_bound),
                         mp_obj_subscr(b, MP_OBJ_NEW_QSTR(MP_QSTR_kept), MP_OBJ_SENTINEL))) &&
        !mp_obj_is_true(mp_load_attr(r, MP_QSTR_retire_asked));
    if (!quiet) {
        mp_obj_t args[4] = { r, MP_OBJ_NEW_SMALL_INT(res.status), res.value, first_new };
        call_method(mesh, MP_QSTR__after_step, 4, args);
    }
}

static mp_obj_t mesh_steps(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_obj_t mesh = args[0];
    mp_obj_t now = args[2];
    mp_obj_t order = args[3];
    size_t len;
    mp_obj_t *items;
    mp_obj_list_get(args[1], &len, &items);
    mp_int_t n = 0;
    for (size_t i = 0; i < len; i++) {
        mp_obj_t r = items[i];
        mp_obj_list_append(order, mp_load_attr(r, MP_QSTR_id));
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            step_one(mesh, r, now);
            nlr_pop();
        } else {
            mp_obj_t x = MP_OBJ_FROM_PTR(nlr.ret_val);
            if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(x)),
                                         MP_OBJ_FROM_PTR(&mp_type_Exception))) {
                nlr_jump(nlr.ret_val);  // KeyboardInterrupt, SystemExit: not the mesh's
            }
            mp_obj_t cargs[2] = { r, x };
            call_method(mesh, MP_QSTR__contain, 2, cargs);
        }
        n++;
        if (mp_obj_is_true(mp_load_attr(mesh, MP_QSTR_halted))) {
            break;
        }
    }
    return MP_OBJ_NEW_SMALL_INT(n);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_steps_obj, 4, 4, mesh_steps);

static const mp_rom_map_elem_t mesh_module_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__mesh) },
    { MP_ROM_QSTR(MP_QSTR_ready), MP_ROM_PTR(&mesh_ready_obj) },
    { MP_ROM_QSTR(MP_QSTR_steps), MP_ROM_PTR(&mesh_steps_obj) },
};
static MP_DEFINE_CONST_DICT(mesh_module_globals, mesh_module_table);

const mp_obj_module_t mp_module_mesh = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&mesh_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__mesh, mp_module_mesh);
