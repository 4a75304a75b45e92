// SPDX-License-Identifier: MIT
// Native promotion (issue 7): see rw_promote.c.
#ifndef LOCIOS_VM_OPT_MOD_RW_PROMOTE_H
#define LOCIOS_VM_OPT_MOD_RW_PROMOTE_H

#include "py/obj.h"

// The type of a promoted function: named 'function', its bytecode left as it was.
extern const mp_obj_type_t rw_type_fun_promoted;
// ... of a promoted generator function, and of a promoted native function.
extern const mp_obj_type_t rw_type_gen_promoted;
extern const mp_obj_type_t rw_type_native_promoted;
// The attr slot of a native function whose type the optimiser changed.
void rw_native_fun_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest);
// ... and its print slot, as a function's.
void rw_native_fun_print(const mp_print_t *print, mp_obj_t o_in, mp_print_kind_t kind);

// Calls to fn (a plain bytecode or native function) run twin (a native function compiled from
// the same def) until rw_demote(fn); raises TypeError/ValueError when they do not match.
void rw_promote(mp_obj_t fn, mp_obj_t twin);
// Undo rw_promote: returns the twin, or None when fn is not promoted.
mp_obj_t rw_demote(mp_obj_t fn);
// The promoted type's call slot: runs fn's twin (watched, when swaps are).
mp_obj_t rw_promoted_call(mp_obj_t fn, size_t n_args, size_t n_kw, const mp_obj_t *args);
// fn's twin, or None.
mp_obj_t rw_twin(mp_obj_t fn);

#endif
