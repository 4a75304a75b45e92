// SPDX-License-Identifier: MIT
// x86_64 instructions the rest of the kernel needs, as inline functions with arch_
// names, so no other C file in kernel/ carries inline assembly (the assembly that
// cannot live in a C function is in entry.S, isr.S and probe_access.S).
#ifndef LOCIOS_KERNEL_ARCH_H
#define LOCIOS_KERNEL_ARCH_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t arch_in8(uint16_t port) {
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t arch_in16(uint16_t port) {
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t arch_in32(uint16_t port) {
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline void arch_out8(uint16_t port, uint8_t v) {
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void arch_out16(uint16_t port, uint16_t v) {
    __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void arch_out32(uint16_t port, uint32_t v) {
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint64_t arch_rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t arch_rdmsr(uint32_t msr) {
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
static inline void arch_wrmsr(uint32_t msr, uint64_t v) {
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline void arch_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid"
                     : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(sub));
}

#define ARCH_CR_ACCESSORS(n)                                       \
    static inline uint64_t arch_read_cr##n(void) {                 \
        uint64_t v;                                                \
        __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));          \
        return v;                                                  \
    }                                                              \
    static inline void arch_write_cr##n(uint64_t v) {              \
        __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory"); \
    }
ARCH_CR_ACCESSORS(0)
ARCH_CR_ACCESSORS(2)
ARCH_CR_ACCESSORS(3)
ARCH_CR_ACCESSORS(4)
#undef ARCH_CR_ACCESSORS

static inline void arch_invlpg(uintptr_t va) {
    __asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

static inline uint64_t arch_save_flags_cli(void) {
    uint64_t f;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(f) : : "memory");
    return f;
}
static inline void arch_restore_flags(uint64_t f) {
    __asm__ volatile("pushq %0; popfq" : : "r"(f) : "memory", "cc");
}
static inline uint64_t arch_read_flags(void) {
    uint64_t f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f;
}
static inline void arch_cli(void) {
    __asm__ volatile("cli" ::: "memory");
}
static inline void arch_sti(void) {
    __asm__ volatile("sti" ::: "memory");
}
static inline void arch_pause(void) {
    __asm__ volatile("pause");
}

// Halt with interrupts off: only an NMI, SMI or reset wakes the CPU.
static inline void arch_cli_halt(void) {
    __asm__ volatile("cli; hlt");
}

// For a caller running with interrupts off: open them for the halt alone and close them
// again on wake-up. sti takes effect after the next instruction, so an interrupt that
// arrives between the caller's last check and the hlt still ends the halt.
static inline void arch_halt_until_interrupt(void) {
    __asm__ volatile("sti; hlt; cli" ::: "memory");
}

// Raise #UD on purpose (kcrash's invalid-opcode case).
static inline void arch_invalid_opcode(void) {
    __asm__ volatile("ud2");
}

// A software interrupt through the IDT. `int` takes its vector as an immediate, so this
// is a macro: the vector must be a compile-time constant.
#define arch_soft_int(vector) __asm__ volatile("int %0" : : "i"(vector) : "memory")

// Copy and fill with the string instructions (the kernel's memcpy and memset), used
// eight bytes a step with the last few bytes one by one: TCG runs each iteration of a
// `rep` as one instruction (and -icount counts it so), so byte steps made every byte of
// a copy cost as much as an instruction; on hardware qword steps are never slower.
static inline void arch_copy_bytes(void *dst, const void *src, size_t n) {
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}
static inline void arch_copy_qwords(void *dst, const void *src, size_t n) {
    __asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}
static inline void arch_fill_bytes(void *dst, int c, size_t n) {
    __asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(c) : "memory");
}
static inline void arch_fill_qwords(void *dst, uint64_t pattern, size_t n) {
    __asm__ volatile("rep stosq" : "+D"(dst), "+c"(n) : "a"(pattern) : "memory");
}

// Reset the x87 unit and load MXCSR (SSE control and status).
static inline void arch_fpu_init(uint32_t mxcsr) {
    __asm__ volatile("fninit; ldmxcsr %0" : : "m"(mxcsr));
}

// The operand of lgdt and lidt.
struct __attribute__((packed)) arch_table_ptr {
    uint16_t limit;
    uint64_t base;
};

// Load a GDT, reload CS (by a far return) and the data segments from it, and load the
// task register. code, data and tss are selectors into the new table.
static inline void arch_load_gdt(const struct arch_table_ptr *p, uint16_t code, uint16_t data,
                                 uint16_t tss) {
    __asm__ volatile("lgdt %0\n"
                     "pushq %1\n"
                     "leaq 1f(%%rip), %%rax\n"
                     "pushq %%rax\n"
                     "lretq\n"
                     "1:\n"
                     "movw %w2, %%ax\n"
                     "movw %%ax, %%ds\n"
                     "movw %%ax, %%es\n"
                     "movw %%ax, %%ss\n"
                     "movw %%ax, %%fs\n"
                     "movw %%ax, %%gs\n"
                     "ltr %w3\n"
                     :
                     : "m"(*p), "ri"((uint64_t)code), "r"(data), "r"(tss)
                     : "rax", "memory");
}

static inline void arch_load_idt(const struct arch_table_ptr *p) {
    __asm__ volatile("lidt %0" : : "m"(*p));
}

// Load an empty IDT and raise an exception: with no gate to deliver it, the CPU
// double- then triple-faults and resets. The reset of last resort.
static inline void arch_triple_fault(void) {
    struct arch_table_ptr empty = { 0, 0 };
    __asm__ volatile("lidt %0; int3" : : "m"(empty));
}

#define ARCH_RFLAGS_IF (1ULL << 9)

#define ARCH_MSR_EFER       0xc0000080
#define ARCH_MSR_APIC_BASE  0x1b
#define ARCH_MSR_PAT        0x277
#define ARCH_EFER_NXE       (1ULL << 11)
#define ARCH_CR0_MP         (1ULL << 1)
#define ARCH_CR0_EM         (1ULL << 2)
#define ARCH_CR0_TS         (1ULL << 3)
#define ARCH_CR0_WP         (1ULL << 16)
#define ARCH_CR4_OSFXSR     (1ULL << 9)
#define ARCH_CR4_OSXMMEXCPT (1ULL << 10)
#define ARCH_CR4_PGE        (1ULL << 7)

#endif
