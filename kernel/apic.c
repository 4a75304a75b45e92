// SPDX-License-Identifier: MIT
// Interrupt controllers: the legacy 8259 pair remapped and masked, the local APIC
// (periodic timer calibrated against the TSC) and the I/O APIC routing ISA IRQs. The
// local APIC is driven in whichever mode the firmware left it: xAPIC through its MMIO
// page, or x2APIC through MSRs (where the MMIO page reads as nothing).
#include "arch.h"
#include "config.h"
#include "kernel.h"

enum {
    LAPIC_ID = 0x20,
    LAPIC_TPR = 0x80,
    LAPIC_EOI = 0xb0,
    LAPIC_SVR = 0xf0,
    LAPIC_LVT_TIMER = 0x320,
    LAPIC_LVT_LINT0 = 0x350,
    LAPIC_LVT_ERROR = 0x370,
    LAPIC_TIMER_INIT = 0x380,
    LAPIC_TIMER_CUR = 0x390,
    LAPIC_TIMER_DIV = 0x3e0,
};
#define LAPIC_SVR_ENABLE     (1u << 8)
#define LAPIC_LVT_MASKED     (1u << 16)
#define LAPIC_TIMER_PERIODIC (1u << 17)
#define LAPIC_DIV_16         0x3
#define APIC_BASE_ENABLE     (1ULL << 11)
#define APIC_BASE_X2APIC     (1ULL << 10)
#define X2APIC_MSR_BASE      0x800  // register r is MSR 0x800 + r / 16
#define IOAPIC_REDIR(pin)    (0x10 + 2 * (pin))
#define IOAPIC_MASKED        (1u << 16)
#define IOAPIC_ACTIVE_LOW    (1u << 13)
#define IOAPIC_LEVEL         (1u << 15)
#define PIC1_CMD             0x20
#define PIC1_DATA            0x21
#define PIC2_CMD             0xa0
#define PIC2_DATA            0xa1

static volatile uint32_t *lapic;
static bool x2apic;
static volatile uint32_t *ioapic;
static uint32_t lapic_timer_hz;  // LAPIC timer input after the divider

static uint32_t lapic_read(unsigned reg) {
    return x2apic ? (uint32_t)arch_rdmsr(X2APIC_MSR_BASE + reg / 16) : lapic[reg / 4];
}
static void lapic_write(unsigned reg, uint32_t v) {
    if (x2apic) {
        arch_wrmsr(X2APIC_MSR_BASE + reg / 16, v);
    } else {
        lapic[reg / 4] = v;
    }
}

// The APIC ID as the I/O APIC's physical destination field wants it.
static uint32_t lapic_id(void) {
    uint32_t id = lapic_read(LAPIC_ID);
    return x2apic ? id : id >> 24;
}

bool apic_is_x2apic(void) {
    return x2apic;
}

static uint32_t ioapic_read(unsigned reg) {
    ioapic[0] = reg;
    return ioapic[4];
}
static void ioapic_write(unsigned reg, uint32_t v) {
    ioapic[0] = reg;
    ioapic[4] = v;
}

static void pic_remap_and_mask(void) {
    arch_out8(PIC1_CMD, 0x11);  // ICW1: init, ICW4 follows
    arch_out8(PIC2_CMD, 0x11);
    arch_out8(PIC1_DATA, KVEC_PIC_BASE);  // ICW2: vector bases
    arch_out8(PIC2_DATA, KVEC_PIC_BASE + 8);
    arch_out8(PIC1_DATA, 0x04);  // ICW3: slave on IRQ2
    arch_out8(PIC2_DATA, 0x02);
    arch_out8(PIC1_DATA, 0x01);  // ICW4: 8086 mode
    arch_out8(PIC2_DATA, 0x01);
    arch_out8(PIC1_DATA, 0xff);  // mask everything
    arch_out8(PIC2_DATA, 0xff);
}

