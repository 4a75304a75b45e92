// SPDX-License-Identifier: MIT
// The plain entries native promotion's emitter changes add to mp_fun_table (their
// prototypes are in the patched py/nativeglue.h, vm/patches/0008, 0009 and 0021): the
// back-edge poll, which also counts where native loops spin (the heat of native code),
// the unbound-local error, and the second tier's direct calls and iteration, which only
// the optimiser's twins use. The cached entries are in rw_sites.c.
#include <string.h>

#include "py/nativeglue.h"
#include "py/objfun.h"
#include "py/runtime.h"
#include "py/stackctrl.h"

#include "rw_native_heat.h"
#include "rw_promote.h"

// ---- where native loops spin -------------------------------------------------------------

// Back edges counted by the address they return to (a place in one native function's
// machine code), direct-mapped. A slot held by another edge is taken over only once its
// count has worn down to zero, one step per colliding edge, so a loop that keeps running
// keeps its slot and one that ran once gives it up.
rw_heat_slot_t rw_native_heat[RW_HEAT_SLOTS];

static inline void count_back_edge(uintptr_t at) {
    rw_heat_slot_t *s = &rw_native_heat[(at >> 2) & (RW_HEAT_SLOTS - 1)];
    if (s->at == at) {
        s->n++;
    } else if (s->n == 0) {
        s->at = at;
        s->n = 1;
    } else {
        s->n--;
    }
}

void rw_native_heat_reset(void) {
    memset(rw_native_heat, 0, sizeof(rw_native_heat));
}

// What the bytecode VM does after a jump (py/vm.c, pending_exception_check): the port's
// loop hook (budget accounting, which may request a VM abort), then, only when one is
// flagged, pending exceptions (Ctrl-C), scheduled callbacks and the abort itself.
static inline void poll(void) {
    MICROPY_VM_HOOK_LOOP
    if (
#if MICROPY_ENABLE_SCHEDULER && !MICROPY_PY_THREAD
        // A pending exception sets sched_state too (mp_sched_exception).
        MP_STATE_VM(sched_state) == MP_SCHED_PENDING
#elif MICROPY_ENABLE_SCHEDULER
        MP_STATE_VM(sched_state) == MP_SCHED_PENDING ||
        MP_STATE_THREAD(mp_pending_exception) != MP_OBJ_NULL
#else
        MP_STATE_THREAD(mp_pending_exception) != MP_OBJ_NULL
#endif
#if MICROPY_ENABLE_VM_ABORT
        || MP_STATE_VM(vm_abort)
#endif
    ) {
        mp_handle_pending(true);
    }
}

// Native code's back edge: counted, then polled.
void mp_native_poll(void) {
    count_back_edge((uintptr_t)__builtin_return_address(0));
    poll();
}

// A twin's back edge: polled only (a twin's function is decided; its heat would only
// take slots from code still undecided).
void mp_native_poll_twin(void) {
    poll();
}

// ---- twins that count a budget's ops as the VM does (vm/patches/0023) ---------------------

// Set only while the optimiser compiles a twin for budgeted (Locus) code. Then every
// jump-class opcode polls, where the VM runs MICROPY_VM_HOOK_LOOP (after the jump's test,
// on both of its edges), and the function's entry charges what MICROPY_VM_HOOK_INIT does;
// loop back edges no longer poll on their own.
bool mp_native_count_ops;

// A conditional jump's poll, between its test and the jump: the test's result passes
// through unchanged.
mp_uint_t mp_native_poll_keep(mp_uint_t truth) {
    poll();
    return truth;
}

// A counted function's entry, after its arguments are in place: one op, and a stop
// that is due lands here, as at the VM's frame entry.
void mp_native_entry_charge(void) {
    MICROPY_VM_HOOK_INIT
}

// A local read before it is bound, or after `del` (vm/patches/0009 checks each load):
// the exception the bytecode VM's LOAD_FAST raises.
void mp_native_unbound_local(void) {
    mp_raise_msg(&mp_type_NameError, MP_ERROR_TEXT("local variable referenced before assignment"));
}

