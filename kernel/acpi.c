// SPDX-License-Identifier: MIT
// The little of ACPI the kernel needs: RSDP -> XSDT/RSDT -> FADT (PM1 control blocks or
// hardware-reduced sleep registers, PM timer, reset register, \_S5 sleep types from the
// DSDT or an SSDT), MADT (LAPIC, IOAPIC, IRQ overrides), HPET and SPCR.
#include "arch.h"
#include "kernel.h"

#define SDT_HEADER_LEN 36
#define AML_NAME_OP    0x08
#define AML_PACKAGE_OP 0x12
#define ISA_IRQ_COM1   4
#define ISA_IRQ_KBD    1

// FADT field offsets (ACPI 6.x, table 5.9) and flags.
#define FADT_DSDT          40
#define FADT_SMI_CMD       48
#define FADT_ACPI_ENABLE   52
#define FADT_PM1A_CNT      64
#define FADT_PM1B_CNT      68
#define FADT_PM_TMR        76
#define FADT_FLAGS         112
#define FADT_RESET_REG     116
#define FADT_RESET_VALUE   128
#define FADT_X_DSDT        140
#define FADT_X_PM1A_CNT    172
#define FADT_X_PM_TMR      208
#define FADT_SLEEP_CTRL    244
#define FLAG_TMR_VAL_EXT   (1u << 8)
#define FLAG_RESET_REG_SUP (1u << 10)
#define FLAG_HW_REDUCED    (1u << 20)
#define GAS_LEN            12

// SPCR (Microsoft's Serial Port Console Redirection table, revision 2+).
#define SPCR_TYPE       36
#define SPCR_BASE       40
#define SPCR_INT_TYPE   52
#define SPCR_GSI        54
#define SPCR_BAUD       58
#define SPCR_INT_IOAPIC (1u << 1)
#define SPCR_16550      0x00
#define SPCR_16450      0x01
#define SPCR_16550_GAS  0x12

static struct acpi_info info = { .com1_gsi = ISA_IRQ_COM1, .kbd_gsi = ISA_IRQ_KBD };

static uint16_t rd16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t rd64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

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
        kprintf("kernel: acpi: table %c%c%c%c at 0x%lx has a bad checksum, ignored\n", t[0], t[1],
                t[2], t[3], pa);
        return NULL;
    }
    return t;
}

// An AML integer constant; returns bytes consumed, 0 if it is none.
static int aml_int(const uint8_t *p, uint16_t *out) {
    switch (p[0]) {
        case 0x00:
            *out = 0;
            return 1;  // ZeroOp
        case 0x01:
            *out = 1;
            return 1;  // OneOp
        case 0x0a:
            *out = p[1];
            return 2;  // BytePrefix
        case 0x0b:
            *out = rd16(p + 1);
            return 3;  // WordPrefix
        case 0x0c:
            *out = (uint16_t)rd32(p + 1);
            return 5;
        default:
            return 0;
    }
}

static void read_gas(const uint8_t *p, struct acpi_gas *g) {
    g->space = p[0];
    g->bit_width = p[1];
    g->addr = rd64(p + 4);
}

// \_S5 is a Name holding a Package whose first two elements are SLP_TYPa and SLP_TYPb.
// Found by pattern in the AML, as a name definition in any definition block: no
// interpreter runs (power-off needs no method here).
static void parse_s5(const uint8_t *dsdt) {
    if (info.have_s5) {
        return;
    }
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
        p += 1 + (p[0] >> 6);  // PkgLength: lead byte plus 0..3 more
        p += 1;                // NumElements
        int n = aml_int(p, &info.slp_typa);
        if (n && aml_int(p + n, &info.slp_typb)) {
            info.have_s5 = true;
        }
        return;
    }
}

