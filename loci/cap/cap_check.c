// SPDX-License-Identifier: MIT
// Checking one use of a capability against its scope, and the per-epoch deposit rate,
// which is charged to the capability and to every ancestor so that children cannot
// multiply their parent's rate between them.
#include <string.h>

#include "cap_internal.h"

static int in_range(uint64_t x, uint32_t len, uint64_t lo, uint64_t hi) {
    uint64_t n = len ? len : 1;
    return x >= lo && x <= hi && n - 1 <= hi - x;
}

static int key_ok(const cap_scope_t *s, const uint8_t *key, size_t keylen) {
    for (uint32_t i = 0; i < s->nkeys; i++) {
        if (s->keylen[i] <= keylen && memcmp(s->keys[i], key, s->keylen[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

// The place of a SENSE or DEPOSIT: a rectangle, a key, or (neither) the whole flavour,
// which only an unrestricted capability may see.
static int place_ok(const cap_scope_t *s, const cap_req_t *r) {
    if (r->x >= 0) {
        if (!s->has_region) {
            return CAP_OK;
        }
        uint64_t w = r->w ? r->w : 1, h = r->h ? r->h : 1;
        if (r->y < 0 || (uint64_t)r->x < s->x0 || (uint64_t)r->y < s->y0 ||
            (uint64_t)r->x + w > (uint64_t)s->x0 + s->w ||
            (uint64_t)r->y + h > (uint64_t)s->y0 + s->h) {
            return CAP_E_REGION;
        }
        return CAP_OK;
    }
    if (r->key != NULL) {
        return !s->has_keys || key_ok(s, r->key, r->keylen) ? CAP_OK : CAP_E_KEY;
    }
    if (s->has_region) {
        return CAP_E_REGION;
    }
    if (s->has_keys) {
        return CAP_E_KEY;
    }
    return CAP_OK;
}

static int judge(const cap_table_t *t, const cap_slot_t *c, uint32_t owner, const cap_req_t *r,
                 uint64_t now) {
    if (c->owner != owner) {
        return CAP_E_OWNER;
    }
    if (cap_expired(c, now)) {
        return CAP_E_EXPIRED;
    }
    if ((c->s.rights & r->op) == 0) {
        return CAP_E_OP;
    }
    if (r->op == CAP_SENSE || r->op == CAP_DEPOSIT) {
        if (r->flavour >= 32 || (c->s.flavours & (1u << r->flavour)) == 0) {
            return CAP_E_FLAVOUR;
        }
        int err = place_ok(&c->s, r);
        if (err != CAP_OK) {
            return err;
        }
    } else if (r->op == CAP_IO) {
        if (!c->s.has_io || r->x < 0 || !in_range((uint64_t)r->x, r->w, c->s.io_lo, c->s.io_hi)) {
            return CAP_E_IO;
        }
    } else if (r->op == CAP_MEM) {
        if (!c->s.has_mem || r->x < 0 ||
            !in_range((uint64_t)r->x, r->w, c->s.mem_lo, c->s.mem_hi)) {
            return CAP_E_MEM;
        }
    }
    if (r->op == CAP_DEPOSIT) {
        // NaN fails both comparisons; infinity fails the second.
        if (!(r->amount >= 0) || !(r->amount - r->amount == 0)) {
            return CAP_E_AMOUNT;
        }
        for (const cap_slot_t *a = c;; a = &t->slots[a->parent]) {
            if (a->s.rate >= 0 && a->used + r->amount > a->s.rate) {
                return CAP_E_RATE;
            }
            if (a->parent == CAP_NONE) {
                break;
            }
        }
    }
    return CAP_OK;
}

int cap_check(cap_table_t *t, const cap_ref_t *c, uint32_t owner, const cap_req_t *r) {
    if (t == NULL || c == NULL || r == NULL) {
        return CAP_E_ARG;
    }
    // One right per check: a mask of several would pass if any one were granted.
    if (r->op == 0 || (r->op & (r->op - 1)) != 0 || (r->op & ~(uint32_t)CAP_ALL_RIGHTS) != 0) {
        return CAP_E_ARG;
    }
    uint64_t now = r->now ? r->now : t->now;
    int err = CAP_OK;
    cap_slot_t *s = cap_slot_of(t, c, &err);
    if (s != NULL) {
        err = judge(t, s, owner, r, now);
    }
    if (err != CAP_OK) {
        if (!cap_audit_room(t, 1)) {
            return CAP_E_AUDIT_FULL;
        }
        uint64_t saved = t->now;
        t->now = now;
        cap_audit_refused(t, err, owner, s ? s->owner : owner, c, r->op, r->flavour, r->amount);
        t->now = saved;
        return err;
    }
    if (r->op == CAP_DEPOSIT) {
        for (cap_slot_t *a = s;; a = &t->slots[a->parent]) {
            a->used += r->amount;
            if (a->parent == CAP_NONE) {
                break;
            }
        }
    }
    return CAP_OK;
}

int cap_refuse(cap_table_t *t, uint32_t owner, uint32_t op, uint32_t flavour, uint64_t now) {
    if (t == NULL || op == 0 || (op & ~(uint32_t)CAP_ALL_RIGHTS) != 0) {
        return CAP_E_ARG;
    }
    if (!cap_audit_room(t, 1)) {
        return CAP_E_AUDIT_FULL;
    }
    uint64_t saved = t->now;
    t->now = now ? now : t->now;
    cap_audit_refused(t, CAP_E_OP, owner, owner, NULL, op, flavour, 0.0);
    t->now = saved;
    return CAP_E_OP;
}

void cap_epoch(cap_table_t *t) {
    for (uint32_t i = 0; i < t->capacity; i++) {
        t->slots[i].used = 0.0;
    }
}
