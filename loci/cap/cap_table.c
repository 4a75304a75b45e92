// SPDX-License-Identifier: MIT
// The capability table: the caller's arena, slots with generations, handle lookup,
// grant (a root) and derive (a narrowed child in the derivation tree), reason names.
#include <string.h>

#include "cap_internal.h"

static const char *const why[CAP_E__COUNT] = {
    "ok",
    "revoked",
    "expired",
    "wrong owner",
    "op not granted",
    "flavour not granted",
    "outside region",
    "key not granted",
    "rate exceeded",
    "foreign handle",
    "port outside grant",
    "address outside grant",
    "bad amount",
    "io and mem need authority 0",
    "audit log full",
    "capability table full",
    "bad argument",
    "widens rights",
    "widens flavours",
    "widens region",
    "widens keys",
    "widens rate",
    "widens expires",
    "widens io",
    "widens mem",
};

const char *cap_why(int err) {
    return err >= 0 && err < CAP_E__COUNT ? why[err] : "unknown reason";
}

static size_t round_up(size_t n) {
    return (n + CAP_ALIGN - 1) & ~(size_t)(CAP_ALIGN - 1);
}

size_t cap_arena_size(uint32_t capacity, uint32_t audit) {
    return round_up((size_t)capacity * sizeof(cap_slot_t)) +
           round_up((size_t)capacity * sizeof(uint32_t)) + round_up((size_t)audit * CAP_REC_SIZE);
}

int cap_init(cap_table_t *t, void *arena, size_t size, uint32_t capacity, uint32_t audit,
             uint64_t id) {
    // Two audit records at least: an export leaves a CHECKPOINT and needs room after it.
    if (t == NULL || arena == NULL || capacity == 0 || capacity > CAP_MAX_CAPACITY || audit < 2 ||
        audit > CAP_MAX_AUDIT || ((uintptr_t)arena & (CAP_ALIGN - 1)) != 0 ||
        size < cap_arena_size(capacity, audit)) {
        return CAP_E_ARG;
    }
    memset(t, 0, sizeof *t);
    uint8_t *p = arena;
    t->slots = (cap_slot_t *)p;
    p += round_up((size_t)capacity * sizeof(cap_slot_t));
    t->free = (uint32_t *)p;
    p += round_up((size_t)capacity * sizeof(uint32_t));
    t->log = p;
    memset(t->slots, 0, (size_t)capacity * sizeof(cap_slot_t));
    t->id = id;
    t->capacity = capacity;
    t->audit_cap = audit;
    // Popped from the top: slot 0 first, then 1, ...
    for (uint32_t i = 0; i < capacity; i++) {
        t->free[i] = capacity - 1 - i;
        t->slots[i].gen = 1;
    }
    t->nfree = capacity;
    return CAP_OK;
}

cap_slot_t *cap_slot_of(const cap_table_t *t, const cap_ref_t *c, int *err) {
    if (c->table != t->id) {
        *err = CAP_E_FOREIGN;
        return NULL;
    }
    if (c->slot >= t->capacity || !t->slots[c->slot].live || t->slots[c->slot].gen != c->gen) {
        *err = CAP_E_REVOKED;
        return NULL;
    }
    return &t->slots[c->slot];
}

int cap_lookup(const cap_table_t *t, const cap_ref_t *c, const cap_slot_t **out) {
    int err = CAP_OK;
    *out = cap_slot_of(t, c, &err);
    return err;
}

static int scope_valid(const cap_scope_t *s) {
    if ((s->rights & ~(uint32_t)CAP_ALL_RIGHTS) != 0 || s->rate != s->rate) {
        return 0;
    }
    if (s->has_region && (s->w == 0 || s->h == 0)) {
        return 0;
    }
    if (s->has_keys && s->nkeys > CAP_MAX_KEYS) {
        return 0;
    }
    if (!s->has_keys && s->nkeys != 0) {
        return 0;
    }
    for (uint32_t i = 0; i < s->nkeys; i++) {
        if (s->keylen[i] > CAP_KEY_MAX) {
            return 0;
        }
    }
    if (s->has_io && s->io_lo > s->io_hi) {
        return 0;
    }
    if (s->has_mem && s->mem_lo > s->mem_hi) {
        return 0;
    }
    return 1;
}

static uint32_t take_slot(cap_table_t *t, uint32_t owner, const cap_scope_t *s) {
    uint32_t i = t->free[--t->nfree];
    cap_slot_t *c = &t->slots[i];
    uint32_t gen = c->gen;
    memset(c, 0, sizeof *c);
    c->gen = gen;
    c->live = 1;
    c->owner = owner;
    c->parent = c->parent_gen = CAP_NONE;
    c->first_child = c->next_sibling = c->prev_sibling = CAP_NONE;
    c->s = *s;
    if (!c->s.has_keys) {
        c->s.nkeys = 0;
    }
    if (s->expires != 0 && (t->next_expiry == 0 || s->expires < t->next_expiry)) {
        t->next_expiry = s->expires;
    }
    t->live++;
    return i;
}

