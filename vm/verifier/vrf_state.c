// SPDX-License-Identifier: MIT
// The verifier's abstract state: the per-offset tables, slot kinds, pushes and pops, and
// the merge of states where paths meet (with the pool of unwind-layout states).
#include <string.h>

#include "vrf_flow.h"

uint8_t vrf_s_flags[VRF_MAX_CODE];
uint16_t vrf_s_depth[VRF_MAX_CODE];
uint16_t vrf_s_block[VRF_MAX_CODE];
uint8_t vrf_s_kind[VRF_MAX_CODE][VRF_MASK_SLOTS];
uint16_t vrf_s_alt_at[VRF_MAX_CODE];
alt_t vrf_s_alt[VRF_MAX_ALT];
uint32_t vrf_s_nalt;
vrf_child_t vrf_s_child[VRF_MAX_CHILDREN];   // how each child is made
uint8_t vrf_s_child_made[VRF_MAX_CHILDREN];  // 0 never, 1 made, 2 made two ways
uint16_t vrf_s_work[VRF_MAX_CODE + VRF_MAX_ALT];
uint16_t vrf_s_nparent[VRF_MAX_CODE];
uint16_t vrf_s_nbase[VRF_MAX_CODE];
uint16_t vrf_s_nhandler[VRF_MAX_CODE];
uint8_t vrf_s_nlevel[VRF_MAX_CODE];
uint8_t vrf_s_cells[32];  // bitmap: locals 0..255 listed in the cell section
// Bytes of the per-offset tables the last run may have set: only those are cleared by
// the next one, so a bound-mode run over a short frozen function does not clear all
// VRF_MAX_CODE bytes.
uint32_t vrf_s_dirty = VRF_MAX_CODE;

int vrf_kget(const st_t *s, uint32_t slot) {
    if (slot == 0 || slot > VRF_MASK_SLOTS) {
        return K_OBJ;
    }
    return s->k[slot - 1];
}

// Slots above the tracked 32 are plain objects: kinds that only grant something
// (cause, collection, cell, qstr) degrade to K_OBJ there, which can only refuse more;
// kinds that forbid something (NULL, raw, __build_class__, class body, unwind data)
// cannot be dropped and fail under rule "limit".
int vrf_kset(st_t *s, uint32_t slot, int kind) {
    if (slot == 0 || slot > VRF_MASK_SLOTS) {
        return is_object_kind(kind) && kind != K_CLASSBODY && kind != K_USENT;
    }
    s->k[slot - 1] = (uint8_t)kind;
    return 1;
}

int vrf_is_iter_buf(const st_t *s, uint32_t top) {
    if (top < VRF_ITER_NSLOTS) {
        return 0;
    }
    uint32_t b = top - VRF_ITER_NSLOTS + 1;
    if (kget(s, b) == K_NULL && is_object_kind(kget(s, b + 1))) {
        for (uint32_t i = 2; i < VRF_ITER_NSLOTS; i++) {
            if (is_raw(kget(s, b + i)) || kget(s, b + i) == K_UDATA) {
                return 0;
            }
        }
        return 1;
    }
    for (uint32_t i = 0; i < VRF_ITER_NSLOTS; i++) {
        if (kget(s, top - VRF_ITER_NSLOTS + 1 + i) != K_RAW + (int)i) {
            return 0;
        }
    }
    return 1;
}

// Forgets the kinds of slots above depth d (they were popped).
void vrf_kclear_above(st_t *s, uint32_t d) {
    if (d < VRF_MASK_SLOTS) {
        memset(s->k + d, 0, VRF_MASK_SLOTS - d);
    }
}

// Pops n slots that must hold objects.
int vrf_pop_n(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t n) {
    if (n > s->d) {
        FAIL(VRF_RULE_STACK, "pops below the bottom of the value stack");
    }
    if (s->d - n < vrf_floor(s, in->off)) {
        FAIL(VRF_RULE_BLOCK, "pops below the base of its exception block");
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!is_object_kind(kget(s, s->d - i))) {
            FAIL(VRF_RULE_STACK, "consumes a raw or NULL slot as an object");
        }
    }
    s->d -= n;
    kclear_above(s, s->d);
    return 0;
}

int vrf_push(ctx_t *c, const vrf_insn_t *in, st_t *s, int kind) {
    if (s->d + 1 > VRF_MAX_DEPTH) {
        FAIL(VRF_RULE_LIMIT, "value stack deeper than the verifier's limit");
    }
    s->d += 1;
    if (!kset(s, s->d, kind)) {
        FAIL(VRF_RULE_LIMIT, "raw, NULL or typed slot deeper than the tracked 32");
    }
    return 0;
}

static int join_kind(int a, int b) {
    if (a == b) {
        return a;
    }
    if (is_raw(a) || is_raw(b) || a == K_BUILDCLASS || b == K_BUILDCLASS || a == K_CLASSBODY ||
        b == K_CLASSBODY || a == K_UDATA || b == K_UDATA) {
        return -1;
    }
    if ((a == K_EXC || a == K_NONE) && (b == K_EXC || b == K_NONE)) {
        return K_EXC;
    }
    if (is_cause(a) && is_cause(b)) {
        return K_CAUSE;
    }
    if (a == K_NULL || a == K_NULLABLE || b == K_NULL || b == K_NULLABLE) {
        return K_NULLABLE;
    }
    return K_OBJ;
}

