// SPDX-License-Identifier: MIT
// A Locus's birth in C (loci/MESH.md): grant(mesh, rec, parent) gives a record its
// capabilities, enter(mesh, rec) and hold(mesh, rec, d) make it a member and count its
// lineage in the shares of the keyed flavours, start(mesh, rec, code, loaded, stored,
// run_init) runs its code and init under its budget, and spawn(mesh, manifest) is
// Mesh.spawn itself: its common case, a console spawn of code already verified once (by
// source text, locus_sandbox's cache), with room in the mesh and in the audit log, is
// done here; any other manifest goes, before anything has happened, to
// Mesh._spawn_in_python. What only the mesh's Python knows (a refusal's words, a
// retirement, a child's derivation) stays there: these call it.
#include <string.h>

#include "py/builtin.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "budget.h"
#include "modcap.h"
#include "modfield.h"
#include "modmesh.h"

// An attribute of a module of the image, found in sys.modules when it is loaded there
// (the import machinery takes thousands of instructions to find a loaded one).
static mp_obj_t module_attr(qstr module, qstr name) {
    mp_map_elem_t *e = mp_map_lookup(&MP_STATE_VM(mp_loaded_modules_dict).map,
                                     MP_OBJ_NEW_QSTR(module), MP_MAP_LOOKUP);
    mp_obj_t m =
        e != NULL ? e->value : mp_import_name(module, mp_const_none, MP_OBJ_NEW_SMALL_INT(0));
    if (mp_obj_is_type(m, &mp_type_module)) {
        // The module's own global, without the generic attribute path.
        mp_map_elem_t *g =
            mp_map_lookup(&mp_obj_module_get_globals(m)->map, MP_OBJ_NEW_QSTR(name), MP_MAP_LOOKUP);
        if (g != NULL) {
            return g->value;
        }
    }
    return mp_load_attr(m, name);
}

// The rights a checked grant asks for.
static mp_int_t rights_of(mp_obj_t g) {
    mp_int_t r = 0;
    mp_obj_t ops = mesh_item(g, MP_QSTR_ops);
    size_t n;
    mp_obj_t *o;
    mp_obj_get_array(ops, &n, &o);
    for (size_t i = 0; i < n; i++) {
        r |= mp_obj_equal(o[i], MP_OBJ_NEW_QSTR(MP_QSTR_sense)) ? CAP_SENSE : CAP_DEPOSIT;
    }
    static const struct {
        qstr flag;
        mp_int_t right;
    } flags[] = { { MP_QSTR_spawn, CAP_SPAWN },
                  { MP_QSTR_rewrite, CAP_REWRITE },
                  { MP_QSTR_io, CAP_IO },
                  { MP_QSTR_mem, CAP_MEM } };
    for (size_t i = 0; i < MP_ARRAY_SIZE(flags); i++) {
        if (mp_obj_is_true(mesh_item(g, flags[i].flag))) {
            r |= flags[i].right;
        }
    }
    return r;
}

