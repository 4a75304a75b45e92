// SPDX-License-Identifier: MIT
// Stopping the machine: isa-debug-exit for QEMU, ACPI S5 power-off, reset, and the
// cli;hlt loop that ends every path that cannot do better.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define ACPI_SLP_EN        (1u << 13)
#define ACPI_SLP_TYP_SHIFT 10
#define PCI_RESET_PORT     0xcf9
#define KBC_STATUS_PORT    0x64
#define KBC_CMD_RESET      0xfe
#define POWER_OFF_WAIT_MS  500    // the emulator/chipset acts asynchronously

static void __attribute__((noreturn)) halt_forever(void) {
    for (;;) {
        arch_cli_halt();
    }
}

static void acpi_s5(void) {
    const struct acpi_info *a = acpi_get();
    if (!a->have_s5 || !a->pm1a_cnt) {
        return;
    }
    arch_out16(a->pm1a_cnt, (uint16_t)(a->slp_typa << ACPI_SLP_TYP_SHIFT | ACPI_SLP_EN));
    if (a->pm1b_cnt) {
        arch_out16(a->pm1b_cnt, (uint16_t)(a->slp_typb << ACPI_SLP_TYP_SHIFT | ACPI_SLP_EN));
    }
}

void kstop(uint32_t exit_code) {
    arch_cli();
    arch_out32(KDEBUG_EXIT_PORT, exit_code);   // under QEMU with isa-debug-exit: gone
    acpi_s5();                                  // real machine or plain QEMU: power off
    halt_forever();
}

void kpower_off(void) {
    arch_cli();
    acpi_s5();
    uint64_t t0 = arch_rdtsc(), wait = ktime_tsc_hz() / 1000 * POWER_OFF_WAIT_MS;
    while (arch_rdtsc() - t0 < wait) {
        arch_pause();
    }
    kprintf("kernel: ACPI S5 power-off did not take effect (%s); halted\n",
            acpi_get()->have_s5 ? "the write to PM1_CNT was ignored"
                                : "no FADT PM1 control block or DSDT \\_S5");
    halt_forever();
}

void kpower_reset(void) {
    arch_cli();
    const struct acpi_info *a = acpi_get();
    if (a->have_reset && a->reset_space == 1) {
        arch_out8((uint16_t)a->reset_addr, a->reset_value);
    }
    arch_out8(PCI_RESET_PORT, 0x02);   // select hard reset, then trigger it
    arch_out8(PCI_RESET_PORT, 0x06);
    for (int i = 0; i < 100000 && (arch_in8(KBC_STATUS_PORT) & 0x02); i++) {
        arch_pause();
    }
    arch_out8(KBC_STATUS_PORT, KBC_CMD_RESET);
    // Last resort: an empty IDT turns the next exception into a triple fault.
    arch_triple_fault();
    halt_forever();
}
