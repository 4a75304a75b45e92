// SPDX-License-Identifier: MIT
// vm/'s contract with MicroPython: every hook the VM (with vm/patches) expands into its
// own code, and the vm/ functions those hooks call. Included by port/mpconfigport.h for
// the image and by vm/rewrite/host/usermod/rw/rw_unix_config.h for the unix oracle, each
// after saying what its build has:
//   LOCIOS_BUDGET_HOOKS   vm/budget's charges at frame entry, jumps and GC allocation,
//                         and its poll in long C loops
//   LOCIOS_PROF           the profiler's frame link (vm/profile); LOCIOS_PROF_COUNTERS
//                         its call and back-edge counters
//   LOCIOS_VM_IMAGE       the whole of vm/ is built (the LociOS image): the profiler's
//                         types (its tables are root pointers), the soft-reset list and
//                         the lexer's source hook. The unix oracle builds only the
//                         rewriter and the optimiser's C, and keeps the unix port's own.
// Read while py/mpconfig.h is being read, before any MicroPython type exists: the
// prototypes name only C types and struct tags, and the macros expand where the VM's
// types are known.
//
// Also named to MicroPython, but declared elsewhere: the functions native code calls
// (mp_native_poll, mp_native_load_global, ...: the patched py/nativeglue.h, defined in
// vm/opt/mod/rw_native_glue.c and rw_sites.c).
#ifndef LOCIOS_VM_VM_HOOKS_H
#define LOCIOS_VM_VM_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#if !defined(LOCIOS_BUDGET_HOOKS) || !defined(LOCIOS_PROF) || !defined(LOCIOS_VM_IMAGE)
#error \
    "vm_hooks.h: define LOCIOS_BUDGET_HOOKS, LOCIOS_PROF and LOCIOS_VM_IMAGE first (see port/mpconfigport.h)"
#endif

struct _mp_code_state_t;
struct _mp_obj_base_t;

// ---- Budgeted calls (vm/budget/budget.c) --------------------------------------------------
// The hooks charge the running call and may jump to the VM abort point. Idle
// (budget_armed == 0) each costs one load and a not-taken branch.
#if LOCIOS_BUDGET_HOOKS
extern uint8_t budget_armed;
void budget_on_entry(void);
void budget_on_branch(void);
int budget_on_alloc(size_t n_bytes);
// The port's gc_collect: a collection's cycles are not the running call's work.
void budget_exclude_cycles(uint64_t cycles);
// Each entry/resume of mp_execute_bytecode.
#define MICROPY_VM_HOOK_INIT                 \
    if (__builtin_expect(budget_armed, 0)) { \
        budget_on_entry();                   \
    }
// After jump-class opcodes, right before the VM's pending/vm_abort check.
#define MICROPY_VM_HOOK_LOOP                 \
    if (__builtin_expect(budget_armed, 0)) { \
        budget_on_branch();                  \
    }
// Called by the GC (vm/patches/0001) with the bytes a request adds; non-zero refuses it.
#define MICROPY_GC_ALLOC_HOOK(n_bytes) \
    (__builtin_expect(budget_armed, 0) ? budget_on_alloc(n_bytes) : 0)
// The qstr index (vm/patches/0019) is the system's cache, not the running call's data:
// its table is neither charged to a budget nor refused by one (the heap may still refuse).
void *budget_alloc_uncharged(size_t n_bytes);
#define MICROPY_QSTR_INDEX_ALLOC(n_bytes) budget_alloc_uncharged(n_bytes)
// Long C loops (vm/patches/0014): each iteration takes its work (about one unit per few
// machine instructions) off one countdown, and every BUDGET_POLL_WORK units budget_poll
// looks for a budget that has run out and for Ctrl-C, and may raise or jump to the abort
// point. Two instructions per iteration (`sub`, `js`) whether or not a call is budgeted.
// LOCIOS_C_LOOP_POLL=0 (port/mpconfigport.h) leaves them out, as upstream.
#if LOCIOS_C_LOOP_POLL
extern ptrdiff_t budget_poll_countdown;
void budget_poll(void);
#define MICROPY_C_LOOP_WORK(work) ((void)(budget_poll_countdown -= (ptrdiff_t)(work)))
#define MICROPY_C_LOOP_POLL_WORK(work)                                               \
    do {                                                                             \
        if (__builtin_expect((budget_poll_countdown -= (ptrdiff_t)(work)) < 0, 0)) { \
            budget_poll();                                                           \
        }                                                                            \
    } while (0)
#endif
#endif

// ---- The profiler (vm/profile/prof_vm.h, vm/patches/0006) -------------------------------
// Frame enter pushes the profiler's link (then the rewriter's line below), leave pops it
// and counts the call, a jump back counts a back edge, and a VM abort pops the links of
// the frames it skips. LOCIOS_PROF=0 drops only the profiler's part of frame enter, so
// the profiler's cost is measured alone.
#if LOCIOS_VM_IMAGE || LOCIOS_PROF
#include "profile/prof_vm.h"
#endif
#if LOCIOS_PROF
#define LOCIOS_PROF_FRAME_ENTER \
    prof_frame_t prof_frame_;   \
    prof_enter(&prof_frame_, code_state);
