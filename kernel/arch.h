// SPDX-License-Identifier: MIT
// x86_64 instructions the rest of the kernel needs, as inline functions with arch_
// names, so no other file carries inline assembly.
#ifndef LOCIOS_KERNEL_ARCH_H
#define LOCIOS_KERNEL_ARCH_H

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
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(sub));
}

#define ARCH_CR_ACCESSORS(n) \
    static inline uint64_t arch_read_cr##n(void) { \
        uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
    static inline void arch_write_cr##n(uint64_t v) { \
        __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory"); }
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
static inline void arch_cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void arch_sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void arch_pause(void) { __asm__ volatile("pause"); }

#define ARCH_RFLAGS_IF   (1ULL << 9)

#define ARCH_MSR_EFER        0xc0000080
#define ARCH_MSR_APIC_BASE   0x1b
#define ARCH_EFER_NXE        (1ULL << 11)
#define ARCH_CR0_MP          (1ULL << 1)
#define ARCH_CR0_EM          (1ULL << 2)
#define ARCH_CR0_TS          (1ULL << 3)
#define ARCH_CR0_WP          (1ULL << 16)
#define ARCH_CR4_OSFXSR      (1ULL << 9)
#define ARCH_CR4_OSXMMEXCPT  (1ULL << 10)
#define ARCH_CR4_PGE         (1ULL << 7)

#endif
