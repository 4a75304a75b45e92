// SPDX-License-Identifier: MIT
// The kernel's one public interface. port/ (the MicroPython port) includes only this
// header; everything else in kernel/ is private to it.
#ifndef LOCIOS_KERNEL_KAPI_H
#define LOCIOS_KERNEL_KAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../boot/bootinfo.h"
#include "dev/blk.h"
#include "dev/pci.h"

// ---- Entry ---------------------------------------------------------------------------
// The kernel calls this once everything below works. It never returns.
void port_main(void) __attribute__((noreturn));

// ---- Console: every output end (the serial line, the screen), every input device --------
void kcon_write(const char *s, size_t len);
// Draw what the ends buffered (the screen redraws at a bounded rate; the REPL asks for
// it before it waits for input).
void kcon_flush(void);
// Next received byte, or -1 when none is waiting. Never blocks.
int kcon_read(void);
// Received bytes waiting in the ring (from any input device).
size_t kcon_pending(void);
// Receive overruns the UART reported (bytes lost before the kernel could read them).
uint64_t kcon_rx_overruns(void);
// Bytes the UART received so far, and how often the ring was full so a device had to
// keep bytes (where QEMU holds further input back: back-pressure instead of loss).
uint64_t kcon_rx_bytes(void);
uint64_t kcon_rx_ring_full(void);
// The screen console's text grid in cells; false when there is no screen console.
bool kcon_screen_size(unsigned *cols, unsigned *rows);
// Measures the screen: cycles to draw every cell, and to draw a scroll by one line (the
// grid is left showing a test pattern). False when there is no screen console.
bool kcon_screen_bench(uint64_t *full_cycles, uint64_t *scroll_cycles);
// When `c` arrives, the receive interrupt calls `on_char` (from interrupt context) and
// drops the byte instead of queueing it. c < 0 disables. Used for Ctrl-C.
void kcon_set_interrupt_char(int c, void (*on_char)(void));

// ---- Keyboards (PS/2 on the i8042, USB HID boot keyboards on xHCI) ---------------------
struct kkbd_info {
    const char *layout;     // "us", "de"
    const char *layouts;    // every layout, space-separated
    const char *ps2;        // the i8042's state: "keyboard (scancode set 1)", "no controller"...
    unsigned usb;           // USB keyboards attached
    uint64_t bytes;         // bytes the keyboards produced
    uint64_t last_key_tsc;  // TSC when the last of them went to the console
    uint64_t echo_tsc;      // TSC of the console's first output after it (the echo)
};
void kkbd_get(struct kkbd_info *out);
bool kkbd_set_layout(const char *name);  // false: no such layout

// ---- Time -----------------------------------------------------------------------------
uint64_t ktime_tsc(void);      // raw TSC
uint64_t ktime_tsc_hz(void);   // calibrated TSC frequency
uint64_t ktime_us(void);       // microseconds since kernel entry
uint64_t ktime_ms(void);       // milliseconds since kernel entry
uint64_t ktime_ticks(void);    // timer periods elapsed by the TSC, as of the last
                               // timer interrupt (monotonic)
uint32_t ktime_tick_hz(void);  // LAPIC timer rate
// Change the timer rate (KTIMER_HZ_MIN..KTIMER_HZ_MAX); false if out of range.
bool ktime_set_tick_hz(uint32_t hz);
// The timer interrupt calls fn after each tick (interrupt context, interrupts off: it
// must not allocate, block or take locks). NULL removes it. One hook at a time.
void ktime_set_tick_hook(void (*fn)(void));
uint64_t ktime_entry_tsc(void);  // TSC read by the first instruction of the kernel
// ---- Interrupts ------------------------------------------------------------------------
struct kirq_stats {
    uint64_t timer;     // LAPIC timer interrupts actually delivered
    uint64_t com1;      // serial receive interrupts
    uint64_t spurious;  // LAPIC spurious vector and 8259 ghosts: counted, dropped
    uint64_t other;     // any other device vector (the i8042 keyboard's)
};
void kirq_get_stats(struct kirq_stats *out);
void kirq_raise_spurious(void);  // take the 3 spurious vectors by `int` (for tests)
// Halt the CPU until the next interrupt (timer or console).
void kcpu_wait_for_interrupt(void);

// ---- Memory ---------------------------------------------------------------------------
struct kmem_stats {
    uint64_t ram_bytes;     // usable + reclaimable RAM the firmware reported
    uint64_t frames_total;  // 4 KiB frames the allocator manages
    uint64_t frames_free;
    uint64_t kernel_bytes;      // loaded kernel image
    uint64_t heap_bytes;        // GC heap handed to the port (0 before kmem_take_heap)
    uint64_t exec_bytes_total;  // executable arena for native code
    uint64_t exec_bytes_used;
};
void kmem_get_stats(struct kmem_stats *out);

