// SPDX-License-Identifier: MIT
// Budgeted calls: run one Python call under limits on VM events (ops), TSC cycles and
// heap bytes, stopped through MicroPython's VM abort so Python handlers cannot catch it.
#ifndef LOCIOS_VM_BUDGET_BUDGET_H
#define LOCIOS_VM_BUDGET_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "py/obj.h"

// How a budgeted call ended (the numbers are part of the `_budget` module's interface).
enum budget_status {
    BUDGET_OK = 0,       // returned; value = its return value
    BUDGET_RAISED = 1,   // an exception escaped (or Ctrl-C arrived); value = the instance
    BUDGET_OPS = 2,      // VM event budget used up
    BUDGET_CYCLES = 3,   // TSC cycle budget used up
    BUDGET_ALLOC = 4,    // a heap request would have passed the byte budget; it was refused
    BUDGET_ABORTED = 5,  // budget_abort(code) from inside the call; value = code
};

// 0 in a field means "no limit".
struct budget_limits {
    uint64_t ops;
    uint64_t cycles;
    uint64_t alloc;
};

struct budget_result {
    enum budget_status status;
    mp_obj_t value;
    uint64_t ops;
    uint64_t cycles;
    uint64_t alloc;
};

// True while budget_run is running its call.
bool budget_active(void);

// Call fn(arg) under `lim`. Must not be called while budget_active() (the binding
// refuses that). Returns with every piece of VM state the call may have left behind
// restored: abort point, vm_abort flag, globals/locals, sys.exc_info, scheduler and
// GC lock depths.
void budget_run(mp_obj_t fn, mp_obj_t arg, const struct budget_limits *lim,
                struct budget_result *out);

// What `_budget.run` checks before budget_run: RuntimeError if a budgeted call is
// already running, TypeError if fn is not callable (vm/budget/mod/modbudget.c).
void budget_can_run(mp_obj_t fn);

// Stop the running call with BUDGET_ABORTED and `code`. Does not return, except while
// the GC is running finalisers: then the stop lands at the next VM hook after it.
// Only valid while budget_active().
void budget_abort(mp_int_t code);

#endif
