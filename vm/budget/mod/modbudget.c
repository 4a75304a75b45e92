// SPDX-License-Identifier: MIT
// The `_budget` module: Python's door to vm/budget — run(fn, arg, ops, cycles, alloc),
// abort(code), active(), kept(roots, stop, limit) (budget_kept.c) and the status
// constants.
#include "py/runtime.h"

#include "budget.h"

static uint64_t get_limit(mp_obj_t obj, const char *name) {
    mp_int_t v = mp_obj_get_int(obj);
    if (v < 0) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("_budget.run: %s must be >= 0 (0 means no limit), got %d"),
                          name, (int)v);
    }
    return (uint64_t)v;
}

void budget_can_run(mp_obj_t fn) {
    if (budget_active()) {
        mp_raise_msg(
            &mp_type_RuntimeError,
            MP_ERROR_TEXT("_budget.run: already inside run(); budgeted calls do not nest"));
    }
    if (!mp_obj_is_callable(fn)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_budget.run: fn must be callable"));
    }
}

// run(fn, arg, ops, cycles, alloc) -> (status, value, ops_used, cycles_used, alloc_used)
static mp_obj_t budget_run_fn(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    budget_can_run(args[0]);
    struct budget_limits lim = {
        .ops = get_limit(args[2], "ops"),
        .cycles = get_limit(args[3], "cycles"),
        .alloc = get_limit(args[4], "alloc"),
    };
    struct budget_result r;
    budget_run(args[0], args[1], &lim, &r);
    mp_obj_t items[5] = {
        MP_OBJ_NEW_SMALL_INT(r.status),    r.value,
        mp_obj_new_int_from_uint(r.ops),   mp_obj_new_int_from_uint(r.cycles),
        mp_obj_new_int_from_uint(r.alloc),
    };
    return mp_obj_new_tuple(5, items);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(budget_run_obj, 5, 5, budget_run_fn);

// abort(code): stop the running call; run() returns (ABORTED, code, ...).
static mp_obj_t budget_abort_fn(mp_obj_t code_in) {
    if (!budget_active()) {
        mp_raise_msg(
            &mp_type_RuntimeError,
            MP_ERROR_TEXT("_budget.abort: no budgeted call is running (only valid inside run())"));
    }
    budget_abort(mp_obj_get_int(code_in));
    // Reached only from a finaliser during a collection: the stop lands right after it.
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(budget_abort_obj, budget_abort_fn);

static mp_obj_t budget_active_fn(void) {
    return mp_obj_new_bool(budget_active());
}
static MP_DEFINE_CONST_FUN_OBJ_0(budget_active_obj, budget_active_fn);

extern const mp_obj_fun_builtin_fixed_t budget_kept_obj;  // budget_kept.c

static const mp_rom_map_elem_t budget_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__budget) },
    { MP_ROM_QSTR(MP_QSTR_run), MP_ROM_PTR(&budget_run_obj) },
    { MP_ROM_QSTR(MP_QSTR_abort), MP_ROM_PTR(&budget_abort_obj) },
    { MP_ROM_QSTR(MP_QSTR_active), MP_ROM_PTR(&budget_active_obj) },
    { MP_ROM_QSTR(MP_QSTR_kept), MP_ROM_PTR(&budget_kept_obj) },
    { MP_ROM_QSTR(MP_QSTR_OK), MP_ROM_INT(BUDGET_OK) },
    { MP_ROM_QSTR(MP_QSTR_RAISED), MP_ROM_INT(BUDGET_RAISED) },
    { MP_ROM_QSTR(MP_QSTR_OPS), MP_ROM_INT(BUDGET_OPS) },
    { MP_ROM_QSTR(MP_QSTR_CYCLES), MP_ROM_INT(BUDGET_CYCLES) },
    { MP_ROM_QSTR(MP_QSTR_ALLOC), MP_ROM_INT(BUDGET_ALLOC) },
    { MP_ROM_QSTR(MP_QSTR_ABORTED), MP_ROM_INT(BUDGET_ABORTED) },
};
static MP_DEFINE_CONST_DICT(budget_module_globals, budget_module_globals_table);

const mp_obj_module_t mp_module_budget = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&budget_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__budget, mp_module_budget);