// ---- the second tier: the twins' direct calls and iteration (vm/patches/0021) --------------

// Set only while the optimiser compiles a twin: then the emitter calls the entries below
// and mp_native_poll_twin. Code compiled at any other time keeps the generic protocol.
bool mp_native_direct_calls;

// mp_cstack_check inline: the same limit, measured from this frame.
static inline __attribute__((always_inline)) void stack_check(void) {
#if MICROPY_STACK_CHECK
    if ((size_t)(MP_STATE_THREAD(stack_top) - (char *)__builtin_frame_address(0)) >=
        MP_STATE_THREAD(stack_limit)) {
        mp_raise_recursion_depth();
    }
#endif
}

// A built-in function called with positional arguments only, when their number is one
// it takes: the call its type's call slot makes once mp_arg_check_num has passed. Else
// false, and the generic call (which raises the TypeError).
static inline bool call_builtin(mp_obj_t fun_in, const mp_obj_type_t *t, size_t n_args,
                                const mp_obj_t *args, mp_obj_t *out) {
    const mp_obj_fun_builtin_fixed_t *b = MP_OBJ_TO_PTR(fun_in);
    if (t == &mp_type_fun_builtin_1 && n_args == 1) {
        *out = b->fun._1(args[0]);
    } else if (t == &mp_type_fun_builtin_2 && n_args == 2) {
        *out = b->fun._2(args[0], args[1]);
    } else if (t == &mp_type_fun_builtin_var) {
        const mp_obj_fun_builtin_var_t *v = MP_OBJ_TO_PTR(fun_in);
        // The signature (MP_OBJ_FUN_MAKE_SIG): minimum << 17 | maximum << 1 | takes kw.
        if ((v->sig & 1) || n_args < (v->sig >> 17) || n_args > ((v->sig >> 1) & 0xffff)) {
            return false;
        }
        *out = v->fun.var(n_args, args);
    } else if (t == &mp_type_fun_builtin_3 && n_args == 3) {
        *out = b->fun._3(args[0], args[1], args[2]);
    } else if (t == &mp_type_fun_builtin_0 && n_args == 0) {
        *out = b->fun._0();
    } else {
        return false;
    }
    return true;
}

// Any other callee: a built-in function directly when call_builtin can, else the
// generic call. Out of line, so that call_direct's paths into machine code keep a frame
// that saves nothing.
static __attribute__((noinline)) mp_obj_t call_other(mp_obj_t fun_in, size_t n_args, size_t n_kw,
                                                     const mp_obj_t *args) {
    mp_obj_t r;
    if (n_kw == 0 && mp_obj_is_obj(fun_in)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(fun_in))->type;
        if ((t->flags & MP_TYPE_FLAG_BUILTIN_FUN) && call_builtin(fun_in, t, n_args, args, &r)) {
            return r;
        }
    }
    return mp_call_function_n_kw(fun_in, n_args, n_kw, args);
}

// A call from a twin. When the callee is viper or native code (or a promoted function,
// whose twin runs), go straight into its machine code with the same checks its type's
// call slot makes (the C stack check; the callee's prologue checks the arguments), but
// without the generic protocol's steps: the fun-table wrapper, mp_call_function_n_kw,
// the type's slot lookup. A built-in function called with positional arguments it
// takes runs its C function (call_builtin). Anything else takes the generic call.
static inline __attribute__((always_inline)) mp_obj_t call_direct(mp_obj_t fun_in, size_t n_args,
                                                                  size_t n_kw,
                                                                  const mp_obj_t *args) {
    if (mp_obj_is_obj(fun_in)) {
        mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fun_in);
        const mp_obj_type_t *t = f->base.type;
        if (t == &mp_type_fun_viper) {
            stack_check();
            mp_call_fun_t code = MICROPY_MAKE_POINTER_CALLABLE((void *)f->bytecode);
            return code(fun_in, n_args, n_kw, args);
        }
        if (t == &mp_type_fun_native) {
            stack_check();
            mp_call_fun_t code = mp_obj_fun_native_get_function_start(f);
            return code(fun_in, n_args, n_kw, args);
        }
        if (t == &rw_type_fun_promoted || t == &rw_type_native_promoted) {
            return rw_promoted_call(fun_in, n_args, n_kw, args);
        }
    }
    return call_other(fun_in, n_args, n_kw, args);
}

