// SPDX-License-Identifier: MIT
// The profiler's counting fast paths on x86-64 (MicroPython's per-CPU naming, as in
// asmx64.c and nlrx64.c): prof_vm.h includes this file when the port names it in
// LOCIOS_PROF_ARCH_H, in place of its plain C versions. In asm because GCC's code for
// them takes twice the instructions, and these run at every back edge and frame exit.
#ifndef LOCIOS_VM_PROFILE_PROF_VMX64_H
#define LOCIOS_VM_PROFILE_PROF_VMX64_H

// A jump from `jump` to `target` is a back edge when the target is not after it. The
// compare sets the carry for a forward jump (jump < target) and `sbb $-1` adds 1 - carry:
// two instructions and no branch (C's `back += target <= jump` compiles to four).
PROF_ALWAYS_INLINE void prof_branch(prof_frame_t *f, const void *target, const void *jump) {
    __asm__("cmpq %[t], %[j]\n\tsbbq $-1, %[n]"
            : [n] "+m"(f->back)
            : [t] "r"(target), [j] "rm"(jump)
            : "cc");
}

// One mask, one compare, two adds (a collision or a first sight goes out of line). GCC
// spends an extra lea on the slot address and pairs the adds into SSE (six instructions
// for two adds); `table` must be a link-time constant (it is MP_STATE_VM(prof_table)),
// used as the displacement of a scaled index: a slot is 32 bytes, so
// &table[(key >> 4) & (SLOTS - 1)] = table + 2 * (key & ((SLOTS - 1) << 4)).
PROF_ALWAYS_INLINE void prof_count_exit(prof_frame_t *f, prof_slot_t *table, const void *key,
                                        int finished) {
    _Static_assert(sizeof(prof_slot_t) == 32, "prof_slot_t is 32 bytes");
    uintptr_t at = (uintptr_t)key & ((uintptr_t)(LOCIOS_PROF_SLOTS - 1) << 4);
    uint64_t back = f->back;
    if (finished) {
        __asm__ goto("cmpq %[key], %c[tab](,%[at],2)\n\t"
                     "jne %l[miss]\n\t"
                     "addq $1, %c[tab]+16(,%[at],2)\n\t"
                     "addq %[back], %c[tab]+24(,%[at],2)"
                     :
                     : [key] "r"(key), [at] "r"(at), [back] "r"(back), [tab] "i"(table)
                     : "cc", "memory"
                     : miss);
    } else {
        __asm__ goto("cmpq %[key], %c[tab](,%[at],2)\n\t"
                     "jne %l[miss]\n\t"
                     "addq %[back], %c[tab]+24(,%[at],2)"
                     :
                     : [key] "r"(key), [at] "r"(at), [back] "r"(back), [tab] "i"(table)
                     : "cc", "memory"
                     : miss);
    }
    return;
miss:
    prof_leave_slow(f, key, finished);
}

#endif
