// SPDX-License-Identifier: MIT
// Private declarations shared between the kernel's own files (port/ never sees them).
#ifndef LOCIOS_KERNEL_KERNEL_H
#define LOCIOS_KERNEL_KERNEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kapi.h"

// Linker script symbols: the image's sections, page aligned.
extern char __kernel_start[], __text_start[], __text_end[], __rodata_start[], __rodata_end[],
    __data_start[], __bss_end[], __ksymtab_start[], __ksymtab_end[], __kernel_end[];

// Boot stack (entry.S): [kboot_stack_bottom, kboot_stack_top), guard page below.
extern char kboot_stack_guard[], kboot_stack_bottom[], kboot_stack_top[];

// klib.c
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

// kprint.c: formatted output to the serial console (%s %c %d %u %x %p, width, 0, l).
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kvprintf(const char *fmt, va_list ap);
// The same into buf (NUL-terminated, truncated); returns the characters written.
size_t kvsnprintf(char *buf, size_t cap, const char *fmt, va_list ap);
size_t ksnprintf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// console.c: the console mux (kapi.h has its reading side). Input devices hand every
// byte to kcon_input, from interrupt or tick context with interrupts off; one that must
// keep a byte when the ring is full asks kcon_input_room first (back-pressure).
// Output ends register with kcon_add_output; kcon_write reaches all of them.
struct kcon_output {
    const char *name;
    void (*write)(const char *s, size_t len);
    void (*flush)(void);  // NULL if it never buffers
};
void kcon_input(uint8_t b);
bool kcon_input_room(void);
void kcon_add_output(const struct kcon_output *out);
unsigned kcon_outputs(const struct kcon_output *const **out);
// Polled devices: fn runs at every timer tick (interrupts off: no allocation, no waits).
void kdev_add_poll(void (*fn)(void));
void kdev_poll_all(void);  // the tick calls it

// uart.c
extern const struct kcon_output uart_console;
void uart_init(void);  // COM1, if it answers
struct acpi_info;
bool uart_use_spcr(const struct acpi_info *a);  // switch to the SPCR's UART if it answers
bool uart_present(void);
const char *uart_where(void);  // "COM1 (port 0x3f8)", "SPCR UART (...)", "none"
void uart_putc(char c);
void uart_drain_rx(void);  // move waiting bytes into the ring (ISR context)
void uart_enable_rx_irq(void);

// cpu_features.c: what CPUID says, read once (cpu_probe) before anything depends on it.
enum cpu_feature {
    CPU_NX,
    CPU_PAT,
    CPU_APIC,
    CPU_X2APIC,
    CPU_SSE2,
    CPU_INVARIANT_TSC,
    CPU_HYPERVISOR,
    CPU_FEATURE_COUNT
};
void cpu_probe(void);
bool cpu_has(enum cpu_feature f);
const char *cpu_feature_name(enum cpu_feature f);
// CPUID 0x15/0x16: the TSC frequency the CPU states, or 0 when it states none.
uint64_t cpu_stated_tsc_hz(void);
// The processor brand string (CPUID 0x80000002..4), or "" when there is none.
const char *cpu_brand(void);
// True when running under QEMU (hypervisor bit set and QEMU's fw_cfg answers).
bool cpu_is_qemu(void);

// cpu.c: SSE, GDT/TSS with IST stacks, IDT.
void cpu_enable_sse(void);
void cpu_init_gdt(void);
void cpu_init_idt(void);
struct cpu_stack {
    const char *name;
    uintptr_t guard, bottom, top;
};
size_t cpu_ist_stacks(const struct cpu_stack **out);

// interrupt.c: the common path every vector goes through (isr.S calls it).
struct int_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;
};
typedef void (*irq_handler)(struct int_frame *f);
void irq_set_handler(unsigned vector, irq_handler h);
void isr_dispatch(struct int_frame *f);
extern char isr_stubs[];
#define ISR_STUB_SIZE 16

// fault.c
void fault_report(struct int_frame *f) __attribute__((noreturn));
void kstop(uint32_t exit_code) __attribute__((noreturn));

// ksym.c: symbol lookup in .ksymtab; false when addr is in no known function.
bool ksym_lookup(uintptr_t addr, const char **name, uintptr_t *offset);

// frame setup and paging (mm_init.c, paging.c)
void mm_init_early(const struct bootinfo *bi);  // frame allocator over usable RAM
void mm_reclaim(const struct bootinfo *bi);     // add loader/boot-services memory
void paging_init(const struct bootinfo *bi);    // build and switch to own tables
void paging_map_4k(uintptr_t va, uint64_t pa, uint64_t flags);
void paging_unmap_4k(uintptr_t va);
void paging_add_guard(uintptr_t va, const char *what);
const char *paging_guard_name(uintptr_t va);  // which stack's guard, or NULL
uint64_t paging_mapped_bytes(void);
uint64_t mm_alloc_frames(uint64_t count);  // physical address, 0 on failure
uint64_t mm_take_largest(uint64_t max_frames, uint64_t *got_frames);
uint64_t mm_largest_run_frames(void);
void mm_frame_counts(uint64_t *total, uint64_t *free);
uint64_t paging_nx_flag(void);                             // PTE_NX, or 0 on a CPU without NX
uint64_t kvirt_to_phys(uintptr_t va);                      // kernel image or identity address
void paging_make_executable(uint64_t base, uint64_t len);  // identity pages, drop NX

