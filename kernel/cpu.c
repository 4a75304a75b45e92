// SPDX-License-Identifier: MIT
// The CPU's own tables: SSE enabled, a GDT with a 64-bit code/data pair and a TSS whose
// IST stacks (each over a guard page) catch #DF, NMI and #MC, and an IDT pointing every
// vector at its isr.S stub.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define GDT_KCODE 0x08
#define GDT_KDATA 0x10
#define GDT_TSS   0x18

enum {
    IST_DF = 1,
    IST_NMI = 2,
    IST_MC = 3,
    IST_COUNT = 3
};

struct __attribute__((packed)) tss64 {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
};

struct __attribute__((packed)) idt_gate {
    uint16_t offset_lo, selector;
    uint8_t ist, type_attr;
    uint16_t offset_mid;
    uint32_t offset_hi, reserved;
};

static uint64_t gdt[5] __attribute__((aligned(16)));
static struct tss64 tss __attribute__((aligned(16)));
static struct idt_gate idt[256] __attribute__((aligned(16)));

// Each IST stack is one guard page followed by the stack itself.
static uint8_t ist_area[IST_COUNT][KPAGE_SIZE + KIST_STACK_SIZE] __attribute__((aligned(4096)));
static struct cpu_stack ist_stacks[IST_COUNT];
static const char *const ist_names[IST_COUNT] = { "#DF IST", "NMI IST", "#MC IST" };

void cpu_enable_sse(void) {
    uint64_t cr0 = arch_read_cr0();
    cr0 &= ~(ARCH_CR0_EM | ARCH_CR0_TS);
    cr0 |= ARCH_CR0_MP;
    arch_write_cr0(cr0);
    arch_write_cr4(arch_read_cr4() | ARCH_CR4_OSFXSR | ARCH_CR4_OSXMMEXCPT);
    uint32_t mxcsr = 0x1f80;  // all SSE exceptions masked, round to nearest
    arch_fpu_init(mxcsr);
}

void cpu_init_gdt(void) {
    gdt[0] = 0;
    gdt[1] = 0x00af9a000000ffffULL;  // 64-bit code, DPL0, present
    gdt[2] = 0x00cf92000000ffffULL;  // data, DPL0, present
    uintptr_t base = (uintptr_t)&tss;
    uint64_t limit = sizeof(tss) - 1;
    gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
             ((limit >> 16 & 0xf) << 48) | ((uint64_t)(base >> 24 & 0xff) << 56);
    gdt[4] = base >> 32;

    for (int i = 0; i < IST_COUNT; i++) {
        uintptr_t guard = (uintptr_t)ist_area[i];
        ist_stacks[i] = (struct cpu_stack){ ist_names[i], guard, guard + KPAGE_SIZE,
                                            guard + KPAGE_SIZE + KIST_STACK_SIZE };
        tss.ist[i] = ist_stacks[i].top;
    }
    tss.iomap_base = sizeof(tss);  // no I/O permission bitmap

    struct arch_table_ptr p = { sizeof(gdt) - 1, (uintptr_t)gdt };
    arch_load_gdt(&p, GDT_KCODE, GDT_KDATA, GDT_TSS);
}

size_t cpu_ist_stacks(const struct cpu_stack **out) {
    *out = ist_stacks;
    return IST_COUNT;
}

void cpu_init_idt(void) {
    for (unsigned v = 0; v < 256; v++) {
        uintptr_t h = (uintptr_t)isr_stubs + v * ISR_STUB_SIZE;
        uint8_t ist = v == 8 ? IST_DF : v == 2 ? IST_NMI : v == 18 ? IST_MC : 0;
        idt[v] = (struct idt_gate){
            .offset_lo = h & 0xffff,
            .selector = GDT_KCODE,
            .ist = ist,
            .type_attr = 0x8e,  // present, DPL0, 64-bit interrupt gate (IF cleared)
            .offset_mid = h >> 16 & 0xffff,
            .offset_hi = h >> 32,
        };
    }
    struct arch_table_ptr p = { sizeof(idt) - 1, (uintptr_t)idt };
    arch_load_idt(&p);
}
