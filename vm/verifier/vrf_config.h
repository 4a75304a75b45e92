// SPDX-License-Identifier: MIT
// Tunables of the bytecode verifier: every fixed-size table it uses is sized here, so
// its memory (static, no malloc) and its running time are bounded by these numbers.
#ifndef LOCIOS_VM_VERIFIER_VRF_CONFIG_H
#define LOCIOS_VM_VERIFIER_VRF_CONFIG_H

// Largest function (prelude plus opcodes) verified, in bytes; larger ones are refused
// under rule "limit". The per-offset state tables are this long (about 50 bytes per
// byte of code). The largest function in MicroPython's tests/basics is 1140 bytes.
#ifndef VRF_MAX_CODE
#define VRF_MAX_CODE (8192)
#endif

// Deepest value stack tracked. Slot kinds are kept for the lowest 32 slots: the VM's
// raw iterator buffers, NULLs and __build_class__ may only live there.
#define VRF_MAX_DEPTH  (1024)
#define VRF_MASK_SLOTS (32)

// Deepest nesting of children verified recursively (the compiler nests scopes once per
// def/lambda/comprehension/class).
#define VRF_MAX_NESTING (32)

// Children a function may make (MAKE_FUNCTION/MAKE_CLOSURE index bound we track).
#define VRF_MAX_CHILDREN (1024)

// Worklist step budget per function, as a multiple of its code size: verification
// time stays proportional to code size, and a function that needs more is refused
// under rule "limit" (the fuzz driver reports the most steps any input took).
#define VRF_STEP_FACTOR (4)

// Extra abstract states for async-with handlers entered by an unwind, which keep their
// (data, sentinel) pair apart from the exception layout: at most one per offset, from a
// pool of this many (about 42 bytes each). The compiler needs about 12 per `async with`.
#define VRF_MAX_ALT (1024)

// Slots in the VM's iterator buffer on the value stack, MP_OBJ_ITER_BUF_NSLOTS: an
// mp_obj_iter_buf_t is four words on 64-bit builds (checked by the guest module).
#define VRF_ITER_NSLOTS (4)

// Longest rejection message, NUL included.
#define VRF_MSG_MAX (160)

#endif