#define MICROPY_VM_HOOK_FRAME_LEAVE(finished) \
    prof_leave(&prof_frame_, MP_STATE_VM(prof_table), code_state->fun_bc->bytecode, (finished));
#define MICROPY_NLR_JUMP_ABORT_HOOK prof_abort_unwind(MP_STATE_VM(nlr_abort));
#if LOCIOS_PROF_COUNTERS
// A jump whose target is not after it is a back edge (ip: the target; code_state->ip:
// the jump itself).
#define MICROPY_VM_HOOK_FRAME_BRANCH prof_branch(&prof_frame_, ip, code_state->ip);
#endif
#else
#define LOCIOS_PROF_FRAME_ENTER
#endif

// ---- Frame enter: aggressive mode and the call recorder (vm/rewrite/mod/rw_aggr.c) --------
// Zero flags keep the hook to one test; a set bit sends every frame entry to
// rw_frame_enter (RW_ENTER_* in rw_aggr.h).
extern uint8_t rw_enter_flags;
void rw_frame_enter(struct _mp_code_state_t *code_state);
// Called by the port when a soft reset has dropped the heap: aggressive mode's copies of
// frozen code, which only that heap's function objects pointed at, may go.
void rw_aggr_forget(void);
#define MICROPY_VM_HOOK_FRAME_ENTER                \
    LOCIOS_PROF_FRAME_ENTER {                      \
        if (__builtin_expect(rw_enter_flags, 0)) { \
            rw_frame_enter(code_state);            \
        }                                          \
    }

// ---- An exception leaving a frame (vm/opt/mod/rw_watch.c, vm/patches/0011) ---------------
// A swapped function the optimiser watches notes a new exception type. A load and a
// not-taken branch, and only when an exception leaves a frame.
extern size_t rw_watch_n;
void rw_watch_raise(const struct _mp_obj_base_t *fun, const struct _mp_obj_base_t *exc);
#define MICROPY_VM_HOOK_FRAME_RAISE(fun, exc)                 \
    {                                                         \
        if (__builtin_expect(rw_watch_n, 0)) {                \
            rw_watch_raise(&(fun)->base, MP_OBJ_TO_PTR(exc)); \
        }                                                     \
    }
// The same for a native generator's resume (vm/patches/0020): `fun` is the twin, which
// rw_promote.c maps back to the function it was promoted for.
void rw_watch_raise_twin(const struct _mp_obj_base_t *twin, const struct _mp_obj_base_t *exc);
#define MICROPY_GEN_HOOK_NATIVE_RAISE(fun, exc)                    \
    {                                                              \
        if (__builtin_expect(rw_watch_n, 0)) {                     \
            rw_watch_raise_twin(&(fun)->base, MP_OBJ_TO_PTR(exc)); \
        }                                                          \
    }

// ---- The port's hooks: soft reset and kept source texts ---------------------------------
#if LOCIOS_VM_IMAGE
// Soft reset: the profiler stops sampling and forgets its table (it pins blocks of the
// old heap); the optimiser's recorder, kept texts, promotions, notes of native code and
// watched swaps (vm/opt/mod) all point into the old heap or arena, and so do the mesh's
// scratch and the dicts its manifest check copies (loci/mod).
void mesh_deinit(void);
void prof_deinit(void);
void rw_record_stop(void);
void rw_src_deinit(void);
void rw_promote_deinit(void);
void rw_exec_deinit(void);
void rw_watch_deinit(void);
void rw_inline_deinit(void);
#define MICROPY_PORT_DEINIT_FUNC \
    mesh_deinit();               \
    prof_deinit();               \
    rw_record_stop();            \
    rw_src_deinit();             \
    rw_promote_deinit();         \
    rw_exec_deinit();            \
    rw_watch_deinit();           \
    rw_inline_deinit()
// Source strings given to the lexer (REPL, exec, compile; vm/patches/0008) that define
// functions are kept (vm/opt/mod/rw_source.c), so the optimiser can compile a hot
// function's native twin from its def.
void rw_src_keep(size_t name, const char *str, size_t len);
#define MICROPY_PORT_LEXER_STR_HOOK(name, str, len) rw_src_keep((name), (str), (len))
#endif

// ---- Rewritten opcodes (vm/rewrite, vm/patches/0007) --------------------------------------
// py/vm.c includes the bodies inside its dispatch, py/vmentrytable.h the computed-goto
// entries. Both are included at block scope and need rw_opcodes.h's numbers and undo map
// (inline functions) declared at file scope first, hence the include here.
#include "rw_opcodes.h"
#define MICROPY_VM_EXTRA_OPCODES_H "rw_ops.h"
#define MICROPY_VM_EXTRA_ENTRIES_H "rw_entries.h"

#endif
