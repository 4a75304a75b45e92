// SPDX-License-Identifier: MIT
// `_mesh.Ctx`: the one handle a Locus's code receives (loci/MESH.md, "What ctx offers").
// The common uses are one C call each: a sense, a deposit on a grid, around, gradient,
// top and goto check their arguments, the capability (loci/mod/modcap.h) and the field here.
// Anything else, and every argument these do not take as given (a list for a cell, a
// cell off the grid, an unknown flavour, a keyed deposit), goes unchanged to the Python
// method of loci/python/mesh.py that defines the call, before anything has happened;
// so every refusal and error is the one that Python gives, and the rules stay written
// once. A refused check is reported through Mesh._refused, as Mesh._check does.
#include <assert.h>
#include <string.h>

#include "py/objstr.h"
#include "py/runtime.h"

#include "modcap.h"
#include "modfield.h"
#include "modmesh.h"

static mesh_ctx_t *ctx_of(mp_obj_t o) {
    if (!mp_obj_is_type(o, &mesh_type_Ctx)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a Locus ctx"));
    }
    return MP_OBJ_TO_PTR(o);
}

// Ctx(mesh, rec, now): the handle of record `rec`, checking against the clock `now`
// until the mesh sets the tick of a step (set_tick).
static mp_obj_t ctx_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
                             const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 3, 3, false);
    mesh_ctx_t *c = mp_obj_malloc(mesh_ctx_t, type);
    c->mesh = args[0];
    c->rec = mesh_record_of(args[1]);
    c->field = mesh_get(args[0], MP_QSTR_field);
    c->f = &modfield_self(c->field)->f;
    c->caps = mesh_get(args[0], MP_QSTR_caps);
    c->tick = MP_OBJ_NEW_SMALL_INT(0);
    c->now = args[2];
    return MP_OBJ_FROM_PTR(c);
}

size_t mesh_python_calls;

mp_obj_t mesh_ctx_new(mp_obj_t mesh, mesh_record_t *r, mp_obj_t now) {
    mp_obj_t args[3] = { mesh, MP_OBJ_FROM_PTR(r), now };
    return ctx_make_new(&mesh_type_Ctx, 3, 0, args);
}

// The Python definition of a call: mesh.NAME(rec, a...).
static mp_obj_t by_python(mesh_ctx_t *c, qstr name, size_t n, const mp_obj_t *a) {
    mesh_python_calls++;
    mp_obj_t dest[3 + 4];  // method, self, rec, and at most 4 more
    assert(n <= 4);
    mp_load_method(c->mesh, name, dest);
    dest[2] = MP_OBJ_FROM_PTR(c->rec);
    for (size_t i = 0; i < n; i++) {
        dest[3 + i] = a[i];
    }
    return mp_call_method_n_kw(n + 1, 0, dest);
}

// A key as both the capability check and the field take it: str or bytes, 1..15 bytes.
static bool field_key(mp_obj_t where, const uint8_t **key, size_t *len) {
    if (!mp_obj_is_str_or_bytes(where)) {
        return false;
    }
    *key = (const uint8_t *)mp_obj_str_get_data(where, len);
    return *len >= 1 && *len <= FIELD_KEY_MAX;
}

// Mesh._check's loop: each capability of the Locus that names req's operation and
// flavour is checked until one allows it. If none does, Mesh._refused gets the last
// code (-1: none named them), audits it when nothing did and stops the step.
static void check(mesh_ctx_t *c, cap_req_t *req, mp_obj_t flavour) {
    mesh_record_t *r = c->rec;
    req->now = (uint64_t)mp_obj_get_int(c->now);
    size_t n;
    mp_obj_t *caps;
    mp_obj_list_get(r->caps, &n, &caps);
    int code = -1;
    for (size_t i = 0; i < n; i++) {
        size_t k;
        mp_obj_t *g;
        mp_obj_tuple_get(caps[i], &k, &g);
        mp_int_t rights = mp_obj_get_int(g[1]), mask = mp_obj_get_int(g[2]);
        if ((rights & (mp_int_t)req->op) == 0 || ((mask >> req->flavour) & 1) == 0) {
            continue;
        }
        code = modcap_check(c->caps, g[0], (uint32_t)r->id, req);
        if (code == 0) {
            return;
        }
    }
    mp_obj_t a[4] = { MP_OBJ_NEW_SMALL_INT(req->op), flavour, MP_OBJ_NEW_SMALL_INT(req->flavour),
                      MP_OBJ_NEW_SMALL_INT(code) };
    by_python(c, MP_QSTR__refused, 4, a);
}

