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
extern char __kernel_start[], __text_start[], __text_end[], __rodata_start[],
    __rodata_end[], __data_start[], __bss_end[], __ksymtab_start[], __ksymtab_end[],
    __kernel_end[];

// Boot stack (entry.S): [kboot_stack_bottom, kboot_stack_top), guard page below.
extern char kboot_stack_guard[], kboot_stack_bottom[], kboot_stack_top[];

// klib.c
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

// kprint.c: formatted output to the serial console (%s %c %d %u %x %p, width, 0, l).
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kvprintf(const char *fmt, va_list ap);

// uart.c
void uart_init(void);
void uart_putc(char c);
void uart_drain_rx(void);          // move waiting bytes into the ring (ISR context)
void uart_enable_rx_irq(void);

// cpu.c: SSE, GDT/TSS with IST stacks, IDT.
void cpu_enable_sse(void);
void cpu_init_gdt(void);
void cpu_init_idt(void);
struct cpu_stack { const char *name; uintptr_t guard, bottom, top; };
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
void mm_init_early(const struct bootinfo *bi);     // frame allocator over usable RAM
void mm_reclaim(const struct bootinfo *bi);        // add loader/boot-services memory
void paging_init(const struct bootinfo *bi);        // build and switch to own tables
void paging_map_4k(uintptr_t va, uint64_t pa, uint64_t flags);
void paging_unmap_4k(uintptr_t va);
void paging_add_guard(uintptr_t va, const char *what);
const char *paging_guard_name(uintptr_t va);        // which stack's guard, or NULL
uint64_t paging_mapped_bytes(void);
uint64_t mm_alloc_frames(uint64_t count);           // physical address, 0 on failure
uint64_t mm_take_largest(uint64_t max_frames, uint64_t *got_frames);
uint64_t mm_largest_run_frames(void);
void mm_frame_counts(uint64_t *total, uint64_t *free);
#define PTE_P   (1ULL << 0)
#define PTE_W   (1ULL << 1)
#define PTE_PS  (1ULL << 7)
#define PTE_G   (1ULL << 8)
#define PTE_NX  (1ULL << 63)

// kmem.c
void kmem_init(const struct bootinfo *bi);          // main stack and exec arena
bool kstack_contains(uintptr_t addr, uintptr_t *top);
bool kexec_contains(uintptr_t addr);                // in the arena's executable alias

// probe.c: resume after a recoverable fault; false means report and stop.
bool kfault_recover(struct int_frame *f);

// acpi.c
struct acpi_info {
    uint64_t lapic_addr;
    uint64_t ioapic_addr;
    uint32_t ioapic_gsi_base;
    uint32_t com1_gsi;          // GSI of ISA IRQ 4 after source overrides
    uint16_t com1_flags;        // MPS INTI flags of that override (0 = ISA default)
    uint16_t pm1a_cnt, pm1b_cnt;
    uint16_t slp_typa, slp_typb;
    bool have_s5;
    uint8_t reset_space;        // FADT RESET_REG address space (1 = I/O)
    uint64_t reset_addr;
    uint8_t reset_value;
    bool have_reset;
};
void acpi_init(uint64_t rsdp);
const struct acpi_info *acpi_get(void);

// apic.c
void apic_init(void);                  // mask 8259, LAPIC on, spurious vector
void apic_timer_start(uint32_t hz);    // calibrate against the TSC, periodic
void apic_route_irq(uint32_t gsi, uint16_t flags, uint8_t vector);
void apic_eoi(void);
uint32_t apic_timer_input_hz(void);
void apic_timer_set_hz(uint32_t hz);   // new period; the calibration is kept

// time.c
void ktime_calibrate(void);
void ktime_tick(void);
void ktime_timer_started(uint32_t hz);   // the LAPIC timer now runs at hz: rebase ticks

// entry.S
void arch_switch_stack(uintptr_t top, void (*fn)(void)) __attribute__((noreturn));
extern uint64_t kentry_tsc;

#endif
