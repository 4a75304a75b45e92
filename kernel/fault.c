// SPDX-License-Identifier: MIT
// CPU exception report: name, error code, registers, RIP as symbol+offset and the code
// addresses found on the stack, to the serial console; then the machine stops. A
// fault during the report prints one line; a third stops without printing.
#include "arch.h"
#include "config.h"
#include "kernel.h"

static const char *const exception_names[32] = {
    "#DE divide error",
    "#DB debug",
    "NMI",
    "#BP breakpoint",
    "#OF overflow",
    "#BR bound range",
    "#UD invalid opcode",
    "#NM device not available",
    "#DF double fault",
    "coprocessor segment overrun",
    "#TS invalid TSS",
    "#NP segment not present",
    "#SS stack fault",
    "#GP general protection",
    "#PF page fault",
    "reserved 15",
    "#MF x87 floating point",
    "#AC alignment check",
    "#MC machine check",
    "#XM SIMD floating point",
    "#VE virtualization",
    "#CP control protection",
    "reserved 22",
    "reserved 23",
    "reserved 24",
    "reserved 25",
    "reserved 26",
    "reserved 27",
    "#HV hypervisor injection",
    "#VC VMM communication",
    "#SX security",
    "reserved 31",
};

static volatile int fault_depth;

static void print_addr(uintptr_t a) {
    const char *name;
    uintptr_t off;
    kprintf("0x%016lx", (uint64_t)a);
    if (ksym_lookup(a, &name, &off)) {
        kprintf(" <%s+0x%lx>", name, (uint64_t)off);
    }
}

static bool in_text(uint64_t a) {
    return a >= (uintptr_t)__text_start && a < (uintptr_t)__text_end;
}

// The stack the faulting code ran on, if it is one we know the bounds of.
static bool known_stack(uintptr_t sp, uintptr_t *top) {
    if (sp >= (uintptr_t)kboot_stack_bottom && sp < (uintptr_t)kboot_stack_top) {
        *top = (uintptr_t)kboot_stack_top;
        return true;
    }
    if (kstack_contains(sp, top)) {
        return true;
    }
    const struct cpu_stack *s;
    size_t n = cpu_ist_stacks(&s);
    for (size_t i = 0; i < n; i++) {
        if (sp >= s[i].bottom && sp < s[i].top) {
            *top = s[i].top;
            return true;
        }
    }
    return false;
}

static void print_stack_scan(uint64_t sp) {
    uintptr_t top;
    if (!known_stack(sp, &top)) {
        kprintf("stack: RSP is outside every known stack, not scanned\n");
        return;
    }
    kprintf("code addresses on the stack (newest first; may include stale ones):\n");
    const uint64_t *p = (const uint64_t *)(sp & ~7ULL);
    int printed = 0;
    for (int i = 0; i < KFAULT_SCAN_SLOTS && (uintptr_t)(p + 1) <= top; i++, p++) {
        if (in_text(*p)) {
            kprintf("  [rsp+0x%03lx] ", (uint64_t)((uintptr_t)p - sp));
            print_addr(*p);
            kprintf("\n");
            if (++printed == KFAULT_MAX_FRAMES) {
                break;
            }
        }
    }
    if (!printed) {
        kprintf("  (none in the first %d slots)\n", KFAULT_SCAN_SLOTS);
    }
}

static void print_page_fault(uint64_t err, uint64_t cr2) {
    kprintf("page fault: %s %s at 0x%lx%s%s%s\n",
            err & 1 ? "protection violation on" : "not-present page on",
            err & 16  ? "instruction fetch"
            : err & 2 ? "write"
                      : "read",
            cr2, err & 4 ? " (user)" : "", err & 8 ? " (reserved bit set)" : "",
            cr2 < KPAGE_SIZE ? " -- NULL pointer dereference" : "");
    const char *guard = paging_guard_name(cr2);
    if (guard) {
        kprintf("page fault: address is the guard page below the %s: stack overflow\n", guard);
    }
}

void fault_report(struct int_frame *f) {
    arch_cli();
    int depth = __atomic_add_fetch(&fault_depth, 1, __ATOMIC_SEQ_CST);
    if (depth == 2) {
        kprintf("\n*** fault (vector %lu) at 0x%lx while reporting a fault; stopping\n", f->vector,
                f->rip);
    }
    if (depth > 1) {
        kstop(KEXIT_FAULT);
    }
    uint64_t cr2 = arch_read_cr2(), cr3 = arch_read_cr3();
    kprintf("\n*** KERNEL FAULT: %s (vector %lu), error code 0x%lx\n",
            exception_names[f->vector & 31], f->vector, f->error);
    kprintf("RIP ");
    print_addr(f->rip);
    kprintf("\n");
    kprintf("RSP 0x%016lx  RFLAGS 0x%08lx  CS 0x%04lx  SS 0x%04lx\n", f->rsp, f->rflags, f->cs,
            f->ss);
    kprintf("CR2 0x%016lx  CR3 0x%016lx  CR0 0x%lx  CR4 0x%lx\n", cr2, cr3, arch_read_cr0(),
            arch_read_cr4());
    kprintf("RAX %016lx RBX %016lx RCX %016lx RDX %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
    kprintf("RSI %016lx RDI %016lx RBP %016lx R8  %016lx\n", f->rsi, f->rdi, f->rbp, f->r8);
    kprintf("R9  %016lx R10 %016lx R11 %016lx R12 %016lx\n", f->r9, f->r10, f->r11, f->r12);
    kprintf("R13 %016lx R14 %016lx R15 %016lx\n", f->r13, f->r14, f->r15);
    if (f->vector == 14) {
        print_page_fault(f->error, cr2);
    } else if (f->vector == 8 && (paging_guard_name(cr2) || paging_guard_name(f->rsp))) {
        kprintf("double fault: RSP/CR2 in the guard page below the %s: stack overflow\n",
                paging_guard_name(cr2) ? paging_guard_name(cr2) : paging_guard_name(f->rsp));
    }
    print_stack_scan(f->rsp);
    kprintf("uptime %lu ms, stopping (isa-debug-exit 0x%x: QEMU exits with status %u)\n",
            ktime_ms(), KEXIT_FAULT, (KEXIT_FAULT << 1) | 1);
    kstop(KEXIT_FAULT);
}

void kpanic(const char *msg) {
    arch_cli();
    int depth = __atomic_add_fetch(&fault_depth, 1, __ATOMIC_SEQ_CST);
    if (depth == 1) {
        kprintf("\n*** KERNEL PANIC: %s\ncalled from ", msg ? msg : "(no message)");
        print_addr((uintptr_t)__builtin_return_address(0));
        kprintf("\nuptime %lu ms, stopping (isa-debug-exit 0x%x: QEMU exits with status %u)\n",
                ktime_ms(), KEXIT_PANIC, (KEXIT_PANIC << 1) | 1);
    }
    kstop(KEXIT_PANIC);
}