static void req_init(cap_req_t *req, uint32_t op, int flavour) {
    memset(req, 0, sizeof *req);
    req->op = op;
    req->flavour = (uint32_t)flavour;
    req->x = req->y = -1;
    req->w = req->h = 1;
}

// sense(flavour, where=None): a grid cell or a key; by default its position or the key
// it attends to.
static mp_obj_t ctx_sense(size_t n_args, const mp_obj_t *args) {
    mesh_ctx_t *c = ctx_of(args[0]);
    mp_obj_t flavour = args[1], where = n_args > 2 ? args[2] : mp_const_none;
    int i = mesh_flavour_index(c->f, flavour);
    cap_req_t req;
    req_init(&req, CAP_SENSE, i);
    float v;
    if (i >= 0 && c->f->fl[i].kind == FIELD_GRID) {
        uint32_t x, y;
        if (mesh_grid_cell(&c->f->fl[i], where == mp_const_none ? c->rec->pos : where, &x, &y)) {
            req.x = x;
            req.y = y;
            check(c, &req, flavour);
            modfield_check(field_sense_xy(c->f, (uint32_t)i, x, y, &v), "sense");
            return mp_obj_new_float(v);
        }
    } else if (i >= 0) {
        mp_obj_t a = c->rec->attend, key = where;
        if (where == mp_const_none && mp_obj_is_type(a, &mp_type_dict)) {
            mp_obj_t af = mesh_dict_get(a, MP_QSTR_flavour);
            key = af != MP_OBJ_NULL && mp_obj_equal(af, flavour) ? mesh_dict_get(a, MP_QSTR_key)
                                                                 : MP_OBJ_NULL;
        }
        if (key != MP_OBJ_NULL && field_key(key, &req.key, &req.keylen)) {
            check(c, &req, flavour);
            modfield_check(field_sense_key(c->f, (uint32_t)i, req.key, req.keylen, &v), "sense");
            return mp_obj_new_float(v);
        }
    }
    mp_obj_t a[2] = { flavour, where };
    return by_python(c, MP_QSTR__sense, 2, a);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_sense_obj, 2, 3, ctx_sense);

// deposit(flavour, amount, where=None): a grid deposit here; keyed ones (a lineage's
// share of the slots) in Mesh._deposit.
static mp_obj_t ctx_deposit(size_t n_args, const mp_obj_t *args) {
    mesh_ctx_t *c = ctx_of(args[0]);
    mesh_record_t *r = c->rec;
    mp_obj_t flavour = args[1], amount = args[2], where = n_args > 3 ? args[3] : mp_const_none;
    int i = mesh_flavour_index(c->f, flavour);
    uint32_t x, y;
    if (i >= 0 && c->f->fl[i].kind == FIELD_GRID &&
        (mp_obj_is_float(amount) || mp_obj_is_small_int(amount)) &&
        mesh_grid_cell(&c->f->fl[i], where == mp_const_none ? r->pos : where, &x, &y)) {
        mp_float_t a = mp_obj_get_float(amount);
        mp_obj_t most = mesh_dict_get(r->budget, MP_QSTR_deposits);
        // Not a number >= 0, or its deposits used up: Python's error or stop.
        if (a >= 0 && most != MP_OBJ_NULL && mp_obj_is_small_int(most) &&
            r->deposits < MP_OBJ_SMALL_INT_VALUE(most)) {
            cap_req_t req;
            req_init(&req, CAP_DEPOSIT, i);
            req.x = x;
            req.y = y;
            req.amount = (double)a;
            check(c, &req, flavour);
            r->deposits++;
            modfield_check(field_deposit_xy(c->f, (uint32_t)i, x, y, (float)a, (uint32_t)r->id),
                           "deposit");
            return mp_const_true;
        }
    }
    mp_obj_t a[3] = { flavour, amount, where };
    return by_python(c, MP_QSTR__deposit, 3, a);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_deposit_obj, 3, 4, ctx_deposit);

