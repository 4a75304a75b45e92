// SPDX-License-Identifier: MIT
// Computed-goto table entries of the rewritten opcodes (issue 7), included by
// py/vmentrytable.h (vm/patches/0007) as MICROPY_VM_EXTRA_ENTRIES_H; bodies in rw_ops.h.
// Written as labels inside py/vm.c's switch and laid out as the VM's own opcodes are,
// so the formatter leaves the rest of this file alone:
// clang-format off
#include "rw_opcodes.h"
[LOCIOS_BC_CMPJ_LT] = &&entry_LOCIOS_BC_CMPJ_LT,
[LOCIOS_BC_CMPJ_GT] = &&entry_LOCIOS_BC_CMPJ_GT,
[LOCIOS_BC_CMPJ_EQ] = &&entry_LOCIOS_BC_CMPJ_EQ,
[LOCIOS_BC_CMPJ_LE] = &&entry_LOCIOS_BC_CMPJ_LE,
[LOCIOS_BC_CMPJ_GE] = &&entry_LOCIOS_BC_CMPJ_GE,
[LOCIOS_BC_CMPJ_NE] = &&entry_LOCIOS_BC_CMPJ_NE,
[LOCIOS_BC_ADD_SI] = &&entry_LOCIOS_BC_ADD_SI,
[LOCIOS_BC_SUB_SI] = &&entry_LOCIOS_BC_SUB_SI,
[LOCIOS_BC_MUL_SI] = &&entry_LOCIOS_BC_MUL_SI,
[LOCIOS_BC_FLOORDIV_SI] = &&entry_LOCIOS_BC_FLOORDIV_SI,
[LOCIOS_BC_MOD_SI] = &&entry_LOCIOS_BC_MOD_SI,
[LOCIOS_BC_AND_SI] = &&entry_LOCIOS_BC_AND_SI,
[LOCIOS_BC_OR_SI] = &&entry_LOCIOS_BC_OR_SI,
[LOCIOS_BC_XOR_SI] = &&entry_LOCIOS_BC_XOR_SI,
[LOCIOS_BC_IADD_SI] = &&entry_LOCIOS_BC_IADD_SI,
[LOCIOS_BC_ISUB_SI] = &&entry_LOCIOS_BC_ISUB_SI,
[LOCIOS_BC_RSHIFT_SI] = &&entry_LOCIOS_BC_RSHIFT_SI,
[LOCIOS_BC_LSHIFT_SI] = &&entry_LOCIOS_BC_LSHIFT_SI,
[LOCIOS_BC_SUBSCR_SI] = &&entry_LOCIOS_BC_SUBSCR_SI,
[LOCIOS_BC_STORE_SUBSCR_SI] = &&entry_LOCIOS_BC_STORE_SUBSCR_SI,
[LOCIOS_BC_FORRANGE_SI] = &&entry_LOCIOS_BC_FORRANGE_SI,
[LOCIOS_BC_INCR_FAST] = &&entry_LOCIOS_BC_INCR_FAST,
[LOCIOS_BC_RETURN_NONE] = &&entry_LOCIOS_BC_RETURN_NONE,
[LOCIOS_BC_LOAD_GLOBAL_C] = &&entry_LOCIOS_BC_LOAD_GLOBAL_C,
[LOCIOS_BC_LOAD_ATTR_C] = &&entry_LOCIOS_BC_LOAD_ATTR_C,
[LOCIOS_BC_LOAD_METHOD_C] = &&entry_LOCIOS_BC_LOAD_METHOD_C,
