// SPDX-License-Identifier: MIT
// Budgeted calls: the VM and GC hooks (declared in vm/vm_hooks.h) that charge the
// running call, and budget_run/budget_abort, which stop it through the VM abort point.
#include <string.h>

#include "py/mphal.h"
#include "py/mpstate.h"
#include "py/nlr.h"
#include "py/runtime.h"

#include "budget.h"

// Read by every hook: while it is 0 a hook costs one load and a not-taken branch.
uint8_t budget_armed;

// Units of C-loop work between two polls (see budget_poll): small enough that a poll
// comes well under a millisecond apart, large enough that its cost does not show.
#define BUDGET_POLL_WORK (1 << 16)

static struct {
    bool active;
    // Not BUDGET_OK once the call must stop; the stop lands at the next hook that may
    // stop (see may_stop_now).
    enum budget_status status;
    bool kbd;       // status is RAISED because Ctrl-C arrived
    bool has_code;  // status is ABORTED by budget_abort(abort_code)
    mp_int_t abort_code;
    uint64_t ops_used, ops_limit;
    uint64_t tsc_deadline;
    uint64_t tsc_last;               // the last TSC read by a hook or poll
    uint64_t forgiven, forgive_max;  // cycles of gaps added to the deadline, and the cap
    uint64_t alloc_used, alloc_limit;
} b;

// The GC runs finalisers with its collect flag set. Jumping out of one would leave the
// heap half-swept (marked blocks whose children were never traced), so a stop waits
// for the first hook after the collection.
static bool may_stop_now(void) {
    return (MP_STATE_THREAD(gc_lock_depth) & GC_COLLECT_FLAG) == 0;
}

// Ctrl-C during a call ends the call as RAISED(KeyboardInterrupt), so a bare `except:`
// in the call cannot eat it. Usually a hook takes it from the pending slot before the VM
// raises it; but the console interrupt can land between a branch hook and the VM's own
// pending check, and then the VM raises it. A handler is entered only through the entry
// hook, after the VM has recorded the exception in sys.exc_info's slot: look there too
// (the slot is cleared at the start of each call, so an older Ctrl-C does not count).
static bool take_kbd(bool at_entry) {
#if MICROPY_KBD_EXCEPTION
    mp_obj_base_t *kbd = (mp_obj_base_t *)&MP_STATE_VM(mp_kbd_exception);
    if (MP_STATE_THREAD(mp_pending_exception) == MP_OBJ_FROM_PTR(kbd)) {
        MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
        return true;
    }
#if MICROPY_PY_SYS_EXC_INFO
    if (at_entry && MP_STATE_VM(cur_exception) == kbd) {
        return true;
    }
#endif
#endif
    (void)at_entry;
    return false;
}

// Under TCG without -icount the TSC is the host's clock, and the host does not always run
// the guest: between two hook events microseconds apart, steps of 40-140 ms were seen
// with no work done (another process had the CPU). Consecutive TSC reads further apart
// than BUDGET_GAP_CYCLES are taken for such a pause and move the deadline, up to
// BUDGET_FORGIVE times the limit in all: hooks and polls come far closer together
// while the call works (a poll at most every 65,536 units of C work), so only C code
// that polls nowhere could also make a gap, and it stays bounded.
#define BUDGET_GAP_CYCLES (20000000u)
#define BUDGET_FORGIVE    (4u)

static uint64_t read_tsc(void) {
    uint64_t now = mp_hal_ticks_cpu();
    uint64_t gap = now - b.tsc_last;
    b.tsc_last = now;
    if (gap > BUDGET_GAP_CYCLES && b.forgiven < b.forgive_max) {
        uint64_t f = gap < b.forgive_max - b.forgiven ? gap : b.forgive_max - b.forgiven;
        b.forgiven += f;
        b.tsc_deadline += f;
    }
    return now;
}

static void charge_event(bool at_entry) {
    if (b.status != BUDGET_OK) {
        return;
    }
    if (take_kbd(at_entry)) {
        b.status = BUDGET_RAISED;
        b.kbd = true;
        return;
    }
    if (b.ops_limit != 0 && b.ops_used >= b.ops_limit) {
        b.status = BUDGET_OPS;
        return;
    }
    b.ops_used++;
    if (b.tsc_deadline != 0 && read_tsc() >= b.tsc_deadline) {
        b.status = BUDGET_CYCLES;
    }
}