// Mesh._block: the 3x3 block at a cell, clipped to the grid, checked as one rectangle.
// False (nothing checked) when Python must take the call.
static bool block(mesh_ctx_t *c, mp_obj_t flavour, mp_obj_t where, int *i, uint32_t *x,
                  uint32_t *y) {
    *i = mesh_flavour_index(c->f, flavour);
    if (*i < 0 || c->f->fl[*i].kind != FIELD_GRID) {
        return false;
    }
    const field_flavour_t *fl = &c->f->fl[*i];
    if (!mesh_grid_cell(fl, where == mp_const_none ? c->rec->pos : where, x, y)) {
        return false;
    }
    cap_req_t req;
    req_init(&req, CAP_SENSE, *i);
    req.x = *x > 0 ? *x - 1 : 0;
    req.y = *y > 0 ? *y - 1 : 0;
    req.w = (*x + 2 <= fl->w ? *x + 2 : fl->w) - (uint32_t)req.x;
    req.h = (*y + 2 <= fl->h ? *y + 2 : fl->h) - (uint32_t)req.y;
    check(c, &req, flavour);
    return true;
}

// around(flavour, where=None): the 3x3 neighbourhood, row-major, None off the grid.
static mp_obj_t ctx_around(size_t n_args, const mp_obj_t *args) {
    mesh_ctx_t *c = ctx_of(args[0]);
    mp_obj_t where = n_args > 2 ? args[2] : mp_const_none;
    int i;
    uint32_t x, y, mask;
    if (!block(c, args[1], where, &i, &x, &y)) {
        mp_obj_t a[2] = { args[1], where };
        return by_python(c, MP_QSTR__around, 2, a);
    }
    float v[9];
    modfield_check(field_neighbourhood(c->f, (uint32_t)i, x, y, v, &mask), "neighbourhood");
    mp_obj_t out[9];
    for (int k = 0; k < 9; k++) {
        out[k] = (mask >> k) & 1 ? mp_obj_new_float(v[k]) : mp_const_none;
    }
    return mp_obj_new_tuple(9, out);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_around_obj, 2, 3, ctx_around);

// gradient(flavour, where=None): (dx, dy) towards the highest higher neighbour.
static mp_obj_t ctx_gradient(size_t n_args, const mp_obj_t *args) {
    mesh_ctx_t *c = ctx_of(args[0]);
    mp_obj_t where = n_args > 2 ? args[2] : mp_const_none;
    int i, dx, dy;
    uint32_t x, y;
    if (!block(c, args[1], where, &i, &x, &y)) {
        mp_obj_t a[2] = { args[1], where };
        return by_python(c, MP_QSTR__gradient, 2, a);
    }
    modfield_check(field_gradient(c->f, (uint32_t)i, x, y, &dx, &dy), "gradient");
    mp_obj_t out[2] = { MP_OBJ_NEW_SMALL_INT(dx), MP_OBJ_NEW_SMALL_INT(dy) };
    return mp_obj_new_tuple(2, out);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_gradient_obj, 2, 3, ctx_gradient);

