// SPDX-License-Identifier: MIT
// Exception blocks: SETUP_*, POP_EXCEPT_JUMP, WITH_CLEANUP, END_FINALLY and UNWIND_JUMP,
// simulated in the layouts the VM's exception dispatch and unwinds produce.
#include <string.h>

#include "vrf_flow.h"

#define BINARY_OP_EXCEPTION_MATCH (8)  // py/runtime0.h, mp_binary_op_t

uint32_t vrf_node_base(uint32_t blk) {
    return blk ? vrf_s_nbase[blk - 1] : 0;
}

// The SETUP_* opcode that made block blk (its byte is still in the code).
int vrf_node_op(const ctx_t *c, uint32_t blk) {
    return blk ? c->fn->code[blk - 1] : -1;
}

int vrf_node_active(uint32_t blk, uint32_t off) {
    return vrf_s_nhandler[blk - 1] <= off;
}

int vrf_node_async(uint32_t blk) {
    return blk && (vrf_s_flags[blk - 1] & F_ASYNC);
}

// Lowest depth the code at off may pop to. An active async-with handler consumes its
// context manager, the slot just below its base (vrf_setup_block proved that slot
// belongs to no enclosing block).
uint32_t vrf_floor(const st_t *s, uint32_t off) {
    uint32_t b = node_base(s->blk);
    if (vrf_node_async(s->blk) && node_active(s->blk, off)) {
        return b - 1;
    }
    return b;
}

// Number of active finally/with handlers on the block chain: each may have been
// entered by an unwind that leaves one more raw word below its cause. Async-with
// handlers are not counted: their unwind layout is followed explicitly.
uint32_t vrf_unwind_shift(const ctx_t *c, uint32_t blk, uint32_t off) {
    uint32_t n = 0;
    for (; blk; blk = vrf_s_nparent[blk - 1]) {
        if (node_active(blk, off) && node_op(c, blk) != OP_SETUP_EXCEPT && !vrf_node_async(blk)) {
            n++;
        }
    }
    return n;
}

// An edge from in to off with block chain blk. The VM may run a finally or with handler
// entered by an unwind, with one more word on the stack than its exception entry; the
// verifier counts that word (vrf_unwind_shift) only where the block is active by layout,
// handler <= off. So no edge may leave a still open block's handler for code before it:
// from there the VM would carry the word into code counted without it (a handler moved
// onto a loop head ran the loop again one slot deeper than max_depth). Only a backward
// edge can (handler <= in->off, off < handler): vrf_flow_to calls this for those alone.
int vrf_keeps_active(ctx_t *c, const vrf_insn_t *in, uint32_t blk, uint32_t off) {
    for (; blk; blk = vrf_s_nparent[blk - 1]) {
        if (node_op(c, blk) != OP_SETUP_EXCEPT && node_active(blk, in->off) &&
            !node_active(blk, off)) {
            FAIL(VRF_RULE_BLOCK, "leaves a finally or with handler for code before it "
                                 "while its block is open");
        }
    }
    return 0;
}

