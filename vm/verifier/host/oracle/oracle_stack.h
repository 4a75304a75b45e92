// SPDX-License-Identifier: MIT
// Hooks oracle-stack.patch adds to the oracle's py/vm.c and py/persistentcode.c.
#ifndef LOCIOS_VM_VERIFIER_HOST_ORACLE_ORACLE_STACK_H
#define LOCIOS_VM_VERIFIER_HOST_ORACLE_ORACLE_STACK_H

#include "py/bc.h"

// A bytecode function's buffer, as read from a .mpy (called in load order).
void loci_oracle_loaded(const uint8_t *code, size_t len);
// Before each instruction: ip at its opcode, sp the top of the value stack.
void loci_oracle_tick(const mp_code_state_t *cs, const uint8_t *ip, const mp_obj_t *sp,
                      const mp_exc_stack_t *exc_sp, const mp_exc_stack_t *exc_stack);
// Inside an instruction that writes above its own result (SETUP_WITH, WITH_CLEANUP):
// top is the highest slot it touches; ip is past the opcode byte.
void loci_oracle_scratch(const mp_code_state_t *cs, const uint8_t *ip, const mp_obj_t *top);

#endif
