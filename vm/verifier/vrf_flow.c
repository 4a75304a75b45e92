// SPDX-License-Identifier: MIT
// The verifier's driver: prelude checks, a linear decoding sweep, then abstract
// interpretation of stack, slot kinds and exception blocks over the CFG with a worklist.
#include <string.h>

#include "vrf_flow.h"

// The linear sweep: every byte in exactly one instruction, trailing zeros excepted.
static int sweep(ctx_t *c) {
    const vrf_fn_t *fn = c->fn;
    size_t end = fn->len;
    while (end > c->pr.code_off && fn->code[end - 1] == 0) {
        end--;
    }
    c->end = (uint32_t)end;
    c->res->end = c->end;
    if (end == c->pr.code_off) {
        return vrf_fail(c->res, VRF_RULE_FLOW, c->pr.code_off, -1, "function has no opcodes", "");
    }
    for (size_t off = c->pr.code_off; off < end;) {
        vrf_insn_t in;
        int r = vrf_decode_one(c, (uint32_t)off, &in);
        if (r) {
            return r;
        }
        off += in.size;
    }
    return 0;
}

// Decodes the instruction at off, checks its profile and marks its bytes: an opcode
// byte may not be another instruction's operand, nor an operand a jump target.
int vrf_decode_one(ctx_t *c, uint32_t off, vrf_insn_t *out) {
    const vrf_fn_t *fn = c->fn;
    vrf_insn_t in;
    const char *why = vrf_decode_insn(fn->code, c->end, off, &in);
    if (why) {
        return vrf_fail(c->res, VRF_RULE_DECODE, off, off < c->end ? fn->code[off] : -1, why, "");
    }
    for (uint32_t i = 1; i < in.size; i++) {
        if (vrf_s_flags[off + i] & (F_START | F_TARGET)) {
            return vrf_fail(c->res, VRF_RULE_FLOW, off, in.op,
                            "has an operand byte that is also an instruction or a jump target", "");
        }
    }
    // A rewrite head is the original instruction it undoes to, for the profile too
    // (a cache opcode's name is checked as LOAD_GLOBAL/ATTR/METHOD's); original code
    // never holds one, so only a replacement check accepts it, as a pattern's head.
    vrf_insn_t canon = in;
    if (vrf_rw_op(in.op)) {
        const char *bad = !c->rewritten
                              ? "opcode not implemented by the VM outside a checked replacement"
                              : vrf_rw_contract(fn->code, c->end, off);
        if (bad) {
            return vrf_fail(c->res, VRF_RULE_DECODE, off, in.op, bad, "");
        }
        canon.op = (uint8_t)vrf_rw_canon(fn->code, c->end, off);
    }
    {
        char detail[64];
        const char *deny = vrf_profile_check(fn, c->prof, &canon, detail, sizeof(detail));
        if (deny) {
            char what[96] = "";
            vrf_strlcat(what, deny, sizeof(what));
            size_t dl = strlen(deny);
            if (dl >= 10 && memcmp(deny + dl - 10, "by profile", 10) == 0) {
                vrf_strlcat(what, " '", sizeof(what));
                vrf_strlcat(what, c->prof->name ? c->prof->name : "?", sizeof(what));
                vrf_strlcat(what, "'", sizeof(what));
            }
            return vrf_fail(c->res, VRF_RULE_PROFILE, off, in.op, what, detail);
        }
    }
    if (off + in.size > vrf_s_dirty) {
        vrf_s_dirty = off + in.size;
    }
    vrf_s_flags[off] |= F_START;
    for (uint32_t i = 1; i < in.size; i++) {
        vrf_s_flags[off + i] |= F_INNER;
    }
    c->res->n_insns++;
    c->res->n_bytes += in.size;
    *out = in;
    return 0;
}

static int check_prelude(ctx_t *c) {
    uint32_t bad;
    const char *why = vrf_parse_prelude(c->fn, &c->pr, &bad);
    if (why) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, bad, -1, why, "");
    }
    vrf_prelude_t *p = &c->pr;
    c->res->n_state = p->n_state;
    c->res->n_exc_stack = p->n_exc_stack;
    c->res->code_offset = p->code_off;
    c->res->n_bytes = p->code_off;
    c->generator = (p->scope_flags & VRF_SCOPE_GENERATOR) != 0;
    if (c->generator && c->fn->class_body) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1, "class body flagged as a generator", "");
    }
    if ((c->fn->n_defaults >= 0 && p->n_def_pos_args != (uint32_t)c->fn->n_defaults) ||
        (c->fn->kw_defaults >= 0 &&
         ((p->scope_flags & VRF_SCOPE_DEFKWARGS) != 0) != (c->fn->kw_defaults != 0))) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
                        "default-argument counts differ from what the parent passes", "");
    }
    uint32_t n_args = p->n_pos_args + p->n_kwonly_args +
                      ((p->scope_flags & VRF_SCOPE_VARARGS) ? 1 : 0) +
                      ((p->scope_flags & VRF_SCOPE_VARKEYWORDS) ? 1 : 0);
    c->max_local = n_args;
    if (c->fn->n_free > p->n_pos_args) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
                        "closure passes more cells than the function has positional arguments", "");
    }
    memset(vrf_s_cells, 0, sizeof(vrf_s_cells));
    for (uint32_t i = 0; i < p->n_cell; i++) {
        uint8_t l = c->fn->code[p->cell_off + i];
        vrf_s_cells[l >> 3] |= (uint8_t)(1u << (l & 7));
        if (l + 1u > c->max_local) {
            c->max_local = l + 1u;
        }
    }
    if (c->max_local > p->n_state) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
                        "n_state does not cover the arguments and cells", "");
    }
    return 0;
}