// The handler head mpy-cross emits for `async with` (py/emitbc.c,
// mp_emit_bc_async_with_setup_finally): DUP_TOP; LOAD_GLOBAL BaseException;
// BINARY_OP EXCEPTION_MATCH; POP_JUMP_IF_FALSE L. Fills *jmp with the last one.
static int async_head(ctx_t *c, uint32_t h, vrf_insn_t *jmp) {
    static const uint8_t ops[4] = {
        OP_DUP_TOP,
        OP_LOAD_GLOBAL,
        OP_BINARY_OP_MULTI + BINARY_OP_EXCEPTION_MATCH,
        OP_POP_JUMP_IF_FALSE,
    };
    vrf_insn_t x[4];
    uint32_t off = h;
    for (int i = 0; i < 4; i++) {
        if (off < c->pr.code_off || off >= c->end || (vrf_s_flags[off] & F_INNER) ||
            (!c->fn->len_is_bound && !(vrf_s_flags[off] & F_START)) ||
            vrf_decode_insn(c->fn->code, c->end, off, &x[i]) ||
            (c->rewritten ? vrf_rw_canon(c->fn->code, c->end, off) : x[i].op) != ops[i]) {
            return 0;
        }
        off += x[i].size;
    }
    size_t n;
    const char *name =
        x[1].arg < c->fn->n_qstr && c->fn->qstr ? c->fn->qstr(c->fn->ctx, x[1].arg, &n) : NULL;
    if (!name || !vrf_streq_n("BaseException", name, n)) {
        return 0;
    }
    for (int i = 0; i < 4; i++) {  // bound mode: claim the bytes as these instructions
        if (!(vrf_s_flags[x[i].off] & F_START) && vrf_decode_one(c, x[i].off, &x[i])) {
            return -1;
        }
    }
    *jmp = x[3];
    // The body's end: LOAD_CONST_NONE; ROT_TWO; JUMP to the __aexit__ call, just before
    // the handler. Its ROT_TWO is marked: it may swap the context manager out of the
    // block's base slot (vrf_async_tail).
    for (uint32_t sz = 2; sz <= 3; sz++) {
        uint32_t j = h - sz;
        vrf_insn_t y[2];
        if (h < c->pr.code_off + sz + 1 || (vrf_s_flags[j - 1] & F_INNER) ||
            (vrf_s_flags[j] & F_INNER) ||
            (!c->fn->len_is_bound && !(vrf_s_flags[j - 1] & vrf_s_flags[j] & F_START)) ||
            vrf_decode_insn(c->fn->code, c->end, j - 1, &y[0]) || y[0].op != OP_ROT_TWO ||
            vrf_decode_insn(c->fn->code, c->end, j, &y[1]) || y[1].op != OP_JUMP ||
            y[1].size != sz) {
            continue;
        }
        for (int i = 0; i < 2; i++) {
            if (!(vrf_s_flags[y[i].off] & F_START) && vrf_decode_one(c, y[i].off, &y[i])) {
                return -1;
            }
        }
        vrf_s_flags[j - 1] |= F_ATAIL;
        break;
    }
    return 1;
}

// The marked ROT_TWO at the end of an async-with body, in its still inactive block with
// (ctx, x) on top of its base, puts x in the base slot: allowed for a plain object x,
// since both handler entries take that slot as a plain object (setup_async).
// -1: not that instruction in that state; else 0 or the rule refused.
int vrf_async_tail(ctx_t *c, const vrf_insn_t *in, st_t *s) {
    uint32_t b = node_base(s->blk);
    if (!(vrf_s_flags[in->off] & F_ATAIL) || !vrf_node_async(s->blk) ||
        node_active(s->blk, in->off) || s->d != b + 1) {
        return -1;
    }
    int x = kget(s, b + 1), ctx = kget(s, b);
    if (!is_object_kind(x) || x == K_CLASSBODY || x == K_USENT) {
        FAIL(VRF_RULE_STACK, "swaps a non-object into an async-with block's base");
    }
    kset(s, b, x);
    kset(s, b + 1, ctx);
    return 0;
}

// An async-with block: the VM enters its handler with (ctx, exception) after an
// exception, or with (ctx, data, sentinel) from an unwind (a return: the value and
// -1; UNWIND_JUMP: a raw address and the handlers left to unwind), and its head tells
// them apart. A small int is never an exception, so the unwind layout always takes the
// jump; the exception layout falls through as long as the global BaseException is the
// builtin one (the trust this rests on; the locus profile refuses rebinding it).
static int setup_async(ctx_t *c, const vrf_insn_t *in, const st_t *s, uint32_t base,
                       const vrf_insn_t *jmp) {
    if (s->unw) {
        FAIL(VRF_RULE_LIMIT, "opens an async-with block inside an unwind layout");
    }
    if (base < 1 || base - 1 < vrf_floor(s, in->off)) {
        FAIL(VRF_RULE_BLOCK, "opens an async-with block without its context manager");
    }
    vrf_s_flags[in->off] |= F_ASYNC;
    st_t h = *s;
    h.d = base;
    kclear_above(&h, base);
    kset(&h, base, K_OBJ);  // the context manager, or what the body's end swapped in
    h.blk = in->off + 1;
    st_t u = h;
    need(c, base + 3);  // the head's DUP_TOP and LOAD_GLOBAL above the exception
    if (push(c, in, &h, K_EXC) || flow_to(c, jmp, jmp->off + jmp->size, &h)) {
        return c->res->rule;
    }
    need(c, base + 4);  // and above the (data, sentinel) pair
    u.unw = h.blk;
    if (push(c, in, &u, K_UDATA) || push(c, in, &u, K_USENT)) {
        return c->res->rule;
    }
    return flow_to(c, jmp, jmp->target, &u);
}

