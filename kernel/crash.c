// SPDX-License-Identifier: MIT
// Deliberate unrecoverable faults inside the kernel's own C, so the tests can prove the
// fault dump still works although faults from Python are recovered (kernel.crash()).
#include "arch.h"
#include "config.h"
#include "kernel.h"

// Recursion that cannot be optimised into a loop: each level keeps a live 256-byte
// buffer on the stack until it reaches the guard page below the main stack.
static __attribute__((noinline)) uint64_t overflow(volatile uint8_t *prev, uint64_t depth) {
    volatile uint8_t buf[256];
    if (depth == UINT64_MAX) {  // never: the guard page stops it long before
        return 0;
    }
    buf[0] = (uint8_t)depth;
    buf[255] = prev ? prev[0] : 0;
    return overflow(buf, depth + 1) + buf[255];
}

// Read through a variable so the compiler cannot see (and reject) the NULL access.
static volatile uintptr_t null_addr = KCRASH_NULL_ADDR;

void kcrash(enum kcrash_kind kind) {
    switch (kind) {
        case KCRASH_NULL_READ: {
            (void)*(volatile uint64_t *)null_addr;
            break;
        }
        case KCRASH_INVALID_OPCODE:
            arch_invalid_opcode();
            break;
        case KCRASH_STACK_OVERFLOW:
            (void)overflow(NULL, 0);
            break;
    }
    kpanic("kcrash: unknown kind or the fault did not happen");
}