// Each grant of the manifest, from the table (a console spawn) or derived
// from a capability of the parent (Mesh._derive_for), in grant order.
static void grant(mp_obj_t mesh, mesh_record_t *r, mp_obj_t parent) {
    mp_obj_t table = mesh_get(mesh, MP_QSTR_caps);
    mp_obj_t index = mesh_get(mesh, MP_QSTR_index);
    mp_int_t keyed_mask = mp_obj_get_int(mesh_get(mesh, MP_QSTR_keyed_mask));
    mp_int_t now = (mp_int_t)modfield_self(mesh_get(mesh, MP_QSTR_field))->f.tick;
    mp_obj_t owner = mp_obj_new_int(r->id);
    mp_int_t keyed = 0;
    size_t n;
    mp_obj_t *grants;
    mp_obj_get_array(mesh_item(r->man, MP_QSTR_caps), &n, &grants);
    for (size_t i = 0; i < n; i++) {
        mp_obj_t g = grants[i];
        mp_int_t mask = 0;
        size_t nf;
        mp_obj_t *fl;
        mp_obj_get_array(mesh_item(g, MP_QSTR_flavours), &nf, &fl);
        for (size_t k = 0; k < nf; k++) {
            mask |= (mp_int_t)1 << mp_obj_get_int(mp_obj_subscr(index, fl[k], MP_OBJ_SENTINEL));
        }
        mp_obj_t expires = mesh_item(g, MP_QSTR_expires);
        mp_obj_t exp = mp_obj_is_true(expires)
                           ? mp_binary_op(MP_BINARY_OP_ADD, mp_obj_new_int(now), expires)
                           : MP_OBJ_NEW_SMALL_INT(0);
        mp_int_t rights = rights_of(g);
        mp_obj_t cap;
        if (parent == mp_const_none) {
            cap = modcap_grant(table, owner, mp_obj_new_int(rights), mp_obj_new_int(mask),
                               mesh_item(g, MP_QSTR_region), mesh_item(g, MP_QSTR_keys),
                               mesh_item(g, MP_QSTR_rate), exp, mesh_item(g, MP_QSTR_io),
                               mesh_item(g, MP_QSTR_mem), MP_OBJ_NEW_SMALL_INT(0));
        } else {
            mp_obj_t kw = mp_obj_new_dict(7);
            mp_obj_dict_store(kw, MP_OBJ_NEW_QSTR(MP_QSTR_flavours), mp_obj_new_int(mask));
            static const qstr same[] = { MP_QSTR_region, MP_QSTR_keys, MP_QSTR_rate };
            for (size_t k = 0; k < MP_ARRAY_SIZE(same); k++) {
                mp_obj_dict_store(kw, MP_OBJ_NEW_QSTR(same[k]), mesh_item(g, same[k]));
            }
            mp_obj_dict_store(kw, MP_OBJ_NEW_QSTR(MP_QSTR_expires), exp);
            mp_obj_dict_store(kw, MP_OBJ_NEW_QSTR(MP_QSTR_io), mesh_item(g, MP_QSTR_io));
            mp_obj_dict_store(kw, MP_OBJ_NEW_QSTR(MP_QSTR_mem), mesh_item(g, MP_QSTR_mem));
            mp_obj_t a[4] = { parent, owner, mp_obj_new_int(rights), kw };
            cap = mesh_call(mesh, MP_QSTR__derive_for, 4, a);
        }
        mp_obj_t entry[3] = { cap, mp_obj_new_int(rights), mp_obj_new_int(mask) };
        mp_obj_list_append(r->caps, mp_obj_new_tuple(3, entry));
        if (rights & CAP_DEPOSIT) {
            keyed |= mask & keyed_mask;
        }
    }
    // Only a lineage's root counts as a holder: its children draw on its share.
    r->keyed = parent == mp_const_none ? keyed : 0;
}

