// SPDX-License-Identifier: MIT
// Recording real calls for the optimiser's equivalence gate: the positional arguments of
// the next n calls of one function, copied at frame entry into preallocated slots.
#include "py/bc.h"
#include "py/gc.h"
#include "py/objfun.h"
#include "py/objtuple.h"
#include "py/runtime.h"

#include "rw_aggr.h"
#include "rw_record.h"

// The slots are a GC block reachable from here, so recorded arguments stay alive until
// the optimiser has replayed them (or recording moves to another function).
MP_REGISTER_ROOT_POINTER(mp_obj_t *rw_rec_slots);

static const uint8_t *s_bytecode;  // the recorded function's fun_data (compared only)
static size_t s_n_args;            // positional arguments per call
static size_t s_max;               // calls wanted
static size_t s_done;              // calls recorded

static size_t positional_args(const uint8_t *bytecode, bool *plain) {
    const byte *ip = bytecode;
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

void rw_record_start(const uint8_t *bytecode, size_t calls) {
    bool plain;
    size_t n = positional_args(bytecode, &plain);
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
    if (calls) {
        rw_enter_flags |= RW_ENTER_RECORD;
    }
}

void rw_record_stop(void) {
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
