// SPDX-License-Identifier: MIT
// The little of ACPI the kernel needs: RSDP -> XSDT/RSDT -> FADT (PM1 control blocks,
// reset register, DSDT \_S5 sleep types) and MADT (LAPIC, IOAPIC, IRQ overrides).
#include "arch.h"
#include "kernel.h"

#define SDT_HEADER_LEN 36
#define AML_NAME_OP    0x08
#define AML_PACKAGE_OP 0x12
#define ISA_IRQ_COM1   4

static struct acpi_info info = {.com1_gsi = ISA_IRQ_COM1};

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static bool checksum_ok(const uint8_t *p, uint32_t len) {
    uint8_t sum = 0;
    for (uint32_t i = 0; i < len; i++) {
        sum += p[i];
    }
    return sum == 0;
}

static const uint8_t *table_at(uint64_t pa) {
    const uint8_t *t = (const uint8_t *)(uintptr_t)pa;
    if (!pa || rd32(t + 4) < SDT_HEADER_LEN) {
        return NULL;
    }
    if (!checksum_ok(t, rd32(t + 4))) {
        kprintf("kernel: acpi: table %c%c%c%c at 0x%lx has a bad checksum, ignored\n",
                t[0], t[1], t[2], t[3], pa);
        return NULL;
    }
    return t;
}

// An AML integer constant; returns bytes consumed, 0 if it is none.
static int aml_int(const uint8_t *p, uint16_t *out) {
    switch (p[0]) {
    case 0x00: *out = 0; return 1;              // ZeroOp
    case 0x01: *out = 1; return 1;              // OneOp
    case 0x0a: *out = p[1]; return 2;           // BytePrefix
    case 0x0b: *out = rd16(p + 1); return 3;    // WordPrefix
    case 0x0c: *out = (uint16_t)rd32(p + 1); return 5;
    default: return 0;
    }
}

static void parse_s5(const uint8_t *dsdt) {
    uint32_t len = rd32(dsdt + 4);
    for (uint32_t i = SDT_HEADER_LEN; i + 12 < len; i++) {
        const uint8_t *p = dsdt + i;
        if (memcmp(p, "_S5_", 4) != 0 || p[4] != AML_PACKAGE_OP) {
            continue;
        }
        if (!(p[-1] == AML_NAME_OP || (p[-1] == '\\' && p[-2] == AML_NAME_OP))) {
            continue;
        }
        p += 5;
        p += 1 + (p[0] >> 6);   // PkgLength: lead byte plus 0..3 more
        p += 1;                 // NumElements
        int n = aml_int(p, &info.slp_typa);
        if (n && aml_int(p + n, &info.slp_typb)) {
            info.have_s5 = true;
        }
        return;
    }
}

static void parse_fadt(const uint8_t *f) {
    uint32_t len = rd32(f + 4);
    info.pm1a_cnt = (uint16_t)rd32(f + 64);
    info.pm1b_cnt = (uint16_t)rd32(f + 68);
    if (!info.pm1a_cnt && len >= 184 && f[172] == 1) {   // X_PM1a_CNT_BLK in I/O space
        info.pm1a_cnt = (uint16_t)rd64(f + 176);
    }
    if (len >= 129 && (rd32(f + 112) & (1u << 10))) {    // RESET_REG_SUP
        info.reset_space = f[116];
        info.reset_addr = rd64(f + 120);
        info.reset_value = f[128];
        info.have_reset = true;
    }
    uint64_t dsdt = len >= 148 ? rd64(f + 140) : 0;
    if (!dsdt) {
        dsdt = rd32(f + 40);
    }
    const uint8_t *d = table_at(dsdt);
    if (d) {
        parse_s5(d);
    }
}

static void parse_madt(const uint8_t *m) {
    uint32_t len = rd32(m + 4);
    info.lapic_addr = rd32(m + 36);
    for (uint32_t off = 44; off + 2 <= len;) {
        const uint8_t *e = m + off;
        if (e[1] < 2 || off + e[1] > len) {
            break;
        }
        if (e[0] == 1 && e[1] >= 12 && !info.ioapic_addr) {          // I/O APIC
            info.ioapic_addr = rd32(e + 4);
            info.ioapic_gsi_base = rd32(e + 8);
        } else if (e[0] == 2 && e[1] >= 10 && e[2] == 0 && e[3] == ISA_IRQ_COM1) {
            info.com1_gsi = rd32(e + 4);                              // source override
            info.com1_flags = rd16(e + 8);
        } else if (e[0] == 5 && e[1] >= 12) {                         // LAPIC address override
            info.lapic_addr = rd64(e + 4);
        }
        off += e[1];
    }
}

void acpi_init(uint64_t rsdp_pa) {
    const uint8_t *rsdp = (const uint8_t *)(uintptr_t)rsdp_pa;
    if (!rsdp_pa || memcmp(rsdp, "RSD PTR ", 8) != 0 || !checksum_ok(rsdp, 20)) {
        kprintf("kernel: acpi: no valid RSDP at 0x%lx; no power-off, IRQ defaults\n",
                rsdp_pa);
        return;
    }
    const uint8_t *root = NULL;
    unsigned entry_size = 4;
    if (rsdp[15] >= 2 && rd64(rsdp + 24)) {
        root = table_at(rd64(rsdp + 24));
        entry_size = 8;
    }
    if (!root) {
        root = table_at(rd32(rsdp + 16));
        entry_size = 4;
    }
    if (!root) {
        kprintf("kernel: acpi: no readable XSDT or RSDT\n");
        return;
    }
    uint32_t len = rd32(root + 4);
    for (uint32_t off = SDT_HEADER_LEN; off + entry_size <= len; off += entry_size) {
        uint64_t pa = entry_size == 8 ? rd64(root + off) : rd32(root + off);
        const uint8_t *t = table_at(pa);
        if (!t) {
            continue;
        }
        if (memcmp(t, "FACP", 4) == 0) {
            parse_fadt(t);
        } else if (memcmp(t, "APIC", 4) == 0) {
            parse_madt(t);
        }
    }
}

const struct acpi_info *acpi_get(void) {
    return &info;
}
