// SPDX-License-Identifier: MIT
// What the processor can do, from CPUID, read once at boot before paging, the APIC and
// the timer depend on it; the features LociOS cannot run without are named when absent.
// Also: whether this is QEMU (the debug-exit port exists only there).
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define FW_CFG_PORT_SEL  0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000

static bool has[CPU_FEATURE_COUNT];
static uint64_t stated_tsc_hz;
static char brand[49];
static bool qemu;

static const char *const names[CPU_FEATURE_COUNT] = {
    [CPU_NX] = "NX (execute disable)", [CPU_PAT] = "PAT",   [CPU_APIC] = "local APIC",
    [CPU_X2APIC] = "x2APIC",           [CPU_SSE2] = "SSE2", [CPU_INVARIANT_TSC] = "invariant TSC",
    [CPU_HYPERVISOR] = "hypervisor",
};

const char *cpu_feature_name(enum cpu_feature f) {
    return names[f];
}

bool cpu_has(enum cpu_feature f) {
    return has[f];
}

uint64_t cpu_stated_tsc_hz(void) {
    return stated_tsc_hz;
}

const char *cpu_brand(void) {
    return brand;
}

bool cpu_is_qemu(void) {
    return qemu;
}

// CPUID 0x15: TSC = crystal * EBX / EAX; the crystal may be unstated (ECX = 0), and
// then 0x16's base frequency in MHz is the next best statement.
static void read_stated_tsc(uint32_t max_leaf) {
    uint32_t r[4];
    if (max_leaf >= 0x15) {
        arch_cpuid(0x15, 0, r);
        if (r[0] && r[1] && r[2]) {
            stated_tsc_hz = (uint64_t)r[2] * r[1] / r[0];
            return;
        }
    }
    if (max_leaf >= 0x16) {
        arch_cpuid(0x16, 0, r);
        stated_tsc_hz = (uint64_t)(r[0] & 0xffff) * 1000000;
    }
}

static void read_brand(uint32_t max_ext) {
    if (max_ext < 0x80000004) {
        return;
    }
    uint32_t r[4];
    for (uint32_t i = 0; i < 3; i++) {
        arch_cpuid(0x80000002 + i, 0, r);
        memcpy(brand + 16 * i, r, 16);
    }
    brand[48] = '\0';
}

// QEMU answers "QEMU" on fw_cfg's data port after selecting the signature item. Only
// asked under a hypervisor: on bare metal those ports belong to nobody we know.
static bool fw_cfg_says_qemu(void) {
    arch_out16(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
    char sig[4];
    for (int i = 0; i < 4; i++) {
        sig[i] = (char)arch_in8(FW_CFG_PORT_DATA);
    }
    return memcmp(sig, "QEMU", 4) == 0;
}

void cpu_probe(void) {
    uint32_t r[4];
    arch_cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    arch_cpuid(1, 0, r);
    has[CPU_SSE2] = r[3] >> 26 & 1;
    has[CPU_APIC] = r[3] >> 9 & 1;
    has[CPU_PAT] = r[3] >> 16 & 1;
    has[CPU_X2APIC] = r[2] >> 21 & 1;
    has[CPU_HYPERVISOR] = r[2] >> 31 & 1;
    arch_cpuid(0x80000000, 0, r);
    uint32_t max_ext = r[0];
    if (max_ext >= 0x80000001) {
        arch_cpuid(0x80000001, 0, r);
        has[CPU_NX] = r[3] >> 20 & 1;
    }
    if (max_ext >= 0x80000007) {
        arch_cpuid(0x80000007, 0, r);
        has[CPU_INVARIANT_TSC] = r[3] >> 8 & 1;
    }
    read_stated_tsc(max_leaf);
    read_brand(max_ext);
    qemu = has[CPU_HYPERVISOR] && fw_cfg_says_qemu();

    // The kernel's floating point (the VM's doubles) and its interrupt controller.
    static const enum cpu_feature required[] = { CPU_SSE2, CPU_APIC };
    for (unsigned i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (!has[required[i]]) {
            kprintf("kernel: this CPU lacks %s, which LociOS needs (CPUID reports it "
                    "absent); it cannot run here\n",
                    names[required[i]]);
            kpanic("a required CPU feature is missing");
        }
    }
}
