// SPDX-License-Identifier: MIT
// Exceptions escaping swapped functions (issue 7): see rw_watch.c.
#ifndef LOCIOS_VM_OPT_MOD_RW_WATCH_H
#define LOCIOS_VM_OPT_MOD_RW_WATCH_H

#include <stddef.h>

#include "py/obj.h"

// rw_watch_n (functions watched now: the VM's frame-raise hook and promoted calls test it
// first), rw_watch_raise and rw_watch_deinit are declared in vm/vm_hooks.h.

// Watch fn (a function object): an exception escaping a call of it whose exact type is
// not in `allowed` (a tuple of types) is noted. False when the table is full.
bool rw_watch(mp_obj_t fn, mp_obj_t allowed);
// Stop watching fn (nothing when it is not watched).
void rw_unwatch(mp_obj_t fn);
// The first type not allowed that escaped a call of fn since it was watched, or None.
mp_obj_t rw_watch_seen(mp_obj_t fn);

#endif