mp_obj_t mp_native_call_direct(mp_obj_t fun_in, size_t n_args_kw, const mp_obj_t *args) {
    return call_direct(fun_in, n_args_kw & 0xff, (n_args_kw >> 8) & 0xff, args);
}

// obj.name(...) from a twin: args holds the function and self as mp_load_method left
// them (self MP_OBJ_NULL when the function is not bound to one), as mp_call_method_n_kw
// reads them.
mp_obj_t mp_native_call_method_direct(size_t n_args, size_t n_kw, const mp_obj_t *args) {
    size_t adjust = args[1] == MP_OBJ_NULL ? 0 : 1;
    return call_direct(args[0], n_args + adjust, n_kw, args + 2 - adjust);
}

// py/objrange.c's range and its iterator, restated (1.25.0). The iterator's type is
// static there: it is read from an iterator of an empty range, both made on the C stack
// (range's getiter builds its iterator in the buffer it is given), so this allocates
// nothing and may run before the heap is up (the unix oracle's constructor).
typedef struct {
    mp_obj_base_t base;
    mp_int_t start;
    mp_int_t stop;
    mp_int_t step;
} rw_range_t;
typedef struct {
    mp_obj_base_t base;
    mp_int_t cur;
    mp_int_t stop;
    mp_int_t step;
} rw_range_it_t;
static const mp_obj_type_t *range_it_type;

void rw_native_tier_init(void) {
    if (range_it_type == NULL) {
        rw_range_t r = { { &mp_type_range }, 0, 0, 1 };
        mp_obj_iter_buf_t buf;
        mp_getiter_fun_t getiter = (mp_getiter_fun_t)MP_OBJ_TYPE_GET_SLOT(&mp_type_range, iter);
        mp_obj_t it = getiter(MP_OBJ_FROM_PTR(&r), &buf);
        range_it_type = ((mp_obj_base_t *)MP_OBJ_TO_PTR(it))->type;
    }
}

// A twin's for loop: the iterator's own iternext (what mp_iternext calls for a type whose
// iter slot is its iternext), a range's step inline; anything else takes mp_iternext.
mp_obj_t mp_native_iternext_direct(mp_obj_iter_buf_t *iter) {
    mp_obj_t obj = iter->base.type == MP_OBJ_NULL ? iter->buf[0] : MP_OBJ_FROM_PTR(iter);
    if (mp_obj_is_obj(obj)) {
        const mp_obj_type_t *t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(obj))->type;
        if (t == range_it_type) {
            rw_range_it_t *r = MP_OBJ_TO_PTR(obj);
            if ((r->step > 0 && r->cur < r->stop) || (r->step < 0 && r->cur > r->stop)) {
                mp_obj_t out = MP_OBJ_NEW_SMALL_INT(r->cur);
                r->cur += r->step;
                return out;
            }
            MP_STATE_THREAD(stop_iteration_arg) = MP_OBJ_NULL;
            return MP_OBJ_STOP_ITERATION;
        }
        // (A stream's flags hold this bit and ITER_IS_CUSTOM's: it is not one of these.)
        if ((t->flags & MP_TYPE_FLAG_ITER_IS_STREAM) == MP_TYPE_FLAG_ITER_IS_ITERNEXT) {
            stack_check();  // as mp_iternext: enumerate, zip and map call it again
            MP_STATE_THREAD(stop_iteration_arg) = MP_OBJ_NULL;
            return ((mp_fun_1_t)MP_OBJ_TYPE_GET_SLOT(t, iter))(obj);
        }
    }
    return mp_iternext(obj);
}
