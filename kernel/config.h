// SPDX-License-Identifier: MIT
// Every kernel tunable in one place: stack sizes, timer rate, console ring, the
// executable arena and the exit codes a stopped kernel reports to QEMU.
#ifndef LOCIOS_KERNEL_CONFIG_H
#define LOCIOS_KERNEL_CONFIG_H

#define KPAGE_SIZE 4096ULL
#define KPAGE_2M   (2ULL << 20)

// Where the kernel is linked (kernel/linker.ld says the same number): the top 2 GiB of
// the address space, as -mcmodel=kernel requires. Its physical place is wherever the
// loader found room (bootinfo.kernel_phys_start); the kernel never assumes one.
#define KERNEL_VIRT_BASE 0xffffffff80000000ULL

// Stacks. Each has one unmapped 4 KiB guard page directly below it.
#define KBOOT_STACK_SIZE (64 * 1024)    // kmain's stack until the switch to the main one
#define KIST_STACK_SIZE  (16 * 1024)    // #DF, NMI and #MC each get their own
#define KMAIN_STACK_SIZE (1024 * 1024)  // the stack port_main runs on

// Memory below this is never handed out (real-mode leftovers, page 0).
#define KFRAME_LOW_LIMIT 0x100000ULL

// Always identity-map at least this much (MMIO for LAPIC, IOAPIC, framebuffer).
#define KIDENTITY_MIN (4ULL << 30)

// Executable arena for native code: size, and the virtual base of its RX alias (the
// frames' identity mapping is the RW+NX alias). 512 GiB: above any identity-mapped RAM
// we expect, inside one PML4 slot of its own.
#define KEXEC_ARENA_SIZE (4ULL << 20)
#define KEXEC_RX_BASE    0x0000008000000000ULL
#define KEXEC_ALIGN      16

// Timer and TSC calibration.
#define KTIMER_HZ           1000  // at boot; kernel.set_tick_hz() changes it
#define KTIMER_HZ_MIN       10
#define KTIMER_HZ_MAX       10000
#define KTSC_CALIBRATE_MS   10  // one window of a timer reference for the TSC
#define KLAPIC_CALIBRATE_MS 10  // TSC window for the LAPIC timer

// Serial console.
#define KCON_COM1_PORT    0x3f8
#define KCON_BAUD_DIVISOR 1     // 115200 = 1.8432 MHz / 16 / 1
#define KCON_RX_RING_SIZE 4096  // power of two
#define KCON_MAX_OUTPUTS  4     // console output ends (serial, screen, ...)
#define KCON_MAX_POLLS    8     // polled devices the timer tick serves

// Screen console (kernel/dev/fbcon.c): the font is the largest that still gives
// KFBCON_MIN_COLS columns; a draw starts at most every KFBCON_REDRAW_MS and no sooner than
// KFBCON_DRAW_SHARE times the last draw's length after it; the tick draws at most
// KFBCON_TICK_PIXELS pixels at a time (interrupts are off there).
#define KFBCON_MIN_COLS      160
#define KFBCON_MIN_GRID_COLS 20  // a framebuffer with fewer cells is not used
#define KFBCON_MIN_GRID_ROWS 5
#define KFBCON_REDRAW_MS     20
#define KFBCON_DRAW_SHARE    4
#define KFBCON_TICK_PIXELS   (256 * 1024)
#define KFBCON_EARLY_BYTES   4096  // boot output kept until the screen is mapped

// Interrupt vectors.
#define KVEC_TIMER    0x20
#define KVEC_COM1     0x21
#define KVEC_KBD      0x22  // i8042 keyboard (ISA IRQ 1)
#define KVEC_PIC_BASE 0xe0  // legacy 8259 remapped here and masked
#define KVEC_SPURIOUS 0xff

// Keyboards. Every wait on a controller is bounded; one that does not answer in time is
// reported once and skipped.
#define KKBD_I8042_WAIT_MS   20    // one command/data byte to or from the i8042
#define KKBD_I8042_RESET_MS  500   // the keyboard's reset and self-test (BAT)
#define KKBD_REPEAT_DELAY_MS 500   // software key repeat of USB keyboards
#define KKBD_REPEAT_MS       33    // ~30 characters a second
#define KUSB_MAX_HC          4     // xHCI controllers driven
#define KUSB_MAX_SLOTS       32    // device slots per controller we enable
#define KUSB_MAX_DEVICES     32    // USB devices attached at once, all controllers
#define KUSB_MAX_HUB_PORTS   8     // ports of one hub we serve
#define KUSB_HANDOFF_MS      1000  // firmware gives the controller up (USBLEGSUP)
#define KUSB_HC_RESET_MS     1000  // controller halt, reset, start
#define KUSB_CMD_MS          200   // one xHCI command
#define KUSB_XFER_MS         500   // one control transfer
#define KUSB_DEBOUNCE_MS     100   // connect to reset (USB 2.0 7.1.7.3)
#define KUSB_PORT_RESET_MS   500   // a port reset ends within this
#define KUSB_RECOVERY_MS     10    // reset end to the first request (TRSTRCY)
#define KUSB_SETTLE_MS       2000  // boot waits at most this for devices present at boot
#define KMSC_XFER_MS         5000  // one bulk transfer of a USB disk (a command, its data, status)
#define KMSC_READY_MS        8000  // a USB disk becoming ready (TEST UNIT READY retried)
#define KMSC_READY_STEP_MS   100   // between those retries

// isa-debug-exit (port 0xf4, 32-bit write v -> QEMU exit status (v << 1) | 1).
#define KDEBUG_EXIT_PORT 0xf4
#define KEXIT_FAULT      0x31  // CPU exception: QEMU exits with 99
#define KEXIT_PANIC      0x32  // kpanic(): QEMU exits with 101

// kcrash(KCRASH_NULL_READ) reads this address (page 0 is never mapped).
#define KCRASH_NULL_ADDR 0x8

// Fault dump: how many stack slots to scan and how many code addresses to print.
#define KFAULT_SCAN_SLOTS 64
#define KFAULT_MAX_FRAMES 8

#endif
