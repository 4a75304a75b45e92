// SPDX-License-Identifier: MIT
// Recording the positional arguments of real calls to one function (rw_record.c), for
// the optimiser's equivalence gate (vm/opt).
#ifndef LOCIOS_VM_OPT_MOD_RW_RECORD_H
#define LOCIOS_VM_OPT_MOD_RW_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"

// The frame-entry half (rw_frame_enter calls it while RW_ENTER_RECORD is set): the
// positional arguments copied into slots allocated when recording started (the hook
// runs before the VM's exception handler is set up, so it must not allocate).
struct _mp_code_state_t;
void rw_record_enter(struct _mp_code_state_t *code_state);
// Start recording the next `calls` calls of the function whose fun_data is bytecode
// and whose signature is at prelude (the same place for bytecode), replacing any
// recording in progress. ValueError for *args, **kwargs or keyword-only parameters.
// Allocates.
void rw_record_start(const uint8_t *prelude, const uint8_t *bytecode, size_t calls);
// The same for a native function (mp_type_fun_native): its type changes until recording
// stops, so that its call slot records.
void rw_record_start_native(mp_obj_t fn, size_t calls);
extern const mp_obj_type_t rw_type_native_recorded;
void rw_record_stop(void);
// [(arg, ...), ...] recorded so far for bytecode; [] if it is not the one recorded.
mp_obj_t rw_record_calls(const uint8_t *bytecode);

#endif