int cap_grant(cap_table_t *t, uint32_t owner, const cap_scope_t *s, uint32_t by, cap_ref_t *out) {
    if (t == NULL || s == NULL || out == NULL || !scope_valid(s)) {
        return CAP_E_ARG;
    }
    if (!cap_audit_room(t, 1)) {
        return CAP_E_AUDIT_FULL;
    }
    int err = CAP_OK;
    if (by != 0 && ((s->rights & (CAP_IO | CAP_MEM)) || s->has_io || s->has_mem)) {
        err = CAP_E_AUTHORITY;
    } else if (t->nfree == 0) {
        err = CAP_E_TABLE_FULL;
    }
    if (err != CAP_OK) {
        cap_audit_refused(t, err, by, owner, NULL, s->rights, s->flavours, 0.0);
        return err;
    }
    uint32_t i = take_slot(t, owner, s);
    cap_rec_t r;
    cap_rec_of_slot(t, i, CAP_REC_GRANT, by, &r);
    cap_audit_append(t, &r);
    out->table = t->id;
    out->slot = i;
    out->gen = t->slots[i].gen;
    return CAP_OK;
}

static int prefix_of(const uint8_t *p, uint8_t plen, const uint8_t *k, uint8_t klen) {
    return plen <= klen && memcmp(p, k, plen) == 0;
}

int cap_scope_narrows(const cap_scope_t *p, const cap_scope_t *c) {
    if ((c->rights & ~p->rights) != 0) {
        return CAP_E_W_RIGHTS;
    }
    if ((c->flavours & ~p->flavours) != 0) {
        return CAP_E_W_FLAVOURS;
    }
    if (p->has_region && (!c->has_region || c->x0 < p->x0 || c->y0 < p->y0 ||
                          (uint64_t)c->x0 + c->w > (uint64_t)p->x0 + p->w ||
                          (uint64_t)c->y0 + c->h > (uint64_t)p->y0 + p->h)) {
        return CAP_E_W_REGION;
    }
    if (p->has_keys) {
        if (!c->has_keys) {
            return CAP_E_W_KEYS;
        }
        for (uint32_t i = 0; i < c->nkeys; i++) {
            int ok = 0;
            for (uint32_t j = 0; j < p->nkeys && !ok; j++) {
                ok = prefix_of(p->keys[j], p->keylen[j], c->keys[i], c->keylen[i]);
            }
            if (!ok) {
                return CAP_E_W_KEYS;
            }
        }
    }
    if (p->rate >= 0 && !(c->rate >= 0 && c->rate <= p->rate)) {
        return CAP_E_W_RATE;
    }
    if (p->expires != 0 && (c->expires == 0 || c->expires > p->expires)) {
        return CAP_E_W_EXPIRES;
    }
    if (c->has_io && (!p->has_io || c->io_lo < p->io_lo || c->io_hi > p->io_hi)) {
        return CAP_E_W_IO;
    }
    if (c->has_mem && (!p->has_mem || c->mem_lo < p->mem_lo || c->mem_hi > p->mem_hi)) {
        return CAP_E_W_MEM;
    }
    return CAP_OK;
}

int cap_derive(cap_table_t *t, const cap_ref_t *parent, uint32_t owner, const cap_scope_t *s,
               uint32_t by, cap_ref_t *out) {
    if (t == NULL || parent == NULL || s == NULL || out == NULL || !scope_valid(s)) {
        return CAP_E_ARG;
    }
    if (!cap_audit_room(t, 1)) {
        return CAP_E_AUDIT_FULL;
    }
    int err = CAP_OK;
    cap_slot_t *p = cap_slot_of(t, parent, &err);
    if (p != NULL) {
        if (by != 0 && by != p->owner) {
            err = CAP_E_OWNER;
        } else if (cap_expired(p, t->now)) {
            err = CAP_E_EXPIRED;
        } else if ((err = cap_scope_narrows(&p->s, s)) == CAP_OK && t->nfree == 0) {
            err = CAP_E_TABLE_FULL;
        }
    }
    if (err != CAP_OK) {
        cap_audit_refused(t, err, by, owner, parent, s->rights, s->flavours, 0.0);
        return err;
    }
    uint32_t pi = parent->slot;
    uint32_t i = take_slot(t, owner, s);
    cap_slot_t *c = &t->slots[i];
    p = &t->slots[pi];
    c->parent = pi;
    c->parent_gen = p->gen;
    c->next_sibling = p->first_child;
    if (p->first_child != CAP_NONE) {
        t->slots[p->first_child].prev_sibling = i;
    }
    p->first_child = i;
    cap_rec_t r;
    cap_rec_of_slot(t, i, CAP_REC_DERIVE, by, &r);
    cap_audit_append(t, &r);
    out->table = t->id;
    out->slot = i;
    out->gen = c->gen;
    return CAP_OK;
}
