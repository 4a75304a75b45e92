// SPDX-License-Identifier: MIT
// Native promotion (issue 7): see rw_promote.c.
#ifndef LOCIOS_VM_OPT_MOD_RW_PROMOTE_H
#define LOCIOS_VM_OPT_MOD_RW_PROMOTE_H

#include "py/obj.h"

// The type of a promoted function: named 'function', its bytecode left as it was.
extern const mp_obj_type_t rw_type_fun_promoted;
// ... and of a promoted generator function.
extern const mp_obj_type_t rw_type_gen_promoted;

// Calls to fn (a plain bytecode function) run twin (a native function compiled from
// the same def) until rw_demote(fn); raises TypeError/ValueError when they do not match.
void rw_promote(mp_obj_t fn, mp_obj_t twin);
// Undo rw_promote: returns the twin, or None when fn is not promoted.
mp_obj_t rw_demote(mp_obj_t fn);
// fn's twin, or None.
mp_obj_t rw_twin(mp_obj_t fn);

#endif