void apic_init(void) {
    pic_remap_and_mask();
    uint64_t base = arch_rdmsr(ARCH_MSR_APIC_BASE);
    // Leaving x2APIC mode would need the APIC disabled first; staying in it is simpler
    // and what the firmware (or loader_x2apic=1) chose.
    x2apic = base & APIC_BASE_X2APIC;
    if (!(base & APIC_BASE_ENABLE)) {
        arch_wrmsr(ARCH_MSR_APIC_BASE, base | APIC_BASE_ENABLE);
    }
    lapic = (volatile uint32_t *)(uintptr_t)(base & 0xffffff000ULL);
    lapic_write(LAPIC_TPR, 0);
    lapic_write(LAPIC_LVT_LINT0, LAPIC_LVT_MASKED);
    lapic_write(LAPIC_LVT_ERROR, LAPIC_LVT_MASKED);
    lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
    lapic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | KVEC_SPURIOUS);

    const struct acpi_info *a = acpi_get();
    if (a->ioapic_addr) {
        ioapic = (volatile uint32_t *)(uintptr_t)a->ioapic_addr;
        unsigned pins = (ioapic_read(1) >> 16 & 0xff) + 1;
        for (unsigned pin = 0; pin < pins; pin++) {
            ioapic_write(IOAPIC_REDIR(pin) + 1, 0);
            ioapic_write(IOAPIC_REDIR(pin), IOAPIC_MASKED);
        }
    }
}

static void timer_tick(struct int_frame *f) {
    (void)f;
    ktime_tick();
}

void apic_timer_start(uint32_t hz) {
    lapic_write(LAPIC_TIMER_DIV, LAPIC_DIV_16);
    lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
    uint64_t t0 = arch_rdtsc();
    uint64_t window = ktime_tsc_hz() / 1000 * KLAPIC_CALIBRATE_MS;
    while (arch_rdtsc() - t0 < window) {
        arch_pause();
    }
    uint32_t counted = 0xffffffff - lapic_read(LAPIC_TIMER_CUR);
    uint64_t t1 = arch_rdtsc();
    lapic_timer_hz = (uint32_t)((uint64_t)counted * ktime_tsc_hz() / (t1 - t0));
    if (lapic_timer_hz < hz) {
        kprintf("kernel: the local APIC timer counted %u in %u ms (%s mode, APIC base "
                "0x%lx); expected at least %u Hz\n",
                counted, KLAPIC_CALIBRATE_MS, x2apic ? "x2APIC" : "xAPIC",
                arch_rdmsr(ARCH_MSR_APIC_BASE), hz);
        kpanic("LAPIC timer calibration failed: the timer did not count");
    }
    irq_set_handler(KVEC_TIMER, timer_tick);
    lapic_write(LAPIC_LVT_TIMER, KVEC_TIMER | LAPIC_TIMER_PERIODIC);
    apic_timer_set_hz(hz);
    ktime_timer_started(hz);
}

// Writing the initial count restarts the periodic countdown at the new period.
void apic_timer_set_hz(uint32_t hz) {
    lapic_write(LAPIC_TIMER_INIT, lapic_timer_hz / hz);
}

uint32_t apic_timer_input_hz(void) {
    return lapic_timer_hz;
}

void apic_route_irq(uint32_t gsi, uint16_t flags, uint8_t vector) {
    const struct acpi_info *a = acpi_get();
    if (!ioapic || gsi < a->ioapic_gsi_base) {
        kprintf("kernel: no I/O APIC for GSI %u; console input is polled from the tick\n", gsi);
        return;
    }
    uint32_t pin = gsi - a->ioapic_gsi_base;
    uint32_t lo = vector;
    if ((flags & 3) == 3) {
        lo |= IOAPIC_ACTIVE_LOW;
    }
    if ((flags >> 2 & 3) == 3) {
        lo |= IOAPIC_LEVEL;
    }
    uint32_t dest = lapic_id();
    if (dest > 0xff) {
        kprintf("kernel: APIC ID %u does not fit the I/O APIC's destination field (no "
                "interrupt remapping); GSI %u is polled from the tick\n",
                dest, gsi);
        return;
    }
    ioapic_write(IOAPIC_REDIR(pin) + 1, dest << 24);
    ioapic_write(IOAPIC_REDIR(pin), lo);
}

void apic_eoi(void) {
    lapic_write(LAPIC_EOI, 0);
}
