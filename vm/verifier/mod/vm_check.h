// SPDX-License-Identifier: MIT
// The verifier's C entry for the rewriter (vm/rewrite): gate 1 for an in-place rewrite
// of a function's bytecode, without going through Python.
#ifndef LOCIOS_VM_VERIFIER_MOD_VM_CHECK_H
#define LOCIOS_VM_VERIFIER_MOD_VM_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"

// Checks code[0..len) (a whole fun_data: prelude and opcodes, as vm.bytecode(fun) gives
// it) in the place of fun's own bytecode, under the named profile ("trusted",
// "locus"): it must verify with the rewriter's opcodes allowed (each heading exactly
// its pattern) and undo, byte for byte, to fun's bytecode (also undone). fun: a
// bytecode function, closure or bound method (else TypeError, as vm.check); a bare
// function that its parent made with MAKE_CLOSURE has its n_free cells in locals
// 0..n_free-1: pass n_free (a closure object supplies its own), else 0 and such a
// function is refused when it uses them. Allocates nothing and runs no bytecode.
// Returns 0, or the rule (verify.h) with the message in msg (cap bytes, NUL-ended).
// Not reentrant: refused (rule 8) while a vm.* verification is running (a finaliser
// run by a collection inside it).
int vm_check_rewrite(mp_obj_t fun, uint32_t n_free, const uint8_t *code, size_t len,
                     const char *profile, char *msg, size_t cap);

#endif
