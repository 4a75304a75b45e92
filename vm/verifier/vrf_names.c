// SPDX-License-Identifier: MIT
// The qstr operands of a function just verified, instruction by instruction: what
// vm.names() gathers global names from, read off the verifier's own tables so that it
// sees exactly the instructions the proof covered (those reachable from the entry); and
// its cell accesses, what vm.derefs() lists.
#include "vrf_flow.h"

int vrf_next_qstr(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                  uint32_t *q) {
    // Only instructions some state reached (F_TARGET) were stepped, and only there are
    // operands range-checked: the sweep also decodes dead code, which never runs and
    // whose qstr indices nobody checked, so it is skipped.
    uint32_t end = res->end < vrf_s_dirty ? res->end : vrf_s_dirty;
    for (uint32_t o = *off; o < end; o++) {
        if ((vrf_s_flags[o] & (F_START | F_TARGET)) != (F_START | F_TARGET)) {
            continue;
        }
        vrf_insn_t in;
        if (vrf_decode_insn(fn->code, res->end, o, &in) || in.fmt != FMT_QSTR) {
            continue;
        }
        *op = in.op;
        *q = in.arg;
        *off = o + in.size;
        return 1;
    }
    *off = end;
    return 0;
}

int vrf_next_deref(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                   uint32_t *local) {
    uint32_t end = res->end < vrf_s_dirty ? res->end : vrf_s_dirty;
    for (uint32_t o = *off; o < end; o++) {
        if ((vrf_s_flags[o] & (F_START | F_TARGET)) != (F_START | F_TARGET)) {
            continue;
        }
        vrf_insn_t in;
        if (vrf_decode_insn(fn->code, res->end, o, &in) ||
            (in.op != OP_LOAD_DEREF && in.op != OP_STORE_DEREF && in.op != OP_DELETE_DEREF)) {
            continue;
        }
        *op = in.op;
        *local = in.arg;
        *off = o + in.size;
        return 1;
    }
    *off = end;
    return 0;
}
