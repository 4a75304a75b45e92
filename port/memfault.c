// SPDX-License-Identifier: MIT
// Memory faults as Python exceptions: machine.mem8/16/32/64 through the kernel's
// fault-checked accessors, and CPU exceptions in native/viper code raised as OSError,
// so a bad address typed at the REPL never stops the machine.
#include <stdio.h>

#include "py/mperrno.h"
#include "py/runtime.h"

#include "kapi.h"
#include "port.h"

static const char *fault_kind(const struct kfault *f, bool write) {
    if (f->vector == 14) {
        if (!(f->error & 1)) {
            return "page not present";
        }
        return write ? "page is read-only" : "protection violation";
    }
    if (f->vector == 13) {
        return "general protection (non-canonical address?)";
    }
    return "CPU exception";
}

// OSError(EFAULT, "...") naming the access and the address; e.errno == errno.EFAULT.
static NORETURN void raise_efault(const char *what, const struct kfault *f, bool write) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s at 0x%lx: %s (vector %u, error 0x%lx)", what,
             (unsigned long)f->addr, fault_kind(f, write), (unsigned)f->vector,
             (unsigned long)f->error);
    mp_obj_t args[2] = {
        MP_OBJ_NEW_SMALL_INT(MP_EFAULT),
        mp_obj_new_str(msg, strlen(msg)),
    };
    nlr_raise(mp_obj_exception_make_new(&mp_type_OSError, 2, 0, args));
}

// ---- machine.memN[addr] -----------------------------------------------------------------

typedef struct _port_mem_obj_t {
    mp_obj_base_t base;
    unsigned width;  // bytes
} port_mem_obj_t;

static void port_mem_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    port_mem_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<%u-bit memory>", 8 * self->width);
}

static uintptr_t port_mem_addr(mp_obj_t index, unsigned width) {
    uintptr_t addr = mp_obj_get_int_truncated(index);
    if (addr & (width - 1)) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("memory address 0x%x not aligned to %u bytes"),
                          (unsigned)addr, width);
    }
    return addr;
}

static mp_obj_t port_mem_subscr(mp_obj_t self_in, mp_obj_t index, mp_obj_t value) {
    port_mem_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (value == MP_OBJ_NULL) {
        return MP_OBJ_NULL;  // del memN[addr]: not supported
    }
    uintptr_t addr = port_mem_addr(index, self->width);
    struct kfault fault;
    char what[48];
    if (value == MP_OBJ_SENTINEL) {
        uint64_t v;
        if (!kmem_read_checked(addr, self->width, &v, &fault)) {
            snprintf(what, sizeof what, "read of %u bytes", self->width);
            raise_efault(what, &fault, false);
        }
        return mp_obj_new_int_from_uint(v);
    }
    uint64_t v = self->width == 8 ? (uint64_t)mp_obj_int_get_uint_checked(value)
                                  : (uint64_t)mp_obj_get_int_truncated(value);
    if (!kmem_write_checked(addr, self->width, v, &fault)) {
        snprintf(what, sizeof what, "write of %u bytes", self->width);
        raise_efault(what, &fault, true);
    }
    return mp_const_none;
}

MP_DEFINE_CONST_OBJ_TYPE(port_mem_type, MP_QSTR_mem, MP_TYPE_FLAG_NONE, print, port_mem_print,
                         subscr, port_mem_subscr);

const port_mem_obj_t port_mem8_obj = { { &port_mem_type }, 1 };
const port_mem_obj_t port_mem16_obj = { { &port_mem_type }, 2 };
const port_mem_obj_t port_mem32_obj = { { &port_mem_type }, 4 };
const port_mem_obj_t port_mem64_obj = { { &port_mem_type }, 8 };

// ---- faults in native code --------------------------------------------------------------

// The kernel resumes here, on the VM's stack, after native code faulted. Raising unwinds
// to the innermost nlr_push as an exception from that code would.
static void native_fault(const struct kfault *f) {
    struct kfault copy = *f;  // the kernel's slot is reused by the next fault
    char what[64];
    snprintf(what, sizeof what, "native code at 0x%lx faulted", (unsigned long)copy.rip);
    raise_efault(what, &copy, (copy.error & 2) != 0);
}

void port_memfault_init(void) {
    kfault_set_exec_handler(native_fault);
}
