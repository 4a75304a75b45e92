// SPDX-License-Identifier: MIT
// `_prof`: the sampling profiler and the always-on call/back-edge counters (vm/profile).
// start(hz)/stop(), samples(), counters(), where(fun, offset), stats(), reset().
#include "prof.h"

#include "py/gc.h"
#include "py/objfun.h"
#include "py/runtime.h"
#include "verify.h"

MP_REGISTER_ROOT_POINTER(prof_slot_t prof_table[LOCIOS_PROF_SLOTS]);
MP_REGISTER_ROOT_POINTER(prof_sample_t prof_ring[LOCIOS_PROF_RING]);

// start(hz=1000): sample the running bytecode frame hz times a second (10..10000).
static mp_obj_t prof_start_fn(size_t n_args, const mp_obj_t *args) {
    mp_int_t hz = n_args ? mp_obj_get_int(args[0]) : 1000;
    if (hz <= 0 || hz > UINT32_MAX || !prof_start((uint32_t)hz)) {
        mp_raise_msg_varg(
            &mp_type_ValueError,
            MP_ERROR_TEXT("_prof.start: %d Hz is outside the timer's range (10..10000)"), (int)hz);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(prof_start_obj, 0, 1, prof_start_fn);

static mp_obj_t prof_stop_fn(void) {
    prof_stop();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(prof_stop_obj, prof_stop_fn);

// samples(): drain the ring into {(function, offset): count}; offset counts from the
// function's first opcode (as vm.bytecode() and the verifier's messages do).
static mp_obj_t prof_samples_fn(void) {
    mp_obj_t d = mp_obj_new_dict(0);
    prof_sample_t s;
    while (prof_pop(&s)) {
        const mp_obj_fun_bc_t *fun = s.fun;
        size_t off = (size_t)((const byte *)s.ip - prof_code_start(fun));
        mp_obj_t key[2] = { MP_OBJ_FROM_PTR(fun), MP_OBJ_NEW_SMALL_INT(off) };
        mp_obj_t k = mp_obj_new_tuple(2, key);
        mp_map_elem_t *e = mp_map_lookup(mp_obj_dict_get_map(d), k, MP_MAP_LOOKUP_ADD_IF_NOT_FOUND);
        e->value = MP_OBJ_NEW_SMALL_INT((e->value ? MP_OBJ_SMALL_INT_VALUE(e->value) : 0) + 1);
    }
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(prof_samples_obj, prof_samples_fn);

// counters([hot]): [(function, calls, back_edges, hot_events)] for every counted function,
// or with hot=True only those with a hot event (what the optimiser reads on each pass).
static mp_obj_t prof_counters_fn(size_t n_args, const mp_obj_t *args) {
    bool hot_only = n_args > 0 && mp_obj_is_true(args[0]);
    prof_settle();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    const prof_slot_t *t = prof_table();
    for (size_t i = 0; i < LOCIOS_PROF_SLOTS; i++) {
        if (t[i].key == NULL) {
            continue;
        }
        uint64_t hot = prof_hot_events(i);
        if (hot_only && hot == 0) {
            continue;
        }
        mp_obj_t item[4] = {
            MP_OBJ_FROM_PTR(t[i].fun),
            mp_obj_new_int_from_uint(t[i].calls),
            mp_obj_new_int_from_uint(t[i].back),
            mp_obj_new_int_from_uint(hot),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(4, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(prof_counters_obj, 0, 1, prof_counters_fn);

// where(fun, offset) -> (name, file, line, opcode name).
static mp_obj_t prof_where_fn(mp_obj_t fun_in, mp_obj_t off_in) {
    if (!mp_obj_is_type(fun_in, &mp_type_fun_bc) && !mp_obj_is_type(fun_in, &mp_type_gen_wrap)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_prof.where: expected a bytecode function"));
    }
    const mp_obj_fun_bc_t *fun = MP_OBJ_TO_PTR(fun_in);
    mp_int_t off = mp_obj_get_int(off_in);
    const byte *code = prof_code_start(fun);
    // Heap bytecode has a known size; frozen bytecode is trusted (offsets come from
    // samples of it).
    size_t n = gc_nbytes(fun->bytecode);
    if (off < 0 || (n && code + off >= fun->bytecode + n)) {
        mp_raise_ValueError(MP_ERROR_TEXT("_prof.where: offset outside the function's code"));
    }
    prof_where_t w;
    prof_where(fun, code + off, &w);
    mp_obj_t item[4] = {
        MP_OBJ_NEW_QSTR(w.name),
        MP_OBJ_NEW_QSTR(w.file),
        MP_OBJ_NEW_SMALL_INT(w.line),
        mp_obj_new_str_from_cstr(vrf_opcode_name(w.opcode)),
    };
    return mp_obj_new_tuple(4, item);
}
static MP_DEFINE_CONST_FUN_OBJ_2(prof_where_obj, prof_where_fn);

static mp_obj_t prof_stats_fn(void) {
    struct prof_stats s;
    prof_settle();
    prof_get_stats(&s);
    mp_obj_t d = mp_obj_new_dict(9);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_taken), mp_obj_new_int_from_uint(s.taken));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_lost_full), mp_obj_new_int_from_uint(s.lost_full));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_idle), mp_obj_new_int_from_uint(s.idle));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_in_gc), mp_obj_new_int_from_uint(s.in_gc));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_unslotted), mp_obj_new_int_from_uint(s.unslotted));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_evicted), mp_obj_new_int_from_uint(s.evicted));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_hot), mp_obj_new_int_from_uint(s.hot));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_hz), mp_obj_new_int_from_uint(s.hz));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_ring), MP_OBJ_NEW_SMALL_INT(LOCIOS_PROF_RING));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(prof_stats_obj, prof_stats_fn);

static mp_obj_t prof_reset_fn(void) {
    prof_reset();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(prof_reset_obj, prof_reset_fn);

static const mp_rom_map_elem_t prof_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__prof) },
    { MP_ROM_QSTR(MP_QSTR_start), MP_ROM_PTR(&prof_start_obj) },
    { MP_ROM_QSTR(MP_QSTR_stop), MP_ROM_PTR(&prof_stop_obj) },
    { MP_ROM_QSTR(MP_QSTR_samples), MP_ROM_PTR(&prof_samples_obj) },
    { MP_ROM_QSTR(MP_QSTR_counters), MP_ROM_PTR(&prof_counters_obj) },
    { MP_ROM_QSTR(MP_QSTR_where), MP_ROM_PTR(&prof_where_obj) },
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&prof_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&prof_reset_obj) },
};
static MP_DEFINE_CONST_DICT(prof_module_globals, prof_module_globals_table);

const mp_obj_module_t prof_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&prof_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__prof, prof_module);
