// SPDX-License-Identifier: MIT
// Stopping the machine. Power-off: ACPI S5 (PM1 control blocks, or the sleep control
// register on hardware-reduced ACPI), then UEFI ResetSystem. Reset: the ACPI reset
// register, port 0xcf9, the keyboard controller, UEFI ResetSystem, a triple fault.
// kstop (faults, panics) ends QEMU through isa-debug-exit, and only on QEMU; a real
// machine halts with the message on its consoles.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define ACPI_SLP_EN        (1u << 13)
#define ACPI_SLP_TYP_SHIFT 10
#define ACPI_SLP_TYP_MASK  (7u << ACPI_SLP_TYP_SHIFT)
#define ACPI_SCI_EN        (1u << 0)
#define HWR_SLP_EN         (1u << 5)  // sleep control register (ACPI 6, 4.8.3.7)
#define HWR_SLP_TYP_SHIFT  2
#define PCI_RESET_PORT     0xcf9
#define KBC_STATUS_PORT    0x64
#define KBC_CMD_RESET      0xfe
#define WAIT_MS            500   // the emulator or chipset acts asynchronously
#define ACPI_ENABLE_MS     3000  // how long the firmware may take to enter ACPI mode

static void __attribute__((noreturn)) halt_forever(void) {
    for (;;) {
        arch_cli_halt();
    }
}

// A busy wait that works before and after calibration (0 Hz: a fixed spin).
static void wait_ms(uint64_t ms) {
    uint64_t hz = ktime_tsc_hz();
    uint64_t t0 = arch_rdtsc(), n = hz ? hz / 1000 * ms : ms * 1000000;
    while (arch_rdtsc() - t0 < n) {
        arch_pause();
    }
}

static void gas_write8(const struct acpi_gas *g, uint8_t v) {
    if (g->space == ACPI_SPACE_IO) {
        arch_out8((uint16_t)g->addr, v);
    } else if (g->space == ACPI_SPACE_MEMORY) {
        *(volatile uint8_t *)(uintptr_t)g->addr = v;
    }
}

// Legacy platforms may still be in SMM-owned mode; the sleep registers want ACPI mode.
static void acpi_mode_on(const struct acpi_info *a) {
    if ((arch_in16(a->pm1a_cnt) & ACPI_SCI_EN) || !a->smi_cmd || !a->acpi_enable) {
        return;
    }
    arch_out8(a->smi_cmd, a->acpi_enable);
    uint64_t hz = ktime_tsc_hz(), t0 = arch_rdtsc();
    while (!(arch_in16(a->pm1a_cnt) & ACPI_SCI_EN) &&
           arch_rdtsc() - t0 < hz / 1000 * ACPI_ENABLE_MS) {
        arch_pause();
    }
}

// Read-modify-write: the other bits of PM1_CNT (SCI_EN above all) keep their values.
static void pm1_sleep(uint16_t port, uint16_t typ) {
    uint16_t v = arch_in16(port);
    v = (uint16_t)((v & ~(ACPI_SLP_TYP_MASK | ACPI_SLP_EN)) | (typ << ACPI_SLP_TYP_SHIFT));
    arch_out16(port, v);
    arch_out16(port, v | ACPI_SLP_EN);
}

// Returns (only) when S5 did not take effect; *why says what was missing.
static void acpi_s5(const char **why) {
    const struct acpi_info *a = acpi_get();
    if (!a->have_s5) {
        *why = "no \\_S5 package in the DSDT or an SSDT";
        return;
    }
    if (a->hw_reduced) {
        if (!a->sleep_ctrl.addr) {
            *why = "hardware-reduced ACPI without a sleep control register";
            return;
        }
        gas_write8(&a->sleep_ctrl, (uint8_t)((a->slp_typa & 7) << HWR_SLP_TYP_SHIFT | HWR_SLP_EN));
    } else {
        if (!a->pm1a_cnt) {
            *why = "no PM1a control block in the FADT";
            return;
        }
        acpi_mode_on(a);
        pm1_sleep(a->pm1a_cnt, a->slp_typa);
        if (a->pm1b_cnt) {
            pm1_sleep(a->pm1b_cnt, a->slp_typb);
        }
    }
    wait_ms(WAIT_MS);
    *why = "the sleep register write was ignored";
}

void kstop(uint32_t exit_code) {
    arch_cli();
    if (cpu_is_qemu()) {
        arch_out32(KDEBUG_EXIT_PORT, exit_code);  // with isa-debug-exit: QEMU is gone
    }
    kprintf("kernel: stopped; the message above says why. Switch the machine off or "
            "reset it.\n");
    kcon_flush();
    halt_forever();
}

void kpower_off(void) {
    arch_cli();
    const char *why = "";
    acpi_s5(&why);
    kprintf("kernel: ACPI S5 power-off did not take effect (%s); trying UEFI "
            "ResetSystem\n",
            why);
    efi_reset_system(EFI_RESET_SHUTDOWN);
    kprintf("kernel: UEFI ResetSystem did not power off either; halted. Use the power "
            "button.\n");
    kcon_flush();
    halt_forever();
}

void kpower_reset(void) {
    arch_cli();
    const struct acpi_info *a = acpi_get();
    if (a->have_reset) {
        struct acpi_gas g = { a->reset_space, 8, a->reset_addr };
        gas_write8(&g, a->reset_value);
        wait_ms(WAIT_MS);
    }
    arch_out8(PCI_RESET_PORT, 0x02);  // select hard reset, then trigger it
    arch_out8(PCI_RESET_PORT, 0x06);
    wait_ms(WAIT_MS);
    for (int i = 0; i < 100000 && (arch_in8(KBC_STATUS_PORT) & 0x02); i++) {
        arch_pause();
    }
    arch_out8(KBC_STATUS_PORT, KBC_CMD_RESET);
    wait_ms(WAIT_MS);
    efi_reset_system(EFI_RESET_COLD);
    // Last resort: an empty IDT turns the next exception into a triple fault.
    arch_triple_fault();
    halt_forever();
}
