// SPDX-License-Identifier: MIT
// Taking authority away: revoke (a capability and everything derived from it), retire
// (all an owner holds, with descendants) and expire (all past their expiry tick). Each
// removed capability gets one audit record; none is removed unless all records fit.
#include "cap_internal.h"

static uint32_t subtree_size(const cap_table_t *t, uint32_t root) {
    // Pre-order walk over the child/sibling links; no stack needed.
    uint32_t n = 0, i = root;
    for (;;) {
        n++;
        if (t->slots[i].first_child != CAP_NONE) {
            i = t->slots[i].first_child;
            continue;
        }
        while (i != root && t->slots[i].next_sibling == CAP_NONE) {
            i = t->slots[i].parent;
        }
        if (i == root) {
            return n;
        }
        i = t->slots[i].next_sibling;
    }
}

static void free_slot(cap_table_t *t, uint32_t i, uint8_t kind, uint32_t actor) {
    cap_slot_t *c = &t->slots[i];
    cap_rec_t r;
    cap_rec_of_slot(t, i, kind, actor, &r);
    cap_audit_append(t, &r);
    if (c->prev_sibling != CAP_NONE) {
        t->slots[c->prev_sibling].next_sibling = c->next_sibling;
    } else if (c->parent != CAP_NONE) {
        t->slots[c->parent].first_child = c->next_sibling;
    }
    if (c->next_sibling != CAP_NONE) {
        t->slots[c->next_sibling].prev_sibling = c->prev_sibling;
    }
    c->live = 0;
    t->live--;
    // A slot whose generation would wrap is never handed out again, so no old handle
    // can ever match it.
    if (++c->gen != 0) {
        t->free[t->nfree++] = i;
    }
}

// Removes root's subtree, leaves first (post-order), so a record never names a parent
// that is already gone. Each node is entered once on the way down.
static uint32_t remove_subtree(cap_table_t *t, uint32_t root, uint8_t kind, uint32_t actor) {
    uint32_t n = 0, i = root;
    for (;;) {
        while (t->slots[i].first_child != CAP_NONE) {
            i = t->slots[i].first_child;
        }
        uint32_t up = t->slots[i].parent;
        free_slot(t, i, kind, actor);
        n++;
        if (i == root) {
            return n;
        }
        i = up;
    }
}

int cap_revoke(cap_table_t *t, const cap_ref_t *c, uint32_t by, uint32_t *count) {
    if (t == NULL || c == NULL || count == NULL) {
        return CAP_E_ARG;
    }
    *count = 0;
    int err = CAP_OK;
    cap_slot_t *s = cap_slot_of(t, c, &err);
    if (err == CAP_E_REVOKED) {
        return CAP_OK;  // already gone: nothing to do
    }
    if (s == NULL) {
        return err;
    }
    if (!cap_audit_room(t, subtree_size(t, c->slot))) {
        return CAP_E_AUDIT_FULL;
    }
    *count = remove_subtree(t, c->slot, CAP_REC_REVOKE, by);
    return CAP_OK;
}

// The roots of what an owner loses: its capabilities whose parent it does not also hold
// (those go with their parent's subtree).
static int owner_root(const cap_table_t *t, uint32_t i, uint32_t owner) {
    const cap_slot_t *c = &t->slots[i];
    if (!c->live || c->owner != owner) {
        return 0;
    }
    for (uint32_t p = c->parent; p != CAP_NONE; p = t->slots[p].parent) {
        if (t->slots[p].owner == owner) {
            return 0;
        }
    }
    return 1;
}

int cap_retire(cap_table_t *t, uint32_t owner, uint32_t by, uint32_t *count) {
    if (t == NULL || count == NULL) {
        return CAP_E_ARG;
    }
    *count = 0;
    uint32_t need = 0;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (owner_root(t, i, owner)) {
            need += subtree_size(t, i);
        }
    }
    if (!cap_audit_room(t, need)) {
        return CAP_E_AUDIT_FULL;
    }
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (owner_root(t, i, owner)) {
            *count += remove_subtree(t, i, CAP_REC_RETIRE, by);
        }
    }
    return CAP_OK;
}

// Derivation keeps a child's expiry at or before its parent's, so an expired capability's
// whole subtree has expired too; the roots are the expired ones with a live parent that
// has not.
static int expired_root(const cap_table_t *t, uint32_t i, uint64_t now) {
    const cap_slot_t *c = &t->slots[i];
    return c->live && cap_expired(c, now) &&
           (c->parent == CAP_NONE || !cap_expired(&t->slots[c->parent], now));
}

int cap_expire(cap_table_t *t, uint64_t now, uint32_t *count) {
    if (t == NULL || count == NULL) {
        return CAP_E_ARG;
    }
    *count = 0;
    uint64_t saved = t->now;
    t->now = now;
    // The scheduler calls this every round: skip the scan while nothing can have expired.
    if (t->next_expiry == 0 || now < t->next_expiry) {
        return CAP_OK;
    }
    uint32_t need = 0;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (expired_root(t, i, now)) {
            need += subtree_size(t, i);
        }
    }
    if (!cap_audit_room(t, need)) {
        t->now = saved;
        return CAP_E_AUDIT_FULL;
    }
    uint64_t next = 0;
    for (uint32_t i = 0; i < t->capacity; i++) {
        if (expired_root(t, i, now)) {
            *count += remove_subtree(t, i, CAP_REC_EXPIRE, 0);
        }
        const cap_slot_t *c = &t->slots[i];
        if (c->live && c->s.expires != 0 && (next == 0 || c->s.expires < next)) {
            next = c->s.expires;
        }
    }
    t->next_expiry = next;
    return CAP_OK;
}