// Joins the kinds of s into the stored ones k (same depth d). 1: k changed, 0: not,
// -1: a slot that may not be merged.
static int join_into(uint8_t *k, const st_t *s) {
    st_t old = { s->d, s->blk, s->unw, { 0 } };
    memcpy(old.k, k, VRF_MASK_SLOTS);
    st_t mix = old;
    uint32_t top = s->d < VRF_MASK_SLOTS ? s->d : VRF_MASK_SLOTS;
    for (uint32_t i = 1; i <= top; i++) {
        int j = join_kind(kget(&old, i), kget(s, i));
        if (j < 0) {
            return -1;
        }
        kset(&mix, i, j);
    }
    if (memcmp(mix.k, old.k, VRF_MASK_SLOTS) == 0) {
        return 0;
    }
    memcpy(k, mix.k, VRF_MASK_SLOTS);
    return 1;
}

// An unwind-layout state flowing to u: one per offset, kept apart from the primary one.
static int flow_alt(ctx_t *c, const vrf_insn_t *in, uint32_t u, const st_t *s) {
    uint32_t i = vrf_s_alt_at[u];
    alt_t *a;
    if (!i) {
        if (vrf_s_nalt >= VRF_MAX_ALT) {
            FAIL(VRF_RULE_LIMIT, "more unwind-layout states than the verifier tracks");
        }
        a = &vrf_s_alt[vrf_s_nalt++];
        vrf_s_alt_at[u] = (uint16_t)vrf_s_nalt;
        a->off = (uint16_t)u;
        a->d = (uint16_t)s->d;
        a->blk = (uint16_t)s->blk;
        a->unw = (uint16_t)s->unw;
        a->queued = 0;
        memcpy(a->k, s->k, VRF_MASK_SLOTS);
    } else {
        a = &vrf_s_alt[i - 1];
        if (a->unw != s->unw) {
            FAIL(VRF_RULE_BLOCK, "reaches a merge point with two async-with unwind layouts");
        }
        if (a->d != s->d) {
            FAIL(VRF_RULE_STACK, "reaches a merge point with a different stack depth");
        }
        if (a->blk != s->blk) {
            FAIL(VRF_RULE_BLOCK, "reaches a merge point with different exception blocks");
        }
        int j = join_into(a->k, s);
        if (j < 0) {
            FAIL(VRF_RULE_STACK, "merges a raw, __build_class__ or class-body slot with another");
        }
        if (j == 0) {
            return 0;
        }
    }
    if (!a->queued) {
        a->queued = 1;
        vrf_s_work[c->nwork++] = (uint16_t)((a - vrf_s_alt) | WORK_ALT);
    }
    return 0;
}

// Records state s flowing from instruction in to offset t.
int vrf_flow_to(ctx_t *c, const vrf_insn_t *in, int64_t t, const st_t *s) {
    uint8_t need_start = c->fn->len_is_bound ? 0 : F_START;
    if (t < c->pr.code_off || t >= c->end || (vrf_s_flags[t] & need_start) != need_start ||
        (vrf_s_flags[t] & F_INNER)) {
        FAIL(VRF_RULE_FLOW, "jumps off an instruction boundary or outside the code");
    }
    if (t <= in->off && !vrf_op_polls(in->op)) {
        FAIL(VRF_RULE_INTERRUPT, "makes a backward edge without a pending-exception check");
    }
    uint32_t u = (uint32_t)t;
    if (u < in->off && vrf_keeps_active(c, in, s->blk, u)) {
        return c->res->rule;
    }
    if (u + 1 > vrf_s_dirty) {
        vrf_s_dirty = u + 1;
    }
    vrf_s_flags[u] |= F_TARGET;
    if (s->unw) {
        return flow_alt(c, in, u, s);
    }
    if (!(vrf_s_flags[u] & F_SEEN)) {
        vrf_s_flags[u] |= F_SEEN;
        vrf_s_depth[u] = (uint16_t)s->d;
        vrf_s_block[u] = (uint16_t)s->blk;
        memcpy(vrf_s_kind[u], s->k, VRF_MASK_SLOTS);
    } else {
        if (vrf_s_depth[u] != s->d) {
            FAIL(VRF_RULE_STACK, "reaches a merge point with a different stack depth");
        }
        if (vrf_s_block[u] != s->blk) {
            FAIL(VRF_RULE_BLOCK, "reaches a merge point with different exception blocks");
        }
        int j = join_into(vrf_s_kind[u], s);
        if (j < 0) {
            FAIL(VRF_RULE_STACK, "merges a raw, __build_class__ or class-body slot with another");
        }
        if (j == 0) {
            return 0;
        }
    }
    if (!(vrf_s_flags[u] & F_QUEUED)) {
        vrf_s_flags[u] |= F_QUEUED;
        vrf_s_work[c->nwork++] = (uint16_t)u;
    }
    return 0;
}

int vrf_is_cell_local(ctx_t *c, uint32_t i) {
    return i < c->fn->n_free || (i < 256 && (vrf_s_cells[i >> 3] & (1u << (i & 7))));
}

int vrf_use_local(ctx_t *c, const vrf_insn_t *in, uint32_t i) {
    if (i >= c->pr.n_state) {
        FAIL(VRF_RULE_DECODE, "local index beyond n_state");
    }
    if (i + 1 > c->max_local) {
        c->max_local = i + 1;
    }
    return 0;
}
