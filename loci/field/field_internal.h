// SPDX-License-Identifier: MIT
// Private helpers shared by the field's C files; not part of the public API.
#ifndef LOCIOS_LOCI_FIELD_FIELD_INTERNAL_H
#define LOCIOS_LOCI_FIELD_FIELD_INTERNAL_H

#include "field.h"

// Byte order of the snapshot format is little-endian whatever the host.
static inline void put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}
static inline void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}
static inline uint16_t get_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get_u64(const uint8_t *p) {
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}
uint32_t field_f32_bits(float v);
float field_bits_f32(uint32_t b);
static inline void put_f32(uint8_t *p, float v) {
    put_u32(p, field_f32_bits(v));
}
static inline float get_f32(const uint8_t *p) {
    return field_bits_f32(get_u32(p));
}

static inline int field_finite(float v) {
    return v == v && v - v == 0.0f;
}

// field_core.c
field_flavour_t *field_flavour(field_t *f, uint32_t index);
const field_flavour_t *field_flavour_c(const field_t *f, uint32_t index);
int field_params_check(uint8_t kind, const field_params_t *p);
void field_derive(field_flavour_t *fl);
void *field_carve(field_t *f, size_t bytes);

// field_keyed.c: the sorted table of a keyed flavour
int field_key_check(const uint8_t *key, size_t keylen);
int field_key_cmp(const uint8_t *ka, uint8_t la, const uint8_t *kb, uint8_t lb);
// Position of the key if present (returns 1), else where it would be inserted (returns 0).
int field_keyed_find(const field_flavour_t *fl, const uint8_t *key, uint8_t keylen, uint32_t *pos);
void field_keyed_insert(field_flavour_t *fl, uint32_t pos, const uint8_t *key, uint8_t keylen);

// field_grid_tick.c: one grid flavour's part of tick(). Every float operation in it is
// one IEEE single-precision operation, in the order README.md gives; the build must not
// contract a*b+c into an FMA (-ffp-contract=off), so that the guest, the host and
// tests/host/field_model.py produce the same bits.
void field_tick_grid(field_flavour_t *fl);

// field_journal.c
void field_journal_append(field_t *f, const field_record_t *rec);
void field_depositor_add(field_t *f, uint32_t id, uint32_t flavour, float amount);

// field_watch.c
void field_watch_check(field_t *f, int record_events);

// field_crc32.c
uint32_t field_crc32(uint32_t crc, const uint8_t *p, size_t n);

#endif
