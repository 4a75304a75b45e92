// SPDX-License-Identifier: MIT
// Replacement checks (rules 2 and 7): rewritten code keeps the original's prelude, uses
// no qstr, constant or child the original does not, and undoes to the original's bytes.
#include <string.h>

#include "vrf_flow.h"

#define VRF_MAX_INDEX (8192)
static uint8_t s_qstr_used[VRF_MAX_INDEX / 8];
static uint8_t s_obj_used[VRF_MAX_INDEX / 8];
static uint8_t s_child_used[VRF_MAX_INDEX / 8];

static int bit(const uint8_t *m, uint32_t i) {
    return i < VRF_MAX_INDEX && (m[i >> 3] & (1u << (i & 7)));
}

static void set_bit(uint8_t *m, uint32_t i) {
    if (i < VRF_MAX_INDEX) {
        m[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
}

static int is_child_op(int op) {
    return op == OP_MAKE_FUNCTION || op == OP_MAKE_FUNCTION_DEFARGS || op == OP_MAKE_CLOSURE ||
           op == OP_MAKE_CLOSURE_DEFARGS;
}

// Marks the operands orig uses; orig was decoded by the caller's verification.
static const char *collect(const vrf_fn_t *fn, const vrf_prelude_t *p) {
    size_t end = fn->len;
    while (end > p->code_off && fn->code[end - 1] == 0) {
        end--;
    }
    for (size_t off = p->code_off; off < end;) {
        vrf_insn_t in;
        if (vrf_decode_insn(fn->code, end, off, &in)) {
            return "original does not decode";
        }
        if (in.fmt == FMT_QSTR) {
            set_bit(s_qstr_used, in.arg);
        } else if (in.op == OP_LOAD_CONST_OBJ) {
            set_bit(s_obj_used, in.arg);
        } else if (is_child_op(in.op)) {
            set_bit(s_child_used, in.arg);
        }
        off += in.size;
    }
    return 0;
}

// Rules 2 and 7 for in-place rewrites: new, with every rewrite head mapped back by the
// undo map, is byte for byte the original (also undone, so a function rewritten before
// may be rewritten further): same prelude, same operands, heads substituted only where
// the verifier proved a pattern. new was just verified: vrf_s_flags marks its
// instruction starts, the only bytes that are opcodes and so the only ones undone.
static int same_canonical(const vrf_fn_t *nf, const vrf_fn_t *orig, const vrf_prelude_t *pn,
                          vrf_result_t *res) {
    size_t oend = orig->len;
    while (oend > pn->code_off && orig->code[oend - 1] == 0) {
        oend--;
    }
    if (!orig->len_is_bound && oend != res->end) {
        char d[48] = "";
        vrf_append_dec(d, res->end, sizeof(d));
        vrf_strlcat(d, " bytes, the original ", sizeof(d));
        vrf_append_dec(d, (uint32_t)oend, sizeof(d));
        return vrf_fail(res, VRF_RULE_PROFILE, 0, -1,
                        "replacement is not the original's length: only heads may change", d);
    }
    for (uint32_t i = 0; i < res->end; i++) {
        if (i >= orig->len) {
            return vrf_fail(res, VRF_RULE_PROFILE, i, -1, "runs past the original", "");
        }
        if (i < pn->code_off) {
            if (nf->code[i] != orig->code[i]) {
                return vrf_fail(res, VRF_RULE_PRELUDE, i, -1,
                                "prelude byte differs from the original's", "");
            }
            continue;
        }
        int start = (vrf_s_flags[i] & F_START) != 0;
        int a = start ? vrf_rw_canon(nf->code, res->end, i) : nf->code[i];
        int b = start ? vrf_rw_canon(orig->code, orig->len, i) : orig->code[i];
        if (a != b) {
            char d[64] = "";
            vrf_strlcat(d, start ? "undoes to " : "operand byte ", sizeof(d));
            vrf_append_hex(d, (uint32_t)a, sizeof(d));
            vrf_strlcat(d, ", the original has ", sizeof(d));
            if (b < 0) {
                vrf_strlcat(d, "a head without its tail", sizeof(d));
            } else {
                vrf_append_hex(d, (uint32_t)b, sizeof(d));
            }
            return vrf_fail(res, VRF_RULE_PROFILE, i, start ? nf->code[i] : -1,
                            "(not the original with rewrite heads substituted)", d);
        }
    }
    return VRF_OK;
}

int vrf_verify_replacement(const vrf_fn_t *nf, const vrf_fn_t *orig, const vrf_profile_t *profile,
                           vrf_result_t *res) {
    vrf_prelude_t pn, po;
    uint32_t bad;
    if (vrf_parse_prelude(orig, &po, &bad)) {
        memset(res, 0, sizeof(*res));
        return vrf_fail(res, VRF_RULE_PRELUDE, bad, -1, "original prelude is malformed", "");
    }
    int r = vrf_verify_mode(nf, profile, res, 1);
    if (r) {
        return r;
    }
    vrf_parse_prelude(nf, &pn, &bad);
    // Names: simple name, argument names (the var-uints at the start of the info
    // section) and the cell section must be byte-identical.
    if (pn.scope_flags != po.scope_flags || pn.n_pos_args != po.n_pos_args ||
        pn.n_kwonly_args != po.n_kwonly_args || pn.n_def_pos_args != po.n_def_pos_args ||
        pn.n_cell != po.n_cell ||
        memcmp(nf->code + pn.cell_off, orig->code + po.cell_off, pn.n_cell) != 0) {
        return vrf_fail(res, VRF_RULE_PRELUDE, 0, -1,
                        "replacement changes the signature or the cells", "");
    }
    if (pn.name != po.name || nf->n_free != orig->n_free) {
        return vrf_fail(res, VRF_RULE_PRELUDE, pn.info_off, -1,
                        "replacement changes the function's name or closure", "");
    }
    memset(s_qstr_used, 0, sizeof(s_qstr_used));
    memset(s_obj_used, 0, sizeof(s_obj_used));
    memset(s_child_used, 0, sizeof(s_child_used));
    if (collect(orig, &po)) {
        return vrf_fail(res, VRF_RULE_PRELUDE, 0, -1, "original does not decode", "");
    }
    for (size_t off = pn.code_off; off < res->end;) {
        vrf_insn_t in;
        vrf_decode_insn(nf->code, res->end, off, &in);
        int fresh = (in.fmt == FMT_QSTR && !bit(s_qstr_used, in.arg)) ||
                    (in.op == OP_LOAD_CONST_OBJ && !bit(s_obj_used, in.arg)) ||
                    (is_child_op(in.op) && !bit(s_child_used, in.arg));
        if (fresh) {
            char d[64] = "";
            size_t n = 0;
            const char *s = in.fmt == FMT_QSTR && nf->qstr ? nf->qstr(nf->ctx, in.arg, &n) : 0;
            if (s) {
                vrf_strlcat(d, "'", sizeof(d));
                vrf_strlcat_n(d, s, n, sizeof(d));
                vrf_strlcat(d, "'", sizeof(d));
            } else {
                vrf_append_dec(d, in.arg, sizeof(d));
            }
            return vrf_fail(res, VRF_RULE_PROFILE, (uint32_t)off, in.op,
                            "uses a name, constant or child the original does not", d);
        }
        off += in.size;
    }
    return same_canonical(nf, orig, &pn, res);
}
