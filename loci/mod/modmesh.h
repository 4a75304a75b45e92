// SPDX-License-Identifier: MIT
// Private to the `_mesh` MicroPython module: the Locus record and the ctx handle, which
// the scheduler (modmesh.c) and the ctx calls (mesh_ctx.c) read and write as C fields.
// Python (loci/python/mesh.py) sees the same fields as attributes.
#ifndef LOCIOS_LOCI_MOD_MODMESH_H
#define LOCIOS_LOCI_MOD_MODMESH_H

#include <stdbool.h>
#include <stdint.h>

#include "py/obj.h"

#include "field.h"

// What the mesh knows about one Locus (loci/MESH.md): never handed to Locus code.
// Each name below is an attribute of the same name; an object field holds any value,
// an int field an int (a small one: counters, ticks, ids).
// clang-format off
#define MESH_RECORD_OBJECTS(X) \
    X(name) X(man) X(args) X(budget) X(mem) X(caps) X(attend) X(wake) X(pos) X(state) \
    X(keys) X(error) X(pending_error) X(dump) X(log) X(step_fn) X(ns) X(ctx) X(code)
#define MESH_RECORD_INTS(X) \
    X(id) X(steps) X(fails) X(strikes) X(backoff_until) X(last_round) X(ops) X(ops_last) \
    X(alloc) X(kept) X(kept_bound) X(cycles) X(deposits) X(keyed) X(dropped) X(restarts) \
    X(parent) X(root) X(lineage)
// clang-format on

#define MESH_FIELD_OBJECT(f) mp_obj_t f;
#define MESH_FIELD_INT(f)    mp_int_t f;

// How the scheduler reads an attention or a wake condition (a checked manifest's dict,
// which nothing changes in place): worked out at its first use, forgotten when the
// attribute is replaced.
enum mesh_seen_kind {
    MESH_SEEN_NOT_YET = 0,
    MESH_SEEN_NONE,    // None: activation 0
    MESH_SEEN_CELL,    // a cell of grid flavour `fl`: the record's pos, or (x, y)
    MESH_SEEN_KEY,     // `key` of keyed flavour `fl`
    MESH_SEEN_PYTHON,  // anything else: Mesh._value
};

typedef struct {
    uint8_t kind;
    uint8_t fl;
    uint32_t x, y;
    mp_obj_t key;
    mp_float_t above;  // a wake condition's threshold
} mesh_seen_t;

// The limits of the record's budget dict (the mesh's own copy of a checked manifest's,
// never changed in place), read at the first step and forgotten when it is replaced.
typedef struct {
    bool known;
    uint64_t ops, cycles, alloc;
    mp_int_t kept;
} mesh_limits_t;

typedef struct {
    mp_obj_base_t base;
    MESH_RECORD_OBJECTS(MESH_FIELD_OBJECT)
    MESH_RECORD_INTS(MESH_FIELD_INT)
    uint32_t rng;  // xorshift32, never 0 (attribute `rng`)
    bool retire_asked;
    mesh_seen_t seen_attend, seen_wake;
    mesh_limits_t limits;
} mesh_record_t;

// The one handle a Locus's code receives. Its attributes (id, name, args, mem, tick,
// pos) are read-only views of the record; the record itself, the mesh and the tables
// are not reachable from it.
typedef struct {
    mp_obj_base_t base;
    mp_obj_t mesh;
    mesh_record_t *rec;
    mp_obj_t field;  // mesh.field, and its C state
    field_t *f;
    mp_obj_t caps;  // mesh.caps (a _cap.Table)
    mp_obj_t tick;  // the tick the step runs in (ctx.tick)
    mp_obj_t now;   // the mesh's clock for capability checks (Mesh.now)
} mesh_ctx_t;

extern const mp_obj_type_t mesh_type_Record;
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_manifest_obj);
MP_DECLARE_CONST_FUN_OBJ_3(mesh_grant_obj);
MP_DECLARE_CONST_FUN_OBJ_3(mesh_hold_obj);
MP_DECLARE_CONST_FUN_OBJ_2(mesh_enter_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_start_obj);
MP_DECLARE_CONST_FUN_OBJ_2(mesh_spawn_obj);
extern const mp_obj_type_t mesh_type_Ctx;

mesh_record_t *mesh_record_of(mp_obj_t o);
// Record(lid, man, seed), from args[0..2]; Ctx(mesh, rec, now).
mp_obj_t mesh_record_new(const mp_obj_t *args);
mp_obj_t mesh_ctx_new(mp_obj_t mesh, mesh_record_t *r, mp_obj_t now);
// The limits of r's budget, read once (see mesh_limits_t).
const mesh_limits_t *mesh_limits_of(mesh_record_t *r);
// _mesh.manifest's check: the checked manifest, or MP_OBJ_NULL to leave it to Python.
mp_obj_t mesh_manifest_check(mp_obj_t m, mp_obj_t flavours, mp_obj_t defaults, mp_obj_t maxima);
// Forgets the dicts it copies (a soft reset).
void mesh_manifest_deinit(void);
uint32_t mesh_record_next_rand(mesh_record_t *r);
void mesh_record_add_log(mesh_record_t *r, mp_obj_t tick, mp_obj_t text);

// How many times a ctx call has gone to the mesh's Python (mesh_ctx.c): only Python
// changes the mesh, so a step that left this alone left the mesh as it was.
extern size_t mesh_python_calls;

// mesh_lookup.c. mesh.NAME, and mesh.NAME = v, for the Mesh instance's own attributes:
// read straight from its member map (the generic attribute path costs a few hundred
// instructions), and through it for anything else.
mp_obj_t mesh_get(mp_obj_t mesh, qstr name);
void mesh_set(mp_obj_t mesh, qstr name, mp_obj_t v);
// obj.NAME(*args), at most MESH_CALL_ARGS of them.
#define MESH_CALL_ARGS 4
mp_obj_t mesh_call(mp_obj_t obj, qstr name, size_t n, const mp_obj_t *args);
// d[name] of a plain-data dict: MP_OBJ_NULL where d is no dict or lacks it (dict_get);
// Python's d[name], its errors included, for anything else (item).
mp_obj_t mesh_dict_get(mp_obj_t d, qstr name);
mp_obj_t mesh_item(mp_obj_t d, qstr name);
// The index of the flavour a str names, or -1 (not a str, or no such flavour): what
// Mesh.index.get gives, so the whole str must match (a NUL inside it too).
int mesh_flavour_index(const field_t *f, mp_obj_t name);
// A cell as the mesh takes one: a tuple of two small ints inside grid flavour fl.
bool mesh_grid_cell(const field_flavour_t *fl, mp_obj_t at, uint32_t *x, uint32_t *y);

#endif
