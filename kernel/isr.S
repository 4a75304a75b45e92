// SPDX-License-Identifier: MIT
// Interrupt and exception entry: 256 stubs of ISR_STUB_SIZE bytes that push a vector
// (and a zero where the CPU pushes no error code), then one common path that saves all
// general registers and the FPU/SSE state, so C handlers may use any register.

    .text
    .macro isr_stub v
    .balign 16
    .if (\v == 8) || (\v >= 10 && \v <= 14) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30)
    .else
    pushq $0
    .endif
    pushq $\v
    jmp isr_common
    .endm

    .globl isr_stubs
    .type isr_stubs, @function
    .balign 16
isr_stubs:
    .set vec, 0
    .rept 256
    isr_stub vec
    .set vec, vec + 1
    .endr
    .size isr_stubs, . - isr_stubs

    .type isr_common, @function
isr_common:
    cld
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rbx             // struct int_frame *, kept in a callee-saved register
    subq $512, %rsp
    andq $-16, %rsp
    fxsave (%rsp)
    movq %rbx, %rdi
    call isr_dispatch
    fxrstor (%rsp)
    movq %rbx, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp              // vector and error code
    iretq
    .size isr_common, . - isr_common

    .section .note.GNU-stack, "", @progbits
