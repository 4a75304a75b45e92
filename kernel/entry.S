// SPDX-License-Identifier: MIT
// The first instructions of the kernel: record the entry TSC, leave the loader's stack
// for our own boot stack (guard page below it) and call kmain(bootinfo).
#include "config.h"

    .section .text.entry, "ax"
    .globl kernel_entry
    .type kernel_entry, @function
kernel_entry:
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, kentry_tsc(%rip)
    cli
    cld
    leaq kboot_stack_top(%rip), %rsp
    xorl %ebp, %ebp
    // %rdi still holds the bootinfo pointer (SysV first argument).
    call kmain
1:  cli
    hlt
    jmp 1b
    .size kernel_entry, . - kernel_entry

// arch_switch_stack(top, fn): run fn on a fresh stack; fn never returns.
    .text
    .globl arch_switch_stack
    .type arch_switch_stack, @function
arch_switch_stack:
    movq %rdi, %rsp
    xorl %ebp, %ebp
    pushq $0            // fake return address: stack walks stop here
    jmp *%rsi
    .size arch_switch_stack, . - arch_switch_stack

    .section .bss.stack, "aw", @nobits
    .balign 4096
    .globl kboot_stack_guard, kboot_stack_bottom, kboot_stack_top
kboot_stack_guard:
    .skip 4096
kboot_stack_bottom:
    .skip KBOOT_STACK_SIZE
kboot_stack_top:

    .section .note.GNU-stack, "", @progbits