// goto(x, y): moves its attention on its attention grid.
static mp_obj_t ctx_goto(mp_obj_t self, mp_obj_t x, mp_obj_t y) {
    mesh_ctx_t *c = ctx_of(self);
    mesh_record_t *r = c->rec;
    mp_obj_t fl = mesh_dict_get(r->attend, MP_QSTR_flavour);
    int i = fl != MP_OBJ_NULL && mesh_dict_get(r->attend, MP_QSTR_at) != MP_OBJ_NULL
                ? mesh_flavour_index(c->f, fl)
                : -1;
    mp_obj_t xy[2] = { x, y };
    mp_obj_t at = mp_obj_new_tuple(2, xy);
    uint32_t cx, cy;
    if (i >= 0 && c->f->fl[i].kind == FIELD_GRID && mesh_grid_cell(&c->f->fl[i], at, &cx, &cy)) {
        r->pos = at;
    } else {
        by_python(c, MP_QSTR__goto, 2, xy);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_3(ctx_goto_obj, ctx_goto);

// top(flavour, k): the k (at most 64) highest keys of a flavour, checked as a sense of
// the whole flavour (Mesh._top). A k that is not a small int goes to Python.
static mp_obj_t ctx_top(mp_obj_t self, mp_obj_t flavour, mp_obj_t k) {
    mesh_ctx_t *c = ctx_of(self);
    int i = mesh_flavour_index(c->f, flavour);
    if (i >= 0 && mp_obj_is_small_int(k)) {
        cap_req_t req;
        req_init(&req, CAP_SENSE, i);
        check(c, &req, flavour);
        mp_int_t n = MP_OBJ_SMALL_INT_VALUE(k);
        mp_obj_t dest[4];
        mp_load_method(c->field, MP_QSTR_topk, dest);
        dest[2] = flavour;
        dest[3] = MP_OBJ_NEW_SMALL_INT(n < 64 ? n : 64);
        return mp_call_method_n_kw(2, 0, dest);
    }
    mp_obj_t a[2] = { flavour, k };
    return by_python(c, MP_QSTR__top, 2, a);
}
static MP_DEFINE_CONST_FUN_OBJ_3(ctx_top_obj, ctx_top);

static mp_obj_t ctx_port_in(size_t n_args, const mp_obj_t *args) {
    mp_obj_t a[3] = { args[1], n_args > 2 ? args[2] : MP_OBJ_NEW_SMALL_INT(1), mp_const_none };
    return by_python(ctx_of(args[0]), MP_QSTR__port, 3, a);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_port_in_obj, 2, 3, ctx_port_in);

static mp_obj_t ctx_port_out(size_t n_args, const mp_obj_t *args) {
    mp_obj_t a[3] = { args[1], n_args > 3 ? args[3] : MP_OBJ_NEW_SMALL_INT(1), args[2] };
    by_python(ctx_of(args[0]), MP_QSTR__port, 3, a);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ctx_port_out_obj, 3, 4, ctx_port_out);

static mp_obj_t ctx_mem_read(mp_obj_t self, mp_obj_t addr, mp_obj_t n) {
    mp_obj_t a[2] = { addr, n };
    return by_python(ctx_of(self), MP_QSTR__mem, 2, a);
}
static MP_DEFINE_CONST_FUN_OBJ_3(ctx_mem_read_obj, ctx_mem_read);

static mp_obj_t ctx_rewrite(mp_obj_t self, mp_obj_t key) {
    return by_python(ctx_of(self), MP_QSTR__rewrite, 1, &key);
}
static MP_DEFINE_CONST_FUN_OBJ_2(ctx_rewrite_obj, ctx_rewrite);

static mp_obj_t ctx_spawn(mp_obj_t self, mp_obj_t manifest) {
    return by_python(ctx_of(self), MP_QSTR__spawn_child, 1, &manifest);
}
static MP_DEFINE_CONST_FUN_OBJ_2(ctx_spawn_obj, ctx_spawn);

// rand(): a 30-bit int from its own seeded generator; random(): a float in [0, 1).
static mp_obj_t ctx_rand(mp_obj_t self) {
    return MP_OBJ_NEW_SMALL_INT(mesh_record_next_rand(ctx_of(self)->rec));
}
static MP_DEFINE_CONST_FUN_OBJ_1(ctx_rand_obj, ctx_rand);

static mp_obj_t ctx_random(mp_obj_t self) {
    return mp_obj_new_float((mp_float_t)mesh_record_next_rand(ctx_of(self)->rec) /
                            (mp_float_t)1073741824.0);
}
static MP_DEFINE_CONST_FUN_OBJ_1(ctx_random_obj, ctx_random);

// log(text): a line in its log ring, stamped with the field's tick.
static mp_obj_t ctx_log(mp_obj_t self, mp_obj_t text) {
    mesh_ctx_t *c = ctx_of(self);
    mesh_record_add_log(c->rec, mp_obj_new_int_from_uint(c->f->tick), text);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(ctx_log_obj, ctx_log);

// retire(): ends itself after the current step.
static mp_obj_t ctx_retire(mp_obj_t self) {
    ctx_of(self)->rec->retire_asked = true;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(ctx_retire_obj, ctx_retire);

// Attributes: read-only views. A Locus that could store into its ctx could keep data
// there across steps, where budget.kept does not look.
static void ctx_attr(mp_obj_t self, qstr attr, mp_obj_t *dest) {
    if (dest[0] != MP_OBJ_NULL) {
        return;  // a store or delete: AttributeError
    }
    mesh_ctx_t *c = MP_OBJ_TO_PTR(self);
    switch (attr) {
        case MP_QSTR_id:
            dest[0] = mp_obj_new_int(c->rec->id);
            break;
        case MP_QSTR_name:
            dest[0] = c->rec->name;
            break;
        case MP_QSTR_args:
            dest[0] = c->rec->args;
            break;
        case MP_QSTR_mem:
            dest[0] = c->rec->mem;
            break;
        case MP_QSTR_tick:
            dest[0] = c->tick;
            break;
        case MP_QSTR_pos:
            dest[0] = c->rec->pos;
            break;
        default:
            dest[1] = MP_OBJ_SENTINEL;  // a method, from locals_dict
            break;
    }
}

static void ctx_print(const mp_print_t *print, mp_obj_t self, mp_print_kind_t kind) {
    (void)kind;
    mp_printf(print, "<ctx of Locus %d>", (int)((mesh_ctx_t *)MP_OBJ_TO_PTR(self))->rec->id);
}

static const mp_rom_map_elem_t ctx_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_goto), MP_ROM_PTR(&ctx_goto_obj) },
    { MP_ROM_QSTR(MP_QSTR_sense), MP_ROM_PTR(&ctx_sense_obj) },
    { MP_ROM_QSTR(MP_QSTR_around), MP_ROM_PTR(&ctx_around_obj) },
    { MP_ROM_QSTR(MP_QSTR_gradient), MP_ROM_PTR(&ctx_gradient_obj) },
    { MP_ROM_QSTR(MP_QSTR_top), MP_ROM_PTR(&ctx_top_obj) },
    { MP_ROM_QSTR(MP_QSTR_deposit), MP_ROM_PTR(&ctx_deposit_obj) },
    { MP_ROM_QSTR(MP_QSTR_port_in), MP_ROM_PTR(&ctx_port_in_obj) },
    { MP_ROM_QSTR(MP_QSTR_port_out), MP_ROM_PTR(&ctx_port_out_obj) },
    { MP_ROM_QSTR(MP_QSTR_mem_read), MP_ROM_PTR(&ctx_mem_read_obj) },
    { MP_ROM_QSTR(MP_QSTR_rewrite), MP_ROM_PTR(&ctx_rewrite_obj) },
    { MP_ROM_QSTR(MP_QSTR_rand), MP_ROM_PTR(&ctx_rand_obj) },
    { MP_ROM_QSTR(MP_QSTR_random), MP_ROM_PTR(&ctx_random_obj) },
    { MP_ROM_QSTR(MP_QSTR_log), MP_ROM_PTR(&ctx_log_obj) },
    { MP_ROM_QSTR(MP_QSTR_spawn), MP_ROM_PTR(&ctx_spawn_obj) },
    { MP_ROM_QSTR(MP_QSTR_retire), MP_ROM_PTR(&ctx_retire_obj) },
};
static MP_DEFINE_CONST_DICT(ctx_locals_dict, ctx_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(mesh_type_Ctx, MP_QSTR_Ctx, MP_TYPE_FLAG_NONE, make_new, ctx_make_new,
                         print, ctx_print, attr, ctx_attr, locals_dict, &ctx_locals_dict);
