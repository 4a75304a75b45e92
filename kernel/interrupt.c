// SPDX-License-Identifier: MIT
// Where every interrupt lands after isr.S saved the registers: CPU exceptions go to the
// fault dump, device vectors to their handler followed by a LAPIC EOI.
#include "config.h"
#include "kernel.h"

static irq_handler handlers[256];

void irq_set_handler(unsigned vector, irq_handler h) {
    handlers[vector & 0xff] = h;
}

void isr_dispatch(struct int_frame *f) {
    unsigned v = (unsigned)f->vector;
    if (v < 32) {
        if (kfault_recover(f)) {
            return;   // resumes at a fixup or in the port's handler; no EOI for exceptions
        }
        fault_report(f);
    }
    if (v == KVEC_SPURIOUS || (v >= KVEC_PIC_BASE && v < KVEC_PIC_BASE + 16)) {
        return;   // spurious: no EOI (all 8259 lines are masked)
    }
    if (handlers[v]) {
        handlers[v](f);
    }
    apic_eoi();
}