// A new exception block for the SETUP_* at in->off, with base depth base.
int vrf_setup_block(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t base) {
    uint32_t so = in->off;
    uint32_t level = s->blk ? vrf_s_nlevel[s->blk - 1] + 1u : 1u;
    if (level > 255) {
        FAIL(VRF_RULE_LIMIT, "exception blocks nested too deeply");
    }
    if (level > c->res->max_blocks) {
        c->res->max_blocks = level;
    }
    vrf_s_flags[so] |= F_SETUP;
    vrf_s_nparent[so] = (uint16_t)s->blk;
    vrf_s_nbase[so] = (uint16_t)base;
    vrf_s_nhandler[so] = (uint16_t)in->target;
    vrf_s_nlevel[so] = (uint8_t)level;
    int r;
    vrf_insn_t jmp;
    if (in->op == OP_SETUP_FINALLY && (r = async_head(c, (uint32_t)in->target, &jmp))) {
        if (r < 0 || (r = setup_async(c, in, s, base, &jmp))) {
            return c->res->rule;
        }
        s->blk = so + 1;
        return 0;
    }
    // Exception entry: sp reset to the base, the exception pushed, block still on the
    // exception stack (the handler is "active" by layout: handler <= ip).
    st_t h = *s;
    h.d = base;
    kclear_above(&h, base);
    h.blk = so + 1;
    if ((r = push(c, in, &h, K_CAUSE)) || (r = flow_to(c, in, in->target, &h))) {
        return r;
    }
    s->blk = so + 1;
    return 0;
}

// An unwind (RETURN_VALUE, UNWIND_JUMP) that runs a finally handler goes on from the
// END_FINALLY that ends it, and the VM then judges each enclosing finally active or not
// by that END_FINALLY's offset (handler <= ip), where the verifier judged all of them at
// the unwind's start. The two agree when every unwind that runs block blk starts after
// its SETUP (here) and no enclosing finally's handler lies between that SETUP and any
// END_FINALLY ending blk (resume_alike): together no handler lies between the
// unwind's start and where it resumes.
int vrf_unwind_runs(ctx_t *c, const vrf_insn_t *in, uint32_t blk) {
    if (in->off < blk - 1) {
        FAIL(VRF_RULE_BLOCK, "unwinds through a finally block from before its SETUP");
    }
    return 0;
}

static int resume_alike(ctx_t *c, const vrf_insn_t *in, uint32_t blk) {
    for (uint32_t a = vrf_s_nparent[blk - 1]; a; a = vrf_s_nparent[a - 1]) {
        uint32_t h = vrf_s_nhandler[a - 1];
        if (node_op(c, a) != OP_SETUP_EXCEPT && blk - 1 < h && h <= in->off) {
            FAIL(VRF_RULE_BLOCK, "ends a finally handler after the handler of an enclosing "
                                 "finally that an unwind through it would misjudge");
        }
    }
    return 0;
}

// UNWIND_JUMP: the VM pops (extra & 0x7f) blocks, running inactive finally handlers
// (which return here through END_FINALLY) and cancelling active ones, then jumps.
int vrf_unwind_jump(ctx_t *c, const vrf_insn_t *in, st_t *s) {
    uint32_t n = in->extra & 0x7f;
    uint32_t d = s->d, blk = s->blk;
    for (uint32_t i = 0; i < n; i++) {
        if (!blk) {
            FAIL(VRF_RULE_BLOCK, "unwinds more exception blocks than are open");
        }
        int op = node_op(c, blk);
        if (op != OP_SETUP_EXCEPT) {
            if (!node_active(blk, in->off)) {
                if (d != node_base(blk)) {
                    FAIL(VRF_RULE_BLOCK, "unwinds through a finally with the stack off its base");
                }
                if (vrf_unwind_runs(c, in, blk)) {
                    return c->res->rule;
                }
                // The handler runs and comes back; WITH_CLEANUP drops __exit__ and self,
                // an async-with handler its context manager.
                if (op == OP_SETUP_WITH) {
                    d -= 2;
                } else if (vrf_node_async(blk)) {
                    d -= 1;
                }
            } else {
                if (vrf_node_async(blk)) {
                    FAIL(VRF_RULE_BLOCK, "cancels an active async-with handler");
                }
                if (d != node_base(blk) + 1 || !is_cause(kget(s, d))) {
                    FAIL(VRF_RULE_BLOCK, "cancels an active finally without its cause on top");
                }
                d -= 1;
            }
        }
        blk = vrf_s_nparent[blk - 1];
    }
    st_t t = *s;
    t.d = d;
    t.blk = blk;
    kclear_above(&t, d);
    if (in->extra & 0x80) {
        if (d < VRF_ITER_NSLOTS) {
            FAIL(VRF_RULE_STACK, "pops an iterator that is not there");
        }
        if (!vrf_is_iter_buf(&t, d)) {
            FAIL(VRF_RULE_STACK, "pops an iterator buffer that is not one");
        }
        t.d = d - VRF_ITER_NSLOTS;
        kclear_above(&t, t.d);
    }
    if (t.d < node_base(t.blk)) {
        FAIL(VRF_RULE_BLOCK, "jumps out below the base of the enclosing block");
    }
    return flow_to(c, in, in->target, &t);
}