static void parse_fadt(const uint8_t *f) {
    uint32_t len = rd32(f + 4);
    uint32_t flags = len >= FADT_FLAGS + 4 ? rd32(f + FADT_FLAGS) : 0;
    info.hw_reduced = flags & FLAG_HW_REDUCED;
    info.smi_cmd = (uint16_t)rd32(f + FADT_SMI_CMD);
    info.acpi_enable = f[FADT_ACPI_ENABLE];
    info.pm1a_cnt = (uint16_t)rd32(f + FADT_PM1A_CNT);
    info.pm1b_cnt = (uint16_t)rd32(f + FADT_PM1B_CNT);
    if (!info.pm1a_cnt && len >= FADT_X_PM1A_CNT + GAS_LEN && f[FADT_X_PM1A_CNT] == ACPI_SPACE_IO) {
        info.pm1a_cnt = (uint16_t)rd64(f + FADT_X_PM1A_CNT + 4);
    }
    info.pm_tmr_port = (uint16_t)rd32(f + FADT_PM_TMR);
    if (!info.pm_tmr_port && len >= FADT_X_PM_TMR + GAS_LEN && f[FADT_X_PM_TMR] == ACPI_SPACE_IO) {
        info.pm_tmr_port = (uint16_t)rd64(f + FADT_X_PM_TMR + 4);
    }
    info.pm_tmr_32bit = flags & FLAG_TMR_VAL_EXT;
    if (len >= FADT_SLEEP_CTRL + GAS_LEN) {
        read_gas(f + FADT_SLEEP_CTRL, &info.sleep_ctrl);
    }
    if (len > FADT_RESET_VALUE && (flags & FLAG_RESET_REG_SUP)) {
        info.reset_space = f[FADT_RESET_REG];
        info.reset_addr = rd64(f + FADT_RESET_REG + 4);
        info.reset_value = f[FADT_RESET_VALUE];
        info.have_reset = true;
    }
    uint64_t dsdt = len >= FADT_X_DSDT + 8 ? rd64(f + FADT_X_DSDT) : 0;
    if (!dsdt) {
        dsdt = rd32(f + FADT_DSDT);
    }
    const uint8_t *d = table_at(dsdt);
    if (d) {
        parse_s5(d);
    }
}

static void parse_hpet(const uint8_t *h) {
    if (rd32(h + 4) >= 44 + 8 && h[40] == ACPI_SPACE_MEMORY) {
        info.hpet_addr = rd64(h + 44);
    }
}

static void parse_spcr(const uint8_t *t) {
    if (rd32(t + 4) < SPCR_BAUD + 1) {
        return;
    }
    uint8_t type = t[SPCR_TYPE];
    if (type != SPCR_16550 && type != SPCR_16450 && type != SPCR_16550_GAS) {
        kprintf("kernel: acpi: SPCR names a console of interface type 0x%x, not a 16550; "
                "ignored\n",
                type);
        return;
    }
    read_gas(t + SPCR_BASE, &info.spcr_uart);
    if (!info.spcr_uart.addr ||
        (info.spcr_uart.space != ACPI_SPACE_IO && info.spcr_uart.space != ACPI_SPACE_MEMORY)) {
        return;
    }
    info.have_spcr = true;
    info.spcr_type = type;
    info.spcr_baud = t[SPCR_BAUD];
    info.spcr_gsi = (t[SPCR_INT_TYPE] & SPCR_INT_IOAPIC) ? rd32(t + SPCR_GSI) : 0xffffffffu;
}

static void parse_madt(const uint8_t *m) {
    uint32_t len = rd32(m + 4);
    info.lapic_addr = rd32(m + 36);
    for (uint32_t off = 44; off + 2 <= len;) {
        const uint8_t *e = m + off;
        if (e[1] < 2 || off + e[1] > len) {
            break;
        }
        if (e[0] == 1 && e[1] >= 12 && !info.ioapic_addr) {  // I/O APIC
            info.ioapic_addr = rd32(e + 4);
            info.ioapic_gsi_base = rd32(e + 8);
        } else if (e[0] == 2 && e[1] >= 10 && e[2] == 0 && e[3] == ISA_IRQ_COM1) {
            info.com1_gsi = rd32(e + 4);  // source override
            info.com1_flags = rd16(e + 8);
        } else if (e[0] == 2 && e[1] >= 10 && e[2] == 0 && e[3] == ISA_IRQ_KBD) {
            info.kbd_gsi = rd32(e + 4);
            info.kbd_flags = rd16(e + 8);
        } else if (e[0] == 5 && e[1] >= 12) {  // LAPIC address override
            info.lapic_addr = rd64(e + 4);
        }
        off += e[1];
    }
}

void acpi_init(uint64_t rsdp_pa) {
    const uint8_t *rsdp = (const uint8_t *)(uintptr_t)rsdp_pa;
    if (!rsdp_pa || memcmp(rsdp, "RSD PTR ", 8) != 0 || !checksum_ok(rsdp, 20)) {
        kprintf("kernel: acpi: no valid RSDP at 0x%lx; no power-off, IRQ defaults\n", rsdp_pa);
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
        } else if (memcmp(t, "HPET", 4) == 0) {
            parse_hpet(t);
        } else if (memcmp(t, "SPCR", 4) == 0) {
            parse_spcr(t);
        }
    }
    // \_S5 may live in an SSDT rather than the DSDT.
    for (uint32_t off = SDT_HEADER_LEN; !info.have_s5 && off + entry_size <= len;
         off += entry_size) {
        uint64_t pa = entry_size == 8 ? rd64(root + off) : rd32(root + off);
        if (pa && memcmp((const uint8_t *)(uintptr_t)pa, "SSDT", 4) == 0) {
            const uint8_t *t = table_at(pa);
            if (t) {
                parse_s5(t);
            }
        }
    }
}

const struct acpi_info *acpi_get(void) {
    return &info;
}
