// SPDX-License-Identifier: MIT
// Recoverable faults. A CPU exception at an instruction listed in .kprobe_table (the
// checked accessors of probe_access.S) resumes at its fixup; one raised by code in the
// executable arena (native/viper code) resumes in the port's handler, which turns it
// into a Python exception. Everything else still goes to the fault dump.
#include "arch.h"
#include "config.h"
#include "kernel.h"

struct kprobe_entry {
    uint64_t insn, fixup;
};
extern const struct kprobe_entry __kprobe_table_start[], __kprobe_table_end[];

int kprobe_read8(uintptr_t addr, uint64_t *out);
int kprobe_read16(uintptr_t addr, uint64_t *out);
int kprobe_read32(uintptr_t addr, uint64_t *out);
int kprobe_read64(uintptr_t addr, uint64_t *out);
int kprobe_write8(uintptr_t addr, uint64_t value);
int kprobe_write16(uintptr_t addr, uint64_t value);
int kprobe_write32(uintptr_t addr, uint64_t value);
int kprobe_write64(uintptr_t addr, uint64_t value);

// The fault the last failed checked access took (one CPU, and the accessors are
// never used from interrupt handlers, so one slot is enough).
static struct kfault last_probe_fault;
static struct kfault exec_fault;
static void (*exec_handler)(const struct kfault *f);
static uint64_t recovered_count;

static void record(struct kfault *out, const struct int_frame *f) {
    out->vector = (uint32_t)f->vector;
    out->error = f->error;
    out->addr = f->vector == 14 ? arch_read_cr2() : 0;
    out->rip = f->rip;
}

// Vectors that say something about the instruction that raised them. NMI, #DF and #MC
// are about the machine, never recoverable.
static bool instruction_fault(uint64_t v) {
    return v < 32 && v != 2 && v != 8 && v != 18;
}

bool kfault_recover(struct int_frame *f) {
    if (!instruction_fault(f->vector)) {
        return false;
    }
    for (const struct kprobe_entry *e = __kprobe_table_start; e < __kprobe_table_end; e++) {
        if (e->insn == f->rip) {
            record(&last_probe_fault, f);
            f->rip = e->fixup;
            recovered_count++;
            return true;
        }
    }
    if (exec_handler && kexec_contains(f->rip) && kstack_contains(f->rsp, &(uintptr_t){ 0 })) {
        // Resume in the handler as if the faulting instruction had called it: same
        // stack, below the interrupted frame, 16-byte aligned before the "call".
        record(&exec_fault, f);
        f->rsp = ((f->rsp - 128) & ~15ULL) - 8;
        f->rdi = (uintptr_t)&exec_fault;
        f->rip = (uintptr_t)exec_handler;
        recovered_count++;
        return true;
    }
    return false;
}

static bool fill_fault(bool ok, uintptr_t addr, struct kfault *fault) {
    if (!ok && fault) {
        *fault = last_probe_fault;
        if (fault->vector != 14) {
            fault->addr = addr;  // #GP (non-canonical address) has no CR2
        }
    }
    return ok;
}

bool kmem_read_checked(uintptr_t addr, unsigned width, uint64_t *value, struct kfault *fault) {
    int ok;
    switch (width) {
        case 1:
            ok = kprobe_read8(addr, value);
            break;
        case 2:
            ok = kprobe_read16(addr, value);
            break;
        case 4:
            ok = kprobe_read32(addr, value);
            break;
        case 8:
            ok = kprobe_read64(addr, value);
            break;
        default:
            return false;
    }
    return fill_fault(ok, addr, fault);
}

bool kmem_write_checked(uintptr_t addr, unsigned width, uint64_t value, struct kfault *fault) {
    int ok;
    switch (width) {
        case 1:
            ok = kprobe_write8(addr, value);
            break;
        case 2:
            ok = kprobe_write16(addr, value);
            break;
        case 4:
            ok = kprobe_write32(addr, value);
            break;
        case 8:
            ok = kprobe_write64(addr, value);
            break;
        default:
            return false;
    }
    return fill_fault(ok, addr, fault);
}

void kfault_set_exec_handler(void (*handler)(const struct kfault *f)) {
    exec_handler = handler;
}

uint64_t kfault_recovered(void) {
    return recovered_count;
}