// END_FINALLY. After an async-with handler it finds (..., None or exception) when it
// was entered by an exception or by the body's end, and (..., data, sentinel) in the
// unwind layout, which hands control back to the unwind (modelled where it started).
static int end_finally(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls) {
    int bop = node_op(c, s->blk);
    uint32_t b = node_base(s->blk);
    if (bop < 0 || !node_active(s->blk, in->off)) {
        FAIL(VRF_RULE_BLOCK, "does not end an active handler with its cause on top");
    }
    if (bop != OP_SETUP_EXCEPT && resume_alike(c, in, s->blk)) {
        return c->res->rule;
    }
    if (vrf_node_async(s->blk)) {
        if (s->unw == s->blk) {
            if (s->d != b + 1 || kget(s, b) != K_UDATA || kget(s, b + 1) != K_USENT) {
                FAIL(VRF_RULE_BLOCK, "ends an async-with unwind without its data and sentinel");
            }
            *falls = 0;
            return 0;
        }
        if (s->unw || s->d != b || (kget(s, b) != K_EXC && kget(s, b) != K_NONE)) {
            FAIL(VRF_RULE_BLOCK, "ends an async-with handler without None or its exception");
        }
    } else if (!is_cause(kget(s, s->d)) || s->d != (bop == OP_SETUP_WITH ? b - 1 : b + 1)) {
        FAIL(VRF_RULE_BLOCK, "does not end an active handler with its cause on top");
    }
    s->blk = vrf_s_nparent[s->blk - 1];
    s->d -= 1;
    kclear_above(s, s->d);
    if (s->d < vrf_floor(s, in->off)) {
        FAIL(VRF_RULE_BLOCK, "ends below the base of the enclosing block");
    }
    return 0;
}

// The opcodes that open, leave or end exception blocks.
int vrf_block_op(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls) {
    int r;
    switch (in->op) {
        case OP_SETUP_WITH: {
            // (ctx) -> (__exit__, self) as the block's base, then the __enter__ result;
            // mp_load_method writes two slots beyond the new top while doing so.
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            need(c, s->d + 4);
            if (push(c, in, s, K_OBJ) || push(c, in, s, K_OBJ) || vrf_setup_block(c, in, s, s->d)) {
                return c->res->rule;
            }
            return push(c, in, s, K_OBJ);
        }
        case OP_SETUP_EXCEPT:
        case OP_SETUP_FINALLY:
            return vrf_setup_block(c, in, s, s->d);
        case OP_POP_EXCEPT_JUMP:
            *falls = 0;
            if (node_op(c, s->blk) != OP_SETUP_EXCEPT) {
                FAIL(VRF_RULE_BLOCK, "pops an exception block that is not an except");
            }
            if (s->d != node_base(s->blk)) {
                FAIL(VRF_RULE_BLOCK, "leaves an except block with the stack off its base");
            }
            s->blk = vrf_s_nparent[s->blk - 1];
            return flow_to(c, in, in->target, s);
        case OP_WITH_CLEANUP: {
            uint32_t b = node_base(s->blk);
            if (node_op(c, s->blk) != OP_SETUP_WITH || !node_active(s->blk, in->off) ||
                s->d != b + 1 || !is_cause(kget(s, s->d)) || b < 2) {
                FAIL(VRF_RULE_BLOCK, "is not at the start of its with-handler");
            }
            // Writes two slots above its cause; in an unwind (cause one higher) it
            // writes one: base + 3 either way.
            need(c, b + 3);
            s->d = b - 1;
            kclear_above(s, s->d);
            kset(s, s->d, K_CAUSE);
            return 0;
        }
        case OP_END_FINALLY:
            return end_finally(c, in, s, falls);
        case OP_UNWIND_JUMP:
            *falls = 0;
            need(c, s->d + 2);
            return vrf_unwind_jump(c, in, s);
        default:
            FAIL(VRF_RULE_DECODE, "opcode not handled");
    }
}
