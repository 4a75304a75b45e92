// SPDX-License-Identifier: MIT
// The audit log: fixed-layout records, each chained by SHA-256 over the previous head
// and its own bytes; verification, export with a CHECKPOINT, and the chain of an export.
#include <float.h>
#include <math.h>
#include <string.h>

#include "cap_internal.h"
#include "sha256.h"

static void rec_encode(const cap_rec_t *r, uint8_t *p) {
    memset(p, 0, CAP_REC_SIZE);
    cap_put_u64(p + 0, r->seq);
    cap_put_u64(p + 8, r->tick);
    p[16] = r->kind;
    p[17] = CAP_REC_VERSION;
    cap_put_u16(p + 18, r->reason);
    cap_put_u32(p + 20, r->actor);
    cap_put_u32(p + 24, r->owner);
    cap_put_u32(p + 28, r->slot);
    cap_put_u32(p + 32, r->gen);
    cap_put_u32(p + 36, r->parent);
    cap_put_u32(p + 40, r->parent_gen);
    cap_put_u32(p + 44, r->rights);
    cap_put_u32(p + 48, r->aux);
    uint32_t bits;
    memcpy(&bits, &r->amount, 4);
    cap_put_u32(p + 52, bits);
    memcpy(p + 56, r->data, CAP_HASH_SIZE);
}

void cap_rec_decode(const uint8_t *p, cap_rec_t *r) {
    r->seq = cap_get_u64(p + 0);
    r->tick = cap_get_u64(p + 8);
    r->kind = p[16];
    r->version = p[17];
    r->reason = (uint16_t)(p[18] | p[19] << 8);
    r->actor = cap_get_u32(p + 20);
    r->owner = cap_get_u32(p + 24);
    r->slot = cap_get_u32(p + 28);
    r->gen = cap_get_u32(p + 32);
    r->parent = cap_get_u32(p + 36);
    r->parent_gen = cap_get_u32(p + 40);
    r->rights = cap_get_u32(p + 44);
    r->aux = cap_get_u32(p + 48);
    uint32_t bits = cap_get_u32(p + 52);
    memcpy(&r->amount, &bits, 4);
    memcpy(r->data, p + 56, CAP_HASH_SIZE);
}

static void chain(uint8_t head[CAP_HASH_SIZE], const uint8_t *rec) {
    CRYAL_SHA256_CTX sha;
    sha256_init(&sha);
    sha256_update(&sha, head, CAP_HASH_SIZE);
    sha256_update(&sha, rec, CAP_REC_SIZE);
    sha256_final(&sha, head);
}

void cap_audit_append(cap_table_t *t, const cap_rec_t *r) {
    cap_rec_t full = *r;
    full.seq = t->seq++;
    uint8_t *p = t->log + (size_t)t->audit_len++ * CAP_REC_SIZE;
    rec_encode(&full, p);
    chain(t->head, p);
}

void cap_rec_of_slot(const cap_table_t *t, uint32_t slot, uint8_t kind, uint32_t actor,
                     cap_rec_t *r) {
    const cap_slot_t *s = &t->slots[slot];
    memset(r, 0, sizeof *r);
    r->tick = t->now;
    r->kind = kind;
    r->actor = actor;
    r->owner = s->owner;
    r->slot = slot;
    r->gen = s->gen;
    r->parent = s->parent;
    r->parent_gen = s->parent_gen;
    r->rights = s->s.rights;
    r->aux = s->s.flavours;
}

void cap_audit_refused(cap_table_t *t, int reason, uint32_t actor, uint32_t owner,
                       const cap_ref_t *c, uint32_t rights, uint32_t aux, double amount) {
    cap_rec_t r;
    memset(&r, 0, sizeof r);
    r.tick = t->now;
    r.kind = CAP_REC_REFUSED;
    r.reason = (uint16_t)reason;
    r.actor = actor;
    r.owner = owner;
    r.slot = c ? c->slot : CAP_NONE;
    r.gen = c ? c->gen : 0;
    r.parent = CAP_NONE;
    r.rights = rights;
    r.aux = aux;
    // Out of float range is infinity by IEEE 754; spelt out so that C's rule (undefined)
    // never applies.
    r.amount = amount > FLT_MAX ? INFINITY : amount < -FLT_MAX ? -INFINITY : (float)amount;
    cap_audit_append(t, &r);
}

int cap_audit_get(const cap_table_t *t, uint32_t index, cap_rec_t *out) {
    if (index >= t->audit_len) {
        return CAP_E_ARG;
    }
    cap_rec_decode(t->log + (size_t)index * CAP_REC_SIZE, out);
    return CAP_OK;
}

int cap_audit_chain(const uint8_t *buf, size_t n, uint8_t head[CAP_HASH_SIZE]) {
    if (buf == NULL || n == 0 || n % CAP_REC_SIZE != 0) {
        return CAP_E_ARG;
    }
    cap_rec_t r;
    cap_rec_decode(buf, &r);
    // The chain starts at zero for the first record ever, or at the head a CHECKPOINT
    // carries for everything exported before it.
    if (r.kind == CAP_REC_CHECKPOINT) {
        memcpy(head, r.data, CAP_HASH_SIZE);
    } else if (r.seq == 0) {
        memset(head, 0, CAP_HASH_SIZE);
    } else {
        return CAP_E_ARG;
    }
    uint64_t seq = r.seq;
    for (size_t off = 0; off < n; off += CAP_REC_SIZE, seq++) {
        cap_rec_decode(buf + off, &r);
        if (r.seq != seq || r.kind < CAP_REC_GRANT || r.kind > CAP_REC_CHECKPOINT ||
            r.version != CAP_REC_VERSION) {
            return CAP_E_ARG;
        }
        chain(head, buf + off);
    }
    return CAP_OK;
}

int cap_audit_verify(const cap_table_t *t) {
    uint8_t head[CAP_HASH_SIZE];
    if (t->audit_len == 0) {
        static const uint8_t zero[CAP_HASH_SIZE];
        return memcmp(t->head, zero, CAP_HASH_SIZE) == 0 && t->seq == 0;
    }
    if (cap_audit_chain(t->log, (size_t)t->audit_len * CAP_REC_SIZE, head) != CAP_OK) {
        return 0;
    }
    cap_rec_t last;
    cap_rec_decode(t->log + (size_t)(t->audit_len - 1) * CAP_REC_SIZE, &last);
    return memcmp(head, t->head, CAP_HASH_SIZE) == 0 && last.seq + 1 == t->seq;
}

int cap_audit_export(cap_table_t *t, uint8_t *buf, size_t cap, size_t *n) {
    size_t bytes = (size_t)t->audit_len * CAP_REC_SIZE;
    if (buf == NULL || cap < bytes || n == NULL) {
        return CAP_E_ARG;
    }
    memcpy(buf, t->log, bytes);
    *n = bytes;
    uint32_t exported = t->audit_len;
    t->audit_len = 0;
    cap_rec_t r;
    memset(&r, 0, sizeof r);
    r.tick = t->now;
    r.kind = CAP_REC_CHECKPOINT;
    r.slot = CAP_NONE;
    r.parent = CAP_NONE;
    r.aux = exported;
    memcpy(r.data, t->head, CAP_HASH_SIZE);
    cap_audit_append(t, &r);
    return CAP_OK;
}
