// SPDX-License-Identifier: MIT
// Recording real calls for the optimiser's equivalence gate: the positional arguments of
// the next n calls of one function, copied into preallocated slots at frame entry (a
// bytecode function) or by its call slot (a native function).
#include "py/bc.h"
#include "py/gc.h"
#include "py/objfun.h"
#include "py/objtuple.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

#include "rw_aggr.h"
#include "rw_promote.h"
#include "rw_record.h"

// The slots are a GC block reachable from here, so recorded arguments stay alive until
// the optimiser has replayed them (or recording moves to another function).
MP_REGISTER_ROOT_POINTER(mp_obj_t *rw_rec_slots);
// A native function being recorded: its type is rw_type_native_recorded until it stops.
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_rec_native);

static const uint8_t *s_bytecode;  // the recorded function's fun_data (compared only)
static size_t s_n_args;            // positional arguments per call
static size_t s_max;               // calls wanted
static size_t s_done;              // calls recorded

static size_t positional_args(const uint8_t *prelude, bool *plain) {
    const byte *ip = prelude;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    (void)n_state;
    (void)n_exc_stack;
    (void)n_def_pos_args;
    *plain =
        !(scope_flags & (MP_SCOPE_FLAG_VARARGS | MP_SCOPE_FLAG_VARKEYWORDS)) && n_kwonly_args == 0;
    return n_pos_args;
}

void rw_record_enter(struct _mp_code_state_t *cs) {
    if (cs->fun_bc->bytecode != s_bytecode || s_done >= s_max) {
        return;
    }
    // A generator's resumes enter too; only a frame at its first opcode is a new call.
    const byte *ip = cs->fun_bc->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    (void)n_exc_stack;
    (void)scope_flags;
    (void)n_kwonly_args;
    (void)n_def_pos_args;
    if (cs->ip != ip + n_info + n_cell) {
        return;
    }
    mp_obj_t *row = MP_STATE_PORT(rw_rec_slots) + s_done * s_n_args;
    for (size_t i = 0; i < s_n_args && i < n_pos_args; i++) {
        row[i] = cs->state[n_state - 1 - i];
    }
    // A parameter an inner scope closes over (a comprehension reading it, say) was put
    // in a cell by the frame's setup: record the argument, not the cell, which a replay
    // would otherwise pass in as the argument's value.
    for (const byte *c = ip + n_info; c < ip + n_info + n_cell; c++) {
        if (*c < n_pos_args && *c < s_n_args) {
            row[*c] = mp_obj_cell_get(cs->state[n_state - 1 - *c]);
        }
    }
    if (++s_done == s_max) {
        rw_enter_flags &= (uint8_t)~RW_ENTER_RECORD;
    }
}

// Native code has no frames to hook: while a native function is recorded its type is
// this one, whose call slot copies the positional arguments (no allocation, as in the
// frame hook) and then runs the machine code as mp_type_fun_native's call slot does.
static mp_obj_t recorded_native_call(mp_obj_t self_in, size_t n_args, size_t n_kw,
                                     const mp_obj_t *args) {
    mp_obj_fun_bc_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->bytecode == s_bytecode && s_done < s_max && n_kw == 0 && n_args == s_n_args) {
        mp_obj_t *row = MP_STATE_PORT(rw_rec_slots) + s_done * s_n_args;
        for (size_t i = 0; i < n_args; i++) {
            row[i] = args[i];
        }
        s_done++;
    }
    mp_cstack_check();
    mp_call_fun_t code = mp_obj_fun_native_get_function_start(self);
    return code(self_in, n_args, n_kw, args);
}

MP_DEFINE_CONST_OBJ_TYPE(rw_type_native_recorded, MP_QSTR_function, MP_TYPE_FLAG_BINDS_SELF, print,
                         rw_native_fun_print, attr, rw_native_fun_attr, call, recorded_native_call);

void rw_record_start_native(mp_obj_t fn, size_t calls) {
    rw_record_start(mp_obj_fun_native_get_prelude_ptr(MP_OBJ_TO_PTR(fn)),
                    ((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(fn))->bytecode, calls);
    if (calls) {
        ((mp_obj_base_t *)MP_OBJ_TO_PTR(fn))->type = &rw_type_native_recorded;
        MP_STATE_PORT(rw_rec_native) = fn;
    }
}

void rw_record_start(const uint8_t *prelude, const uint8_t *bytecode, size_t calls) {
    bool plain;
    size_t n = positional_args(prelude, &plain);
    if (!plain) {
        mp_raise_ValueError(
            MP_ERROR_TEXT("_rw.record: only functions with plain positional parameters"));
    }
    rw_record_stop();
    // Allocate before publishing: the hook must never see slots that are not there.
    MP_STATE_PORT(rw_rec_slots) = m_new0(mp_obj_t, calls * (n ? n : 1));
    s_n_args = n;
    s_max = calls;
    s_done = 0;
    s_bytecode = bytecode;
    if (calls && prelude == bytecode) {
        rw_enter_flags |= RW_ENTER_RECORD;  // a bytecode function: the frame hook records
    }
}

void rw_record_stop(void) {
    mp_obj_t native = MP_STATE_PORT(rw_rec_native);
    if (native != MP_OBJ_NULL) {
        MP_STATE_PORT(rw_rec_native) = MP_OBJ_NULL;
        if (mp_obj_is_exact_type(native, &rw_type_native_recorded)) {
            ((mp_obj_base_t *)MP_OBJ_TO_PTR(native))->type = &mp_type_fun_native;
        }
    }
    rw_enter_flags &= (uint8_t)~RW_ENTER_RECORD;
    s_bytecode = NULL;
    s_max = s_done = 0;
}

mp_obj_t rw_record_calls(const uint8_t *bytecode) {
    mp_obj_t out = mp_obj_new_list(0, NULL);
    if (bytecode != s_bytecode) {
        return out;
    }
    for (size_t c = 0; c < s_done; c++) {
        mp_obj_list_append(out,
                           mp_obj_new_tuple(s_n_args, MP_STATE_PORT(rw_rec_slots) + c * s_n_args));
    }
    return out;
}