static mp_obj_t mesh_grant(mp_obj_t mesh, mp_obj_t rec, mp_obj_t parent) {
    grant(mesh, mesh_record_of(rec),
          parent == mp_const_none ? parent : MP_OBJ_FROM_PTR(mesh_record_of(parent)));
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_3(mesh_grant_obj, mesh_grant);

// Its lineage's count in the share of each keyed flavour it deposits on.
static void hold(mp_obj_t mesh, mesh_record_t *r, mp_int_t d) {
    mp_obj_t holders = mesh_get(mesh, MP_QSTR_holders);
    for (mp_int_t m = r->keyed, i = 0; m != 0; m >>= 1, i++) {
        if (m & 1) {
            mp_obj_t at = MP_OBJ_NEW_SMALL_INT(i);
            mp_obj_t v = mp_obj_subscr(holders, at, MP_OBJ_SENTINEL);
            mp_obj_subscr(holders, at, mp_binary_op(MP_BINARY_OP_ADD, v, MP_OBJ_NEW_SMALL_INT(d)));
        }
    }
}

static mp_obj_t mesh_hold(mp_obj_t mesh, mp_obj_t rec, mp_obj_t d) {
    hold(mesh, mesh_record_of(rec), mp_obj_get_int(d));
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_3(mesh_hold_obj, mesh_hold);

// A granted record becomes a member, listed and counted in the slot shares
// and in its lineage.
static void enter(mp_obj_t mesh, mesh_record_t *r) {
    mp_obj_t loci = mesh_get(mesh, MP_QSTR_loci);
    mp_obj_subscr(loci, mp_obj_new_int(r->id), MP_OBJ_FROM_PTR(r));
    hold(mesh, r, 1);
    if (r->root != r->id) {
        mesh_record_of(mp_obj_subscr(loci, mp_obj_new_int(r->root), MP_OBJ_SENTINEL))->lineage++;
    }
}

static mp_obj_t mesh_enter(mp_obj_t mesh, mp_obj_t rec) {
    enter(mesh, mesh_record_of(rec));
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_2(mesh_enter_obj, mesh_enter);

// locus_sandbox.namespace(loaded, stored, name): a fresh globals dict binding every name
// the code loads, to the built-in (locus_sandbox.ALLOWED) or None.
static mp_obj_t namespace(mp_obj_t loaded, mp_obj_t stored, mp_obj_t name) {
    mp_obj_t ns = mp_obj_new_dict(1);
    mp_obj_dict_store(ns, MP_OBJ_NEW_QSTR(MP_QSTR___name__), name);
    size_t n;
    mp_obj_t *names;
    mp_obj_get_array(loaded, &n, &names);
    mp_obj_t allowed = n > 0 ? module_attr(MP_QSTR_locus_sandbox, MP_QSTR_ALLOWED) : mp_const_none;
    for (size_t i = 0; i < n; i++) {
        mp_obj_t k = names[i];
        mp_obj_t v;
        if (mp_obj_is_true(mp_binary_op(MP_BINARY_OP_CONTAINS, allowed, k)) &&
            !mp_obj_is_true(mp_binary_op(MP_BINARY_OP_CONTAINS, stored, k))) {
            qstr q = mp_obj_str_get_qstr(k);
            v = q == MP_QSTR_range ? module_attr(MP_QSTR_locus_sandbox, MP_QSTR_bounded_range)
                                   : module_attr(MP_QSTR_builtins, q);
        } else if (mp_obj_equal(k, MP_OBJ_NEW_QSTR(MP_QSTR___name__))) {
            continue;
        } else {
            v = mp_const_none;
        }
        mp_obj_dict_store(ns, k, v);
    }
    return ns;
}

// A Locus's module code, in its namespace (the budgeted call of start).
static mp_obj_t exec_code(mp_obj_t rec) {
    mesh_record_t *r = mesh_record_of(rec);
    mp_obj_t a[2] = { r->code, r->ns };
    return mp_call_function_n_kw(MP_OBJ_FROM_PTR(&mp_builtin_exec_obj), 2, 0, a);
}
static MP_DEFINE_CONST_FUN_OBJ_1(exec_code_obj, exec_code);

static mp_obj_t status(const struct budget_result *res) {
    return MP_OBJ_NEW_SMALL_INT(res->status);
}

// Its code, then init(ctx), each under its budget; then the children that
// spawned start, and it is live, or retired with the reason.
static void start(mp_obj_t mesh, mesh_record_t *r, mp_obj_t code, mp_obj_t loaded, mp_obj_t stored,
                  bool run_init) {
    mp_obj_t rec = MP_OBJ_FROM_PTR(r);
    r->code = code;
    r->ns = namespace(loaded, stored, r->name);
    r->ctx = mesh_ctx_new(mesh, r, mesh_get(mesh, MP_QSTR_now));
    mp_obj_t first_new = mesh_get(mesh, MP_QSTR_next_id);
    const mesh_limits_t *l = mesh_limits_of(r);
    struct budget_limits lim = {
        .ops = (uint64_t)mp_obj_get_int(module_attr(MP_QSTR_mesh, MP_QSTR_INIT_OPS)),
        .cycles = l->cycles,
        .alloc = l->alloc,
    };
    struct budget_result res;
    budget_can_run(MP_OBJ_FROM_PTR(&exec_code_obj));
    budget_run(MP_OBJ_FROM_PTR(&exec_code_obj), rec, &lim, &res);
    mp_map_elem_t *init =
        mp_map_lookup(mp_obj_dict_get_map(r->ns), MP_OBJ_NEW_QSTR(MP_QSTR_init), MP_MAP_LOOKUP);
    if (res.status == BUDGET_OK && run_init && init != NULL && init->value != mp_const_none) {
        lim.ops = l->ops;
        budget_can_run(init->value);
        budget_run(init->value, r->ctx, &lim, &res);
    }
    if (!mp_obj_equal(mesh_get(mesh, MP_QSTR_next_id), first_new) ||
        mp_obj_is_true(mesh_get(mesh, MP_QSTR_starting))) {
        mesh_call(mesh, MP_QSTR__settle, 1, &first_new);
    }
    mp_obj_t kbd = MP_OBJ_FROM_PTR(&mp_type_KeyboardInterrupt);
    if (res.status == BUDGET_RAISED &&
        mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(res.value)), kbd)) {
        // Ctrl-C during its code or init is the console's, not the Locus's failure.
        static const char why[] = "start interrupted (Ctrl-C)";
        mp_obj_t a[3] = { rec, mp_obj_new_str(why, sizeof why - 1), mp_const_false };
        mesh_call(mesh, MP_QSTR__retire, 3, a);
        nlr_raise(res.value);
    }
    mp_map_elem_t *step =
        mp_map_lookup(mp_obj_dict_get_map(r->ns), MP_OBJ_NEW_QSTR(MP_QSTR_step), MP_MAP_LOOKUP);
    if (res.status == BUDGET_OK && (step == NULL || step->value == mp_const_none)) {
        res.status = BUDGET_RAISED;
        res.value = mp_obj_new_exception_msg(&mp_type_ValueError,
                                             MP_ERROR_TEXT("the code defines no step(ctx)"));
    }
    if (res.status != BUDGET_OK) {
        mp_obj_t why[3] = { rec, status(&res), res.value };
        static const char failed[] = "start failed: ";
        mp_obj_t text = mp_binary_op(MP_BINARY_OP_ADD, mp_obj_new_str(failed, sizeof failed - 1),
                                     mesh_call(mesh, MP_QSTR__why, 3, why));
        mp_obj_t a[3] = { rec, text, mp_const_false };
        mesh_call(mesh, MP_QSTR__retire, 3, a);
        return;
    }
    r->step_fn = step->value;
    // Its code and what init kept are measured at the end of its first step.
    r->kept_bound = l->kept + 1;
}

static mp_obj_t mesh_start(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    start(args[0], mesh_record_of(args[1]), args[2], args[3], args[4], mp_obj_is_true(args[5]));
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_start_obj, 6, 6, mesh_start);

// (code, loaded, stored) of a checked manifest's source when locus_sandbox has verified
// that text before, else NULL. A `module` source is read as Mesh._code reads it.
static mp_obj_t compiled(mp_obj_t man) {
    mp_obj_t src = mesh_item(man, MP_QSTR_code);
    if (src == mp_const_none) {
        size_t n;
        const char *s = mp_obj_str_get_data(mesh_item(man, MP_QSTR_module), &n);
        const char *colon = memchr(s, ':', n);
        qstr mod = qstr_from_strn(s, colon ? (size_t)(colon - s) : n);
        qstr attr = colon ? qstr_from_strn(colon + 1, n - (size_t)(colon - s) - 1) : MP_QSTR_SOURCE;
        nlr_buf_t nlr;
        if (nlr_push(&nlr) != 0) {
            return MP_OBJ_NULL;  // no such module or attribute: Python's error to give
        }
        mp_obj_t from[1] = { MP_OBJ_NEW_QSTR(attr) };
        src = mp_load_attr(mp_import_name(mod, mp_obj_new_tuple(1, from), MP_OBJ_NEW_SMALL_INT(0)),
                           attr);
        nlr_pop();
    }
    if (!mp_obj_is_str(src)) {
        return MP_OBJ_NULL;
    }
    mp_obj_t cache = module_attr(MP_QSTR_locus_sandbox, MP_QSTR__cache);
    mp_map_elem_t *e = mp_obj_is_type(cache, &mp_type_dict)
                           ? mp_map_lookup(mp_obj_dict_get_map(cache), src, MP_MAP_LOOKUP)
                           : NULL;
    return e != NULL ? e->value : MP_OBJ_NULL;
}

// Mesh._room and Mesh._roll_audit would do nothing: room for one more Locus, and for
// the audit log's records before it rolls over.
static bool room(mp_obj_t mesh) {
    mp_int_t loci = (mp_int_t)mp_obj_dict_get_map(mesh_get(mesh, MP_QSTR_loci))->used;
    mp_int_t live = loci - mp_obj_get_int(mesh_get(mesh, MP_QSTR_retired)) +
                    mp_obj_get_int(mp_obj_len(mesh_get(mesh, MP_QSTR_starting)));
    if (live >= mp_obj_get_int(mesh_get(mesh, MP_QSTR_max_loci))) {
        return false;
    }
    mp_int_t cap = mp_obj_get_int(mesh_get(mesh, MP_QSTR_audit_cap));
    mp_int_t limit = cap - cap / mp_obj_get_int(module_attr(MP_QSTR_mesh, MP_QSTR_AUDIT_SPARE));
    if (mesh_get(mesh, MP_QSTR_audit_store) != mp_const_none) {
        mp_int_t most = mp_obj_get_int(module_attr(MP_QSTR_mesh, MP_QSTR_AUDIT_FILE_RECORDS));
        limit = limit < most ? limit : most;
    }
    return (mp_int_t)modcap_audit_count(mesh_get(mesh, MP_QSTR_caps)) < limit;
}

// Mesh.spawn(manifest) -> the new Locus's id (see the top of this file).
static mp_obj_t mesh_spawn(mp_obj_t mesh, mp_obj_t manifest) {
    mp_obj_t man = mesh_manifest_check(manifest, mesh_get(mesh, MP_QSTR_layout),
                                       module_attr(MP_QSTR_locus_manifest, MP_QSTR_BUDGET_DEFAULT),
                                       module_attr(MP_QSTR_locus_manifest, MP_QSTR_BUDGET_MAX));
    mp_obj_t hit;
    if (man == MP_OBJ_NULL || !room(mesh) || (hit = compiled(man)) == MP_OBJ_NULL) {
        return mesh_call(mesh, MP_QSTR__spawn_in_python, 1, &manifest);
    }
    size_t n;
    mp_obj_t *cls;
    mp_obj_tuple_get(hit, &n, &cls);
    // From here on, what Mesh.spawn does.
    mp_obj_t lid = mesh_get(mesh, MP_QSTR_next_id);
    mp_obj_t args[3] = { lid, man, mesh_get(mesh, MP_QSTR_seed) };
    mesh_record_t *r = MP_OBJ_TO_PTR(mesh_record_new(args));
    mesh_set(mesh, MP_QSTR_next_id, mp_binary_op(MP_BINARY_OP_ADD, lid, MP_OBJ_NEW_SMALL_INT(1)));
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        grant(mesh, r, mp_const_none);
        nlr_pop();
    } else {
        mp_obj_t x = MP_OBJ_FROM_PTR(nlr.ret_val);
        if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(x)),
                                    MP_OBJ_FROM_PTR(&mp_type_ValueError))) {
            mp_obj_t a[2] = { mp_load_attr(mesh_get(mesh, MP_QSTR_caps), MP_QSTR_retire), lid };
            mesh_call(mesh, MP_QSTR__quiet, 2, a);
        }
        nlr_jump(nlr.ret_val);
    }
    r->last_round = mp_obj_get_int(mesh_get(mesh, MP_QSTR_rounds));
    enter(mesh, r);
    start(mesh, r, cls[0], cls[1], cls[2], true);
    return lid;
}
MP_DEFINE_CONST_FUN_OBJ_2(mesh_spawn_obj, mesh_spawn);