// MICROPY_VM_HOOK_INIT: each entry into mp_execute_bytecode (call, generator resume,
// handler entry after an exception). The VM checks nothing after this hook, so the stop
// jumps to the abort point from here: the hook runs inside the frame's nlr_push region,
// exactly where an opcode's own nlr_jump (any raise) may run, and nlr_jump_abort unwinds
// the nlr chain, the jump callbacks and every C frame above run()'s the same way.
void budget_on_entry(void) {
    charge_event(true);
    if (b.status != BUDGET_OK && may_stop_now()) {
        nlr_jump_abort();
    }
}

// MICROPY_VM_HOOK_LOOP: after jump-class opcodes. The VM tests vm_abort right after this
// hook and calls mp_handle_pending, which jumps to the abort point.
void budget_on_branch(void) {
    charge_event(false);
    if (b.status != BUDGET_OK && may_stop_now()) {
        mp_sched_vm_abort();
    }
}

// MICROPY_C_LOOP_POLL_WORK (vm/patches/0014): a long loop in C (big-integer arithmetic,
// substring search, sorting, an iterator consumed in C) never reaches the VM hooks above,
// so it polls here every BUDGET_POLL_WORK units of work: a few thousand times a second of
// such work, a few hundred instructions each time at most. The poll sites are places
// where the loop may already raise, with every object it touches left valid.
//   In a budgeted call: Ctrl-C and the cycle deadline, and a stop that fell due at an
// allocation, end the call through the abort point, as at an entry hook (ops are VM
// events and are not charged here, so they stay deterministic).
//   Outside one: a pending exception (Ctrl-C) is raised and a requested VM abort is
// taken, as the VM's pending check at its next jump would; scheduled callbacks are left
// for that check (they would run Python in the middle of the C loop).
ptrdiff_t budget_poll_countdown = BUDGET_POLL_WORK;

void budget_poll(void) {
    budget_poll_countdown = BUDGET_POLL_WORK;
    if (!may_stop_now()) {
        return;
    }
    if (budget_armed) {
        if (b.status == BUDGET_OK) {
            if (take_kbd(false)) {
                b.status = BUDGET_RAISED;
                b.kbd = true;
            } else if (b.tsc_deadline != 0 && read_tsc() >= b.tsc_deadline) {
                b.status = BUDGET_CYCLES;
            }
        }
        if (b.status != BUDGET_OK) {
            nlr_jump_abort();
        }
        return;
    }
#if MICROPY_ENABLE_VM_ABORT
    if (MP_STATE_VM(vm_abort) && nlr_get_abort() != NULL) {
        MP_STATE_VM(vm_abort) = false;
        nlr_jump_abort();
    }
#endif
    mp_obj_t pending = MP_STATE_THREAD(mp_pending_exception);
    if (pending != MP_OBJ_NULL) {
        MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
        nlr_raise(pending);
    }
}

// Set by budget_alloc_uncharged for the one request it makes.
static bool alloc_uncharged;

// MICROPY_GC_ALLOC_HOOK: `n_bytes` is what a heap request adds. A request past the
// budget is refused (it fails like an exhausted heap) and stops the call at the next
// VM hook; from then on every request is refused until the stop lands. It must not
// allocate and does not jump: the allocator's callers expect NULL, not a longjmp.
int budget_on_alloc(size_t n_bytes) {
    if (b.status != BUDGET_OK) {
        return 1;
    }
    if (alloc_uncharged) {
        alloc_uncharged = false;  // this request only, not what a collection it causes runs
        return 0;
    }
    if (b.alloc_limit != 0 && n_bytes > b.alloc_limit - b.alloc_used) {
        b.status = BUDGET_ALLOC;
        return 1;
    }
    b.alloc_used += n_bytes;
    return 0;
}

// A heap request the system makes for itself inside a budgeted call (the qstr index):
// not counted against the call's allocation limit and not a reason to stop it. The hook
// sees this request before the heap is touched, so the flag covers it alone.
void *budget_alloc_uncharged(size_t n_bytes) {
    alloc_uncharged = true;
    void *p = m_malloc_maybe(n_bytes);
    alloc_uncharged = false;
    return p;
}

