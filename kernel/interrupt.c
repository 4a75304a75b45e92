// SPDX-License-Identifier: MIT
// Where every interrupt lands after isr.S saved the registers: CPU exceptions go to the
// fault dump, device vectors to their handler followed by a LAPIC EOI, spurious ones
// are counted and dropped. The vector map is in kernel/VECTORS.md.
#include "arch.h"
#include "config.h"
#include "kernel.h"

static irq_handler handlers[256];
static volatile uint64_t delivered[256];  // device interrupts per vector
static volatile uint64_t spurious;

void irq_set_handler(unsigned vector, irq_handler h) {
    handlers[vector & 0xff] = h;
}

void isr_dispatch(struct int_frame *f) {
    unsigned v = (unsigned)f->vector;
    if (v < 32) {
        if (kfault_recover(f)) {
            return;  // resumes at a fixup or in the port's handler; no EOI for exceptions
        }
        fault_report(f);
    }
    // The LAPIC's spurious vector, or the 8259's IRQ7/IRQ15 ghosts (all its lines are
    // masked, so anything from it is spurious): no EOI, nothing was acknowledged.
    if (v == KVEC_SPURIOUS || (v >= KVEC_PIC_BASE && v < KVEC_PIC_BASE + 16)) {
        spurious++;
        return;
    }
    delivered[v]++;
    if (handlers[v]) {
        handlers[v](f);
    }
    apic_eoi();
}

void kirq_get_stats(struct kirq_stats *out) {
    uint64_t f = arch_save_flags_cli();  // one consistent snapshot
    uint64_t all = 0;
    for (unsigned v = 32; v < 256; v++) {
        all += delivered[v];
    }
    out->timer = delivered[KVEC_TIMER];
    out->com1 = delivered[KVEC_COM1];
    out->spurious = spurious;
    out->other = all - out->timer - out->com1;
    arch_restore_flags(f);
}

// Software interrupts through the IDT reach the same dispatch as the hardware's
// spurious deliveries, without leaving an in-service bit in the LAPIC.
void kirq_raise_spurious(void) {
    arch_soft_int(KVEC_SPURIOUS);
    arch_soft_int(KVEC_PIC_BASE + 7);
    arch_soft_int(KVEC_PIC_BASE + 15);
}
