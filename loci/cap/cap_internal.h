// SPDX-License-Identifier: MIT
// Private helpers shared by the capability table's C files; not part of the public API.
#ifndef LOCIOS_LOCI_CAP_CAP_INTERNAL_H
#define LOCIOS_LOCI_CAP_CAP_INTERNAL_H

#include "cap.h"

// Audit records are little-endian whatever the host (README.md: layout).
static inline void cap_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void cap_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}
static inline void cap_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}
static inline uint32_t cap_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t cap_get_u64(const uint8_t *p) {
    return (uint64_t)cap_get_u32(p) | (uint64_t)cap_get_u32(p + 4) << 32;
}

// cap_audit.c: room for n more records; append one (the caller checked the room).
static inline int cap_audit_room(const cap_table_t *t, uint32_t n) {
    return t->audit_cap - t->audit_len >= n;
}
void cap_audit_append(cap_table_t *t, const cap_rec_t *r);
// A record about one capability slot, filled from it (rights, flavours, owner, parent).
void cap_rec_of_slot(const cap_table_t *t, uint32_t slot, uint8_t kind, uint32_t actor,
                     cap_rec_t *r);
// A REFUSED record; slot/gen from the handle (CAP_NONE for a grant).
void cap_audit_refused(cap_table_t *t, int reason, uint32_t actor, uint32_t owner,
                       const cap_ref_t *c, uint32_t rights, uint32_t aux, double amount);

// cap_table.c: the live slot of a handle, or NULL (and the reason in *err).
cap_slot_t *cap_slot_of(const cap_table_t *t, const cap_ref_t *c, int *err);
static inline int cap_expired(const cap_slot_t *s, uint64_t now) {
    return s->s.expires != 0 && now >= s->s.expires;
}

#endif
