// SPDX-License-Identifier: MIT
// Fault-checked memory accessors: one load or store each, listed in .kprobe_table with
// the instruction that may fault and where to resume if it does (probe.c). The fixup
// returns 0; the access itself returns 1. Leaf functions: at the fault the stack holds
// only the return address, so the fixup can simply `ret`.

    .macro kprobe_entry insn, fixup
    .pushsection .kprobe_table, "a"
    .balign 8
    .quad \insn, \fixup
    .popsection
    .endm

    .text
// int kprobe_read{8,16,32,64}(uintptr_t addr /* rdi */, uint64_t *out /* rsi */)
    .macro kprobe_read name, load
    .globl \name
    .type \name, @function
\name:
1:  \load
    movq %rax, (%rsi)
    movl $1, %eax
    ret
2:  xorl %eax, %eax
    ret
    kprobe_entry 1b, 2b
    .size \name, . - \name
    .endm

    kprobe_read kprobe_read8,  "movzbq (%rdi), %rax"
    kprobe_read kprobe_read16, "movzwq (%rdi), %rax"
    kprobe_read kprobe_read32, "movl (%rdi), %eax"
    kprobe_read kprobe_read64, "movq (%rdi), %rax"

// int kprobe_write{8,16,32,64}(uintptr_t addr /* rdi */, uint64_t value /* rsi */)
    .macro kprobe_write name, store
    .globl \name
    .type \name, @function
\name:
1:  \store
    movl $1, %eax
    ret
2:  xorl %eax, %eax
    ret
    kprobe_entry 1b, 2b
    .size \name, . - \name
    .endm

    kprobe_write kprobe_write8,  "movb %sil, (%rdi)"
    kprobe_write kprobe_write16, "movw %si, (%rdi)"
    kprobe_write kprobe_write32, "movl %esi, (%rdi)"
    kprobe_write kprobe_write64, "movq %rsi, (%rdi)"

    .section .note.GNU-stack, "", @progbits