// Take one contiguous RW, non-executable region for the GC heap: `percent` of the
// free frames, clamped to [floor, ceiling] bytes. Returns NULL (and *size = 0) if
// not even `floor` bytes are available. Called once per boot.
void *kmem_take_heap(size_t floor, size_t ceiling, unsigned percent, size_t *size);

// Executable arena for emitted machine code (W^X: it is written through a separate
// writable alias and executed through a read+execute mapping). Copies `len` bytes
// of `code` into the arena and returns the executable address, or NULL when full.
void *kexec_commit(const void *code, size_t len);
// The executable address the next kexec_commit of `len` bytes will return, or NULL if
// it would not fit: code that must be relocated for its final address (native code
// loaded from .mpy files) is patched for this address first, then committed.
void *kexec_next(size_t len);
// Forget every committed block (soft reset: no old code object survives it).
void kexec_reset(void);

// Device registers (a PCI BAR, an MMIO UART) at their physical address, uncached,
// wherever they are (a 64-bit BAR may lie far above RAM and the identity map); returns
// the address to use. Call it before touching registers outside the low 4 GiB.
void *kmem_map_device(uint64_t phys, uint64_t size);

// The stack the port runs on: [limit, top). A guard page sits below `limit`.
void kstack_bounds(uintptr_t *limit, uintptr_t *top);

// ---- Recoverable faults -----------------------------------------------------------------
// A CPU exception the kernel survived instead of stopping: vector (14 #PF, 13 #GP, ...),
// the CPU's error code, the faulting address (CR2 for #PF; the requested address for a
// checked access) and the faulting instruction.
struct kfault {
    uint32_t vector;
    uint64_t error;
    uint64_t addr;
    uint64_t rip;
};
// Read or write `width` (1, 2, 4 or 8) bytes at `addr` with one access. A fault (page
// not present, write to read-only memory such as kernel text, non-canonical address)
// returns false and fills *fault (if non-NULL) instead of stopping the machine.
bool kmem_read_checked(uintptr_t addr, unsigned width, uint64_t *value, struct kfault *fault);
bool kmem_write_checked(uintptr_t addr, unsigned width, uint64_t value, struct kfault *fault);
// When code in the executable arena (native/viper functions) raises a CPU exception, the
// kernel resumes in `handler(fault)` on the same stack, as if the faulting instruction
// had called it; the handler must not return (the port raises a Python exception).
// NULL: such faults stop the machine with the dump like any other.
void kfault_set_exec_handler(void (*handler)(const struct kfault *fault));
// Faults recovered either way since boot.
uint64_t kfault_recovered(void);
// Fault on purpose inside the kernel's own C (tests of the fault dump): never returns,
// the machine stops with the register dump and backtrace.
enum kcrash_kind {
    KCRASH_NULL_READ,
    KCRASH_INVALID_OPCODE,
    KCRASH_STACK_OVERFLOW
};
void kcrash(enum kcrash_kind kind) __attribute__((noreturn));

// ---- Boot information -----------------------------------------------------------------
// The kernel's own copy of what the loader handed over (valid for the whole boot).
const struct bootinfo *kboot_info(void);

// ---- Machine --------------------------------------------------------------------------
// What the kernel found at boot and chose to use.
struct kmachine_info {
    uint64_t kernel_virt;        // where the kernel is linked and runs
    uint64_t kernel_phys_start;  // where the loader placed it
    uint64_t kernel_phys_end;
    const char *cpu_brand;  // CPUID brand string, "" when none
    bool qemu;              // QEMU detected (hypervisor bit and fw_cfg)
    bool nx;                // the CPU has NX: data pages are not executable
    bool x2apic;            // the local APIC runs in x2APIC mode
    bool x2apic_by_loader;  // ...because boot option loader_x2apic=1 asked
    bool acpi_hw_reduced;
    const char *tsc_reference;  // "hpet", "pm-timer", "pit" or "cpuid"
    const char *tsc_checks;     // what the other references said
    const char *serial;         // the serial console in use, or "none"
};
void kmachine_get(struct kmachine_info *out);

uint8_t kio_in8(uint16_t port);
uint16_t kio_in16(uint16_t port);
uint32_t kio_in32(uint16_t port);
void kio_out8(uint16_t port, uint8_t v);
void kio_out16(uint16_t port, uint16_t v);
void kio_out32(uint16_t port, uint32_t v);

// ACPI S5 power-off; under QEMU it ends the emulator with status 0.
void kpower_off(void) __attribute__((noreturn));
// Reset the machine (keyboard controller, then triple fault as a last resort).
void kpower_reset(void) __attribute__((noreturn));
// Print a message and stop the machine cleanly (never returns).
void kpanic(const char *msg) __attribute__((noreturn));

#endif
