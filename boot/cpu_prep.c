// SPDX-License-Identifier: MIT
// The processor state the hand-off depends on: 4-level paging (refused with a message
// when the firmware left 5-level paging on), and the test option loader_x2apic=1, which
// switches the local APIC to x2APIC mode just before the jump, as some firmware does.
#include <string.h>

#include "loader.h"
#include "options.h"

#define CR4_LA57          (1ULL << 12)
#define CPUID1_ECX_X2APIC (1u << 21)
#define MSR_APIC_BASE     0x1b
#define APIC_BASE_EN      (1ULL << 11)
#define APIC_BASE_EXTD    (1ULL << 10)

static uint64_t read_cr4(void) {
    uint64_t v;
    __asm__ volatile("mov %%cr4, %0" : "=r"(v));
    return v;
}

static uint32_t cpuid1_ecx(void) {
    uint32_t a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    return c;
}

static uint64_t rdmsr(uint32_t msr) {
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return (uint64_t)hi << 32 | lo;
}

static void wrmsr(uint32_t msr, uint64_t v) {
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

EFI_STATUS cpu_check(void) {
    if (read_cr4() & CR4_LA57) {
        return fail(EFI_UNSUPPORTED,
                    "the firmware left 5-level paging on (CR4.LA57); this "
                    "loader builds 4-level page tables and cannot switch paging modes. "
                    "Turn 5-level paging off in the firmware set-up, or boot another "
                    "firmware build");
    }
    return EFI_SUCCESS;
}

int cpu_x2apic_wanted(const char *options) {
    size_t len;
    const char *v = options_value(options, "loader_x2apic", &len);
    if (!v || len != 1 || v[0] != '1') {
        return 0;
    }
    if (!(cpuid1_ecx() & CPUID1_ECX_X2APIC)) {
        con_printf("LociOS loader: loader_x2apic=1 ignored: this CPU has no x2APIC "
                   "(CPUID.1:ECX bit 21 clear)\n");
        return 0;
    }
    con_printf("LociOS loader: loader_x2apic=1: the LAPIC goes to x2APIC mode at the "
               "hand-off\n");
    return 1;
}

void cpu_x2apic_on(void) {
    uint64_t base = rdmsr(MSR_APIC_BASE);
    wrmsr(MSR_APIC_BASE, base | APIC_BASE_EN | APIC_BASE_EXTD);
}
