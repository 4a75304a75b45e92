// SPDX-License-Identifier: MIT
// Writing snapshots and the content digest. One emitter serves both, so the digest of a
// live field and the digest stored in its snapshot come from the same bytes.
#include <string.h>

#include "field_snap.h"

typedef struct {
    uint8_t *buf;  // NULL: hash only
    size_t pos;
    CRYAL_SHA256_CTX sha;
    int hashing;  // provenance and framing are written but not hashed
} emit_t;

static void emit(emit_t *e, const void *p, size_t n) {
    if (e->buf) {
        memcpy(e->buf + e->pos, p, n);
    }
    if (e->hashing) {
        sha256_update(&e->sha, p, n);
    }
    e->pos += n;
}

static void emit_u32(emit_t *e, uint32_t v) {
    uint8_t b[4];
    put_u32(b, v);
    emit(e, b, 4);
}

// Floats go out in chunks to keep the stack small and the byte order fixed.
static void emit_f32s(emit_t *e, const float *v, size_t n) {
    uint8_t chunk[256];
    while (n) {
        size_t m = n < sizeof chunk / 4 ? n : sizeof chunk / 4;
        for (size_t i = 0; i < m; i++) {
            put_f32(chunk + 4 * i, v[i]);
        }
        emit(e, chunk, 4 * m);
        v += m;
        n -= m;
    }
}

static void emit_pair(emit_t *e, uint32_t a, uint32_t b) {
    uint8_t p[8];
    put_u32(p, a);
    put_u32(p + 4, b);
    emit(e, p, 8);
}

void snap_digest_prefix(uint8_t out[12], uint64_t tick, uint32_t nflavours) {
    put_u64(out, tick);
    put_u32(out + 8, nflavours);
}

void snap_put_desc(uint8_t out[FIELD_SNAP_DESC], const field_flavour_t *fl) {
    memset(out, 0, FIELD_SNAP_DESC);
    out[0] = fl->kind;
    out[1] = fl->name_len;
    memcpy(out + 4, fl->name, fl->name_len);
    put_u32(out + 20, fl->w);
    put_u32(out + 24, fl->h);
    put_f32(out + 28, fl->p.evaporation);
    put_f32(out + 32, fl->p.diffusion);
    put_f32(out + 36, fl->p.cap);
    put_f32(out + 40, fl->p.min);
}

static uint32_t count_nonzero_f32(const float *v, size_t n) {
    uint32_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c += v[i] != 0.0f;
    }
    return c;
}

static uint32_t count_nonzero_u32(const uint32_t *v, size_t n) {
    uint32_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c += v[i] != 0;
    }
    return c;
}

static void emit_grid(emit_t *e, const field_flavour_t *fl) {
    size_t n = (size_t)fl->w * fl->h;
    emit_f32s(e, fl->cells, n);
    emit_u32(e, count_nonzero_f32(fl->pending, n));
    for (size_t i = 0; i < n; i++) {
        if (fl->pending[i] != 0.0f) {
            emit_pair(e, (uint32_t)i, field_f32_bits(fl->pending[i]));
        }
    }
    int hashing = e->hashing;
    e->hashing = 0;
    emit_u32(e, count_nonzero_u32(fl->last, n));
    for (size_t i = 0; i < n; i++) {
        if (fl->last[i]) {
            emit_pair(e, (uint32_t)i, fl->last[i]);
        }
    }
    e->hashing = hashing;
}

static void emit_keyed(emit_t *e, const field_flavour_t *fl) {
    emit_u32(e, fl->count);
    uint32_t nprov = 0;
    for (uint32_t i = 0; i < fl->count; i++) {
        const field_entry_t *en = &fl->entries[i];
        uint8_t b[FIELD_SNAP_ENTRY] = { 0 };
        b[0] = en->len;
        memcpy(b + 1, en->key, en->len);
        put_f32(b + 16, en->value);
        put_f32(b + 20, en->pending);
        emit(e, b, sizeof b);
        nprov += en->last != 0;
    }
    int hashing = e->hashing;
    e->hashing = 0;
    emit_u32(e, nprov);
    for (uint32_t i = 0; i < fl->count; i++) {
        if (fl->entries[i].last) {
            emit_pair(e, i, fl->entries[i].last);
        }
    }
    e->hashing = hashing;
}

// Everything after the header and before the CRC; hashed except for provenance.
static void emit_body(const field_t *f, emit_t *e) {
    uint8_t prefix[12];
    snap_digest_prefix(prefix, f->tick, f->nflavours);
    sha256_update(&e->sha, prefix, sizeof prefix);
    for (uint32_t i = 0; i < f->nflavours; i++) {
        const field_flavour_t *fl = &f->fl[i];
        uint8_t desc[FIELD_SNAP_DESC];
        snap_put_desc(desc, fl);
        emit(e, desc, sizeof desc);
        if (fl->kind == FIELD_GRID) {
            emit_grid(e, fl);
        } else {
            emit_keyed(e, fl);
        }
    }
}

size_t field_snapshot_size(const field_t *f) {
    if (!f) {
        return 0;
    }
    size_t n = FIELD_SNAP_HEADER + 4;
    for (uint32_t i = 0; i < f->nflavours; i++) {
        const field_flavour_t *fl = &f->fl[i];
        n += FIELD_SNAP_DESC + 8;
        if (fl->kind == FIELD_GRID) {
            size_t cells = (size_t)fl->w * fl->h;
            n += 4 * cells + 8 * (size_t)count_nonzero_f32(fl->pending, cells) +
                 8 * (size_t)count_nonzero_u32(fl->last, cells);
        } else {
            n += (size_t)FIELD_SNAP_ENTRY * fl->count;
            for (uint32_t j = 0; j < fl->count; j++) {
                n += fl->entries[j].last ? 8 : 0;
            }
        }
    }
    return n;
}

int field_digest(const field_t *f, uint8_t out[FIELD_DIGEST_SIZE]) {
    if (!f || !out) {
        return FIELD_ERR_ARG;
    }
    emit_t e = { .buf = NULL, .hashing = 1 };
    sha256_init(&e.sha);
    emit_body(f, &e);
    sha256_final(&e.sha, out);
    return FIELD_OK;
}

int field_snapshot(const field_t *f, void *buf, size_t cap, size_t *len) {
    if (!f || !buf || !len) {
        return FIELD_ERR_ARG;
    }
    size_t size = field_snapshot_size(f);
    if (cap < size) {
        return FIELD_ERR_NOMEM;
    }
    if (size > UINT32_MAX) {
        return FIELD_ERR_RANGE;
    }
    uint8_t *b = buf;
    emit_t e = { .buf = b, .pos = FIELD_SNAP_HEADER, .hashing = 1 };
    sha256_init(&e.sha);
    emit_body(f, &e);
    memset(b, 0, FIELD_SNAP_HEADER);
    memcpy(b, FIELD_SNAP_MAGIC, sizeof FIELD_SNAP_MAGIC);
    put_u16(b + 8, FIELD_SNAP_VERSION);
    put_u16(b + 10, FIELD_SNAP_HEADER);
    put_u32(b + 12, f->nflavours);
    put_u64(b + 16, f->tick);
    put_u64(b + 24, f->journal_next);
    put_u32(b + 32, (uint32_t)size);
    sha256_final(&e.sha, b + 40);
    put_u32(b + e.pos, field_crc32(0, b, e.pos));
    *len = size;
    return FIELD_OK;
}
