// SPDX-License-Identifier: MIT
// The qstr operands of a function just verified, instruction by instruction: what
// vm.names() gathers global names from, read off the verifier's own tables so that it
// sees exactly the instructions the proof covered (those reachable from the entry); and
// its cell accesses, what vm.derefs() lists.
#include <stdbool.h>

#include "vrf_flow.h"

static bool is_qstr_operand(const vrf_insn_t *in) {
    return in->fmt == FMT_QSTR;
}

static bool is_cell_access(const vrf_insn_t *in) {
    return in->op == OP_LOAD_DEREF || in->op == OP_STORE_DEREF || in->op == OP_DELETE_DEREF;
}

// The next instruction from *off that `wanted` accepts, its opcode in *op and operand in
// *arg; 0 when there is none.
static int next_reached(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                        uint32_t *arg, bool (*wanted)(const vrf_insn_t *)) {
    // Only instructions some state reached (F_TARGET) were stepped, and only there are
    // operands range-checked: the sweep also decodes dead code, which never runs and
    // whose operands nobody checked, so it is skipped.
    uint32_t end = res->end < vrf_s_dirty ? res->end : vrf_s_dirty;
    for (uint32_t o = *off; o < end; o++) {
        if ((vrf_s_flags[o] & (F_START | F_TARGET)) != (F_START | F_TARGET)) {
            continue;
        }
        vrf_insn_t in;
        if (vrf_decode_insn(fn->code, res->end, o, &in) || !wanted(&in)) {
            continue;
        }
        *op = in.op;
        *arg = in.arg;
        *off = o + in.size;
        return 1;
    }
    *off = end;
    return 0;
}

int vrf_next_qstr(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                  uint32_t *q) {
    return next_reached(fn, res, off, op, q, is_qstr_operand);
}

int vrf_next_deref(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                   uint32_t *local) {
    return next_reached(fn, res, off, op, local, is_cell_access);
}