int vrf_verify_fn(const vrf_fn_t *fn, const vrf_profile_t *profile, vrf_result_t *res) {
    return vrf_verify_mode(fn, profile, res, 0);
}

int vrf_verify_mode(const vrf_fn_t *fn, const vrf_profile_t *profile, vrf_result_t *res,
                    int rewritten) {
    memset(res, 0, sizeof(*res));
    res->opcode = -1;
    if (fn->code == NULL || fn->len > VRF_MAX_CODE) {
        return vrf_fail(res, VRF_RULE_LIMIT, 0, -1, "code larger than the verifier's limit", "");
    }
    ctx_t ctx = { .fn = fn,
                  .prof = profile ? profile : &vrf_profile_trusted,
                  .res = res,
                  .rewritten = (uint8_t)(rewritten != 0) };
    ctx_t *c = &ctx;
    memset(vrf_s_flags, 0, vrf_s_dirty);
    memset(vrf_s_alt_at, 0, vrf_s_dirty * sizeof(vrf_s_alt_at[0]));
    vrf_s_dirty = 0;
    vrf_s_nalt = 0;
    memset(vrf_s_child_made, 0, sizeof(vrf_s_child_made));
    int r = check_prelude(c);
    if (r) {
        return r;
    }
    if (fn->len_is_bound) {
        c->end = (uint32_t)fn->len;
        res->end = c->end;
    } else if ((r = sweep(c))) {
        return r;
    }
    // Entry: empty stack, no blocks.
    uint32_t start = c->pr.code_off;
    if (start >= c->end) {
        return vrf_fail(res, VRF_RULE_FLOW, start, -1, "function has no opcodes", "");
    }
    if (start + 1 > vrf_s_dirty) {
        vrf_s_dirty = start + 1;
    }
    vrf_s_flags[start] |= F_SEEN | F_QUEUED | F_TARGET;
    vrf_s_depth[start] = 0;
    vrf_s_block[start] = 0;
    memset(vrf_s_kind[start], 0, VRF_MASK_SLOTS);
    vrf_s_work[c->nwork++] = (uint16_t)start;
    uint32_t budget = VRF_STEP_FACTOR * (uint32_t)fn->len + 16;
    while (c->nwork) {
        uint32_t w = vrf_s_work[--c->nwork], off;
        st_t s = { 0, 0, 0, { 0 } };
        if (w & WORK_ALT) {
            alt_t *a = &vrf_s_alt[w & ~WORK_ALT];
            a->queued = 0;
            off = a->off;
            s.d = a->d;
            s.blk = a->blk;
            s.unw = a->unw;
            memcpy(s.k, a->k, VRF_MASK_SLOTS);
        } else {
            off = w;
            vrf_s_flags[off] &= (uint8_t)~F_QUEUED;
            s.d = vrf_s_depth[off];
            s.blk = vrf_s_block[off];
            memcpy(s.k, vrf_s_kind[off], VRF_MASK_SLOTS);
        }
        if (++res->steps > budget) {
            return vrf_fail(res, VRF_RULE_LIMIT, off, fn->code[off], "step budget exhausted", "");
        }
        vrf_insn_t in;
        if (!(vrf_s_flags[off] & F_START)) {
            if ((r = vrf_decode_one(c, off, &in))) {  // bound mode: decode on first visit
                return r;
            }
        } else {
            vrf_decode_insn(fn->code, c->end, off, &in);  // decoded before: cannot fail
        }
        need(c, s.d + vrf_unwind_shift(c, s.blk, off));
        int falls;
        if ((r = vrf_step(c, &in, &s, &falls))) {
            return r;
        }
        if (s.d > res->max_depth) {
            res->max_depth = s.d;
        }
        need(c, s.d + vrf_unwind_shift(c, s.blk, off));
        if (falls) {
            if (off + in.size >= c->end) {
                return vrf_fail(res, VRF_RULE_FLOW, off, in.op, "falls through past the end", "");
            }
            if ((r = flow_to(c, &in, off + in.size, &s))) {
                return r;
            }
        }
    }
    if (c->max_need > res->max_depth) {
        res->max_depth = c->max_need;
    }
    res->n_locals = c->max_local;
    if ((uint64_t)res->n_locals + res->max_depth > c->pr.n_state) {
        char d[48] = "needs ";
        vrf_append_dec(d, res->n_locals + res->max_depth, sizeof(d));
        return vrf_fail(res, VRF_RULE_STACK, 0, -1,
                        "n_state does not cover the locals plus the deepest stack", d);
    }
    if (res->max_blocks > c->pr.n_exc_stack) {
        return vrf_fail(res, VRF_RULE_BLOCK, 0, -1,
                        "n_exc_stack does not cover the deepest block nesting", "");
    }
    return VRF_OK;
}

int vrf_child(uint32_t child, vrf_child_t *out) {
    if (child >= VRF_MAX_CHILDREN || !vrf_s_child_made[child]) {
        return -1;
    }
    *out = vrf_s_child[child];
    return vrf_s_child_made[child] == 1 ? 0 : -2;
}
