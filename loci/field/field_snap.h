// SPDX-License-Identifier: MIT
// Private: a validated, parsed view of a snapshot, shared by restore, diff and replay.
#ifndef LOCIOS_LOCI_FIELD_FIELD_SNAP_H
#define LOCIOS_LOCI_FIELD_FIELD_SNAP_H

#include "field_internal.h"
#include "sha256.h"

typedef struct {
    uint8_t kind, name_len;
    char name[FIELD_NAME_MAX + 1];
    uint32_t w, h;
    field_params_t p;
    const uint8_t *values;   // grid: W*H f32; keyed: `count` entries of FIELD_SNAP_ENTRY
    uint32_t count;          // keyed entries
    const uint8_t *pending;  // grid: npending (u32 index, f32 value)
    uint32_t npending;
    const uint8_t *prov;  // nprov (u32 index, u32 depositor)
    uint32_t nprov;
} snap_flavour_t;

typedef struct {
    field_snap_info_t info;
    snap_flavour_t fl[FIELD_MAX_FLAVOURS];
} snap_t;

int snap_open(const uint8_t *buf, size_t len, snap_t *s);
// Do the snapshot's flavours have the same kind, name, size and (bitwise) parameters?
int snap_layout_matches(const field_t *f, const snap_t *s);
void snap_digest_prefix(uint8_t out[12], uint64_t tick, uint32_t nflavours);
void snap_put_desc(uint8_t out[FIELD_SNAP_DESC], const field_flavour_t *fl);

#endif
