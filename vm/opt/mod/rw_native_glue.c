// SPDX-License-Identifier: MIT
// The two plain entries native promotion's emitter changes add to mp_fun_table (their
// prototypes are in the patched py/nativeglue.h, vm/patches/0008 and 0009): the back-edge
// poll and the unbound-local error. The cached entries are in rw_sites.c.
#include "py/nativeglue.h"
#include "py/runtime.h"

// What the bytecode VM does after a jump: the port's loop hook (budget accounting, which
// may request a VM abort), then pending exceptions (Ctrl-C), scheduled callbacks and the
// abort itself.
void mp_native_poll(void) {
    MICROPY_VM_HOOK_LOOP
    mp_handle_pending(true);
}

// A local read before it is bound, or after `del` (vm/patches/0009 checks each load):
// the exception the bytecode VM's LOAD_FAST raises.
void mp_native_unbound_local(void) {
    mp_raise_msg(&mp_type_NameError, MP_ERROR_TEXT("local variable referenced before assignment"));
}
