// SPDX-License-Identifier: MIT
// The lookups the `_mesh` module's C shares: the Mesh instance's attributes and methods,
// the items of the plain-data dicts of a checked manifest, and a flavour or a cell of
// the field as a ctx call or an attention names them. Each takes the direct way for the
// common case and MicroPython's generic one for anything else.
#include <assert.h>
#include <string.h>

#include "py/objtype.h"
#include "py/runtime.h"

#include "modmesh.h"

mp_obj_t mesh_dict_get(mp_obj_t d, qstr name) {
    if (!mp_obj_is_type(d, &mp_type_dict)) {
        return MP_OBJ_NULL;
    }
    mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(d), MP_OBJ_NEW_QSTR(name), MP_MAP_LOOKUP);
    return e ? e->value : MP_OBJ_NULL;
}

mp_obj_t mesh_item(mp_obj_t d, qstr name) {
    mp_obj_t v = mesh_dict_get(d, name);
    return v != MP_OBJ_NULL ? v : mp_obj_subscr(d, MP_OBJ_NEW_QSTR(name), MP_OBJ_SENTINEL);
}

static mp_map_elem_t *member(mp_obj_t o, qstr name) {
    if (!mp_obj_is_instance_type(mp_obj_get_type(o))) {
        return NULL;
    }
    mp_obj_instance_t *self = MP_OBJ_TO_PTR(o);
    return mp_map_lookup(&self->members, MP_OBJ_NEW_QSTR(name), MP_MAP_LOOKUP);
}

mp_obj_t mesh_get(mp_obj_t mesh, qstr name) {
    mp_map_elem_t *e = member(mesh, name);
    return e != NULL ? e->value : mp_load_attr(mesh, name);
}

void mesh_set(mp_obj_t mesh, qstr name, mp_obj_t v) {
    mp_map_elem_t *e = member(mesh, name);
    if (e != NULL) {
        e->value = v;
    } else {
        mp_store_attr(mesh, name, v);
    }
}

mp_obj_t mesh_call(mp_obj_t obj, qstr name, size_t n, const mp_obj_t *args) {
    mp_obj_t dest[2 + MESH_CALL_ARGS];
    assert(n <= MESH_CALL_ARGS);
    mp_load_method(obj, name, dest);
    for (size_t i = 0; i < n; i++) {
        dest[2 + i] = args[i];
    }
    return mp_call_method_n_kw(n, 0, dest);
}

int mesh_flavour_index(const field_t *f, mp_obj_t name) {
    if (!mp_obj_is_str(name)) {
        return -1;
    }
    size_t n;
    const char *s = mp_obj_str_get_data(name, &n);
    for (uint32_t i = 0; i < f->nflavours; i++) {
        if (f->fl[i].name_len == n && memcmp(f->fl[i].name, s, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

bool mesh_grid_cell(const field_flavour_t *fl, mp_obj_t at, uint32_t *x, uint32_t *y) {
    if (!mp_obj_is_type(at, &mp_type_tuple)) {
        return false;
    }
    size_t n;
    mp_obj_t *xy;
    mp_obj_tuple_get(at, &n, &xy);
    if (n != 2 || !mp_obj_is_small_int(xy[0]) || !mp_obj_is_small_int(xy[1])) {
        return false;
    }
    mp_int_t xi = MP_OBJ_SMALL_INT_VALUE(xy[0]), yi = MP_OBJ_SMALL_INT_VALUE(xy[1]);
    if (xi < 0 || yi < 0 || xi >= (mp_int_t)fl->w || yi >= (mp_int_t)fl->h) {
        return false;
    }
    *x = (uint32_t)xi;
    *y = (uint32_t)yi;
    return true;
}