// efi_runtime.c: UEFI ResetSystem; returns only if the firmware did nothing.
enum efi_reset_type {
    EFI_RESET_COLD = 0,
    EFI_RESET_WARM = 1,
    EFI_RESET_SHUTDOWN = 2
};
void efi_reset_system(enum efi_reset_type type);
#define PTE_P   (1ULL << 0)
#define PTE_W   (1ULL << 1)
#define PTE_PCD (1ULL << 4)
#define PTE_PS  (1ULL << 7)
#define PTE_G   (1ULL << 8)
#define PTE_NX  (1ULL << 63)

// kmem.c
void kmem_init(const struct bootinfo *bi);  // main stack and exec arena
bool kstack_contains(uintptr_t addr, uintptr_t *top);
bool kexec_contains(uintptr_t addr);  // in the arena's executable alias

// probe.c: resume after a recoverable fault; false means report and stop.
bool kfault_recover(struct int_frame *f);

// acpi.c
// An ACPI Generic Address Structure reduced to what the kernel uses.
struct acpi_gas {
    uint8_t space;  // ACPI_SPACE_MEMORY or ACPI_SPACE_IO
    uint8_t bit_width;
    uint64_t addr;  // 0: absent
};
#define ACPI_SPACE_MEMORY 0
#define ACPI_SPACE_IO     1
struct acpi_info {
    uint64_t lapic_addr;
    uint64_t ioapic_addr;
    uint32_t ioapic_gsi_base;
    uint32_t com1_gsi;    // GSI of ISA IRQ 4 after source overrides
    uint16_t com1_flags;  // MPS INTI flags of that override (0 = ISA default)
    uint32_t kbd_gsi;     // the same for ISA IRQ 1 (the i8042's keyboard)
    uint16_t kbd_flags;
    uint16_t pm1a_cnt, pm1b_cnt;
    uint16_t slp_typa, slp_typb;
    bool have_s5;
    bool hw_reduced;             // FADT HW_REDUCED_ACPI: no PM1 blocks, sleep registers
    struct acpi_gas sleep_ctrl;  // hardware-reduced ACPI's sleep control register
    uint16_t smi_cmd;            // port and value that switch the platform to ACPI mode
    uint8_t acpi_enable;
    uint16_t pm_tmr_port;  // ACPI PM timer (3.579545 MHz), 0 when absent
    bool pm_tmr_32bit;     // 32-bit counter (else 24-bit)
    uint64_t hpet_addr;    // HPET registers, 0 when there is no HPET table
    uint8_t reset_space;   // FADT RESET_REG address space (1 = I/O)
    uint64_t reset_addr;
    uint8_t reset_value;
    bool have_reset;
    // SPCR: the firmware's console UART, when the table exists and names a 16550.
    bool have_spcr;
    struct acpi_gas spcr_uart;
    uint8_t spcr_type;  // SPCR interface type
    uint8_t spcr_baud;  // SPCR baud code: 0 = as configured, 7 = 115200
    uint32_t spcr_gsi;  // 0xffffffff when it has no I/O APIC interrupt
};
void acpi_init(uint64_t rsdp);
const struct acpi_info *acpi_get(void);

// apic.c
void apic_init(void);                // mask 8259, LAPIC on, spurious vector
void apic_timer_start(uint32_t hz);  // calibrate against the TSC, periodic
void apic_route_irq(uint32_t gsi, uint16_t flags, uint8_t vector);
void apic_eoi(void);
uint32_t apic_timer_input_hz(void);
void apic_timer_set_hz(uint32_t hz);  // new period; the calibration is kept
bool apic_is_x2apic(void);            // driven through MSRs rather than MMIO

// tsc_calibrate.c: the TSC's rate against the machine's fixed-rate clocks (stops the
// machine with a message when there is none); which clock it used, and the cross-checks.
uint64_t tsc_calibrate(void);
const char *tsc_reference(void);
const char *tsc_reference_notes(void);

// time.c
void ktime_calibrate(void);
void ktime_tick(void);
void ktime_timer_started(uint32_t hz);  // the LAPIC timer now runs at hz: rebase ticks

// entry.S
void arch_switch_stack(uintptr_t top, void (*fn)(void)) __attribute__((noreturn));
extern uint64_t kentry_tsc;

#endif