// The cycle deadline moves by `cycles` the call did not spend on its own work (a garbage
// collection). The cycles reported for the call still count them.
void budget_exclude_cycles(uint64_t cycles) {
    if (b.active && b.tsc_deadline != 0) {
        b.tsc_deadline += cycles;
        b.tsc_last = mp_hal_ticks_cpu();  // not a gap as well
    }
}

bool budget_active(void) {
    return b.active;
}

void budget_abort(mp_int_t code) {
    if (b.status == BUDGET_OK) {
        b.status = BUDGET_ABORTED;
        b.has_code = true;
        b.abort_code = code;
    }
    if (may_stop_now()) {
        nlr_jump_abort();
    }
}

void budget_run(mp_obj_t fn, mp_obj_t arg, const struct budget_limits *lim,
                struct budget_result *out) {
    // What a call stopped mid-way leaves behind: frames skipped by the abort never
    // restore globals/locals, sys.exc_info, the scheduler lock (a scheduled callback)
    // or a heap lock taken by trusted code.
    nlr_buf_t *const abort_point = nlr_get_abort();
    mp_obj_dict_t *const globals = mp_globals_get();
    mp_obj_dict_t *const locals = mp_locals_get();
    mp_obj_base_t *const cur_exception = MP_STATE_VM(cur_exception);
    const uint16_t gc_lock_depth = MP_STATE_THREAD(gc_lock_depth);
    const int16_t sched_floor = MP_STATE_VM(sched_state) < 0 ? MP_STATE_VM(sched_state) : 0;
    MP_STATE_VM(cur_exception) = NULL;

    memset(&b, 0, sizeof(b));
    b.active = true;
    b.ops_limit = lim->ops;
    b.alloc_limit = lim->alloc;
    out->value = mp_const_none;
    const uint64_t tsc_start = mp_hal_ticks_cpu();
    b.tsc_deadline = lim->cycles != 0 ? tsc_start + lim->cycles : 0;
    b.tsc_last = tsc_start;
    b.forgive_max =
        lim->cycles <= UINT64_MAX / BUDGET_FORGIVE ? lim->cycles * BUDGET_FORGIVE : UINT64_MAX;

    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        nlr_set_abort(&nlr);
        budget_armed = 1;
        mp_obj_t ret = mp_call_function_1(fn, arg);
        budget_armed = 0;
        nlr_pop();
        out->value = ret;
    } else {
        budget_armed = 0;
        if (b.status == BUDGET_OK) {
            // An exception escaped; or (ret_val NULL) an abort someone else requested
            // with mp_sched_vm_abort, reported as ABORTED with no code.
            b.status = nlr.ret_val != NULL ? BUDGET_RAISED : BUDGET_ABORTED;
            out->value = nlr.ret_val != NULL ? MP_OBJ_FROM_PTR(nlr.ret_val) : mp_const_none;
        }
    }
    const uint64_t tsc_end = mp_hal_ticks_cpu();

    nlr_set_abort(abort_point);
    MP_STATE_VM(vm_abort) = false;
    mp_globals_set(globals);
    mp_locals_set(locals);
    MP_STATE_VM(cur_exception) = cur_exception;
    MP_STATE_THREAD(gc_lock_depth) = gc_lock_depth;
    while (MP_STATE_VM(sched_state) < sched_floor) {
        mp_sched_unlock();
    }
    // Ctrl-C that arrived after the last hook still belongs to this call.
    if (take_kbd(false)) {
        b.status = BUDGET_RAISED;
        b.kbd = true;
    }

    out->status = b.status;
    switch (b.status) {
        case BUDGET_OK:
            break;
        case BUDGET_RAISED:
            if (b.kbd) {
                out->value = MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception));
            }
            break;
        case BUDGET_ABORTED:
            out->value = b.has_code ? mp_obj_new_int(b.abort_code) : mp_const_none;
            break;
        default:
            out->value = mp_const_none;
            break;
    }
    out->ops = b.ops_used;
    out->cycles = tsc_end - tsc_start;
    out->alloc = b.alloc_used;
    b.active = false;
}
