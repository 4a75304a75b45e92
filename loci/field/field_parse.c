// SPDX-License-Identifier: MIT
// Snapshot parser: checks framing (magic, version, size, CRC-32), then every flavour
// descriptor and value against the model's rules, then the content digest. Every read
// is bounds-checked first; any input gives an error code, never an out-of-bounds read.
#include <string.h>

#include "field_snap.h"

typedef struct {
    const uint8_t *p;
    size_t pos, end;
} reader_t;

static const uint8_t *take(reader_t *r, size_t n) {
    if (n > r->end - r->pos) {
        return NULL;
    }
    const uint8_t *q = r->p + r->pos;
    r->pos += n;
    return q;
}

static int take_u32(reader_t *r, uint32_t *v) {
    const uint8_t *q = take(r, 4);
    if (!q) {
        return 0;
    }
    *v = get_u32(q);
    return 1;
}

static int value_ok(float v, float cap) {
    return field_finite(v) && v >= 0.0f && v <= cap;
}

static int parse_desc(const uint8_t *d, snap_flavour_t *fl) {
    memset(fl, 0, sizeof *fl);
    fl->kind = d[0];
    fl->name_len = d[1];
    if (fl->kind != FIELD_GRID && fl->kind != FIELD_KEYED) {
        return 0;
    }
    if (fl->name_len == 0 || fl->name_len > FIELD_NAME_MAX || get_u16(d + 2) != 0) {
        return 0;
    }
    for (int i = 0; i < 16; i++) {
        if (i < fl->name_len ? d[4 + i] == 0 : d[4 + i] != 0) {
            return 0;
        }
    }
    memcpy(fl->name, d + 4, fl->name_len);
    fl->w = get_u32(d + 20);
    fl->h = get_u32(d + 24);
    fl->p.evaporation = get_f32(d + 28);
    fl->p.diffusion = get_f32(d + 32);
    fl->p.cap = get_f32(d + 36);
    fl->p.min = get_f32(d + 40);
    if (field_params_check(fl->kind, &fl->p)) {
        return 0;
    }
    if (fl->kind == FIELD_GRID) {
        return fl->w && fl->h && fl->w <= FIELD_GRID_MAX_SIDE && fl->h <= FIELD_GRID_MAX_SIDE;
    }
    return fl->w && fl->w <= FIELD_KEYED_MAX_CAP && fl->h == 0;
}

// Pairs of (index, x): indices strictly increasing and below `limit`; x checked by kind.
static int parse_pairs(reader_t *r, uint32_t limit, int is_pending, float cap, const uint8_t **out,
                       uint32_t *n) {
    if (!take_u32(r, n) || *n > limit) {
        return 0;
    }
    const uint8_t *q = take(r, (size_t)*n * 8);
    if (!q) {
        return 0;
    }
    for (uint32_t i = 0; i < *n; i++) {
        uint32_t idx = get_u32(q + 8 * i), x = get_u32(q + 8 * i + 4);
        if (idx >= limit || (i && idx <= get_u32(q + 8 * (i - 1)))) {
            return 0;
        }
        if (is_pending ? !(value_ok(field_bits_f32(x), cap) && field_bits_f32(x) > 0.0f) : x == 0) {
            return 0;
        }
    }
    *out = q;
    return 1;
}

static int parse_grid(reader_t *r, snap_flavour_t *fl) {
    uint32_t cells = fl->w * fl->h;
    if (!(fl->values = take(r, (size_t)cells * 4))) {
        return 0;
    }
    // Diffusion may leave a cell a rounding step above the cap, so only the sign and
    // finiteness of committed grid values are checked.
    for (uint32_t i = 0; i < cells; i++) {
        float v = get_f32(fl->values + 4 * i);
        if (!field_finite(v) || v < 0.0f) {
            return 0;
        }
    }
    return parse_pairs(r, cells, 1, fl->p.cap, &fl->pending, &fl->npending);
}

static int parse_keyed(reader_t *r, snap_flavour_t *fl) {
    if (!take_u32(r, &fl->count) || fl->count > fl->w) {
        return 0;
    }
    if (!(fl->values = take(r, (size_t)fl->count * FIELD_SNAP_ENTRY))) {
        return 0;
    }
    for (uint32_t i = 0; i < fl->count; i++) {
        const uint8_t *e = fl->values + (size_t)FIELD_SNAP_ENTRY * i;
        if (e[0] == 0 || e[0] > FIELD_KEY_MAX) {
            return 0;
        }
        for (int j = e[0]; j < FIELD_KEY_MAX; j++) {
            if (e[1 + j]) {
                return 0;
            }
        }
        if (!value_ok(get_f32(e + 16), fl->p.cap) || !value_ok(get_f32(e + 20), fl->p.cap)) {
            return 0;
        }
        const uint8_t *prev = e - FIELD_SNAP_ENTRY;
        if (i && field_key_cmp(prev + 1, prev[0], e + 1, e[0]) >= 0) {
            return 0;
        }
    }
    return 1;
}

int snap_open(const uint8_t *b, size_t len, snap_t *s) {
    if (!b && len) {
        return FIELD_ERR_ARG;
    }
    memset(s, 0, sizeof *s);
    size_t m = len < sizeof FIELD_SNAP_MAGIC ? len : sizeof FIELD_SNAP_MAGIC;
    if (m && memcmp(b, FIELD_SNAP_MAGIC, m) != 0) {
        return FIELD_ERR_SNAP_MAGIC;
    }
    if (len < 10) {
        return FIELD_ERR_SNAP_TRUNCATED;
    }
    s->info.version = get_u16(b + 8);
    if (s->info.version != FIELD_SNAP_VERSION) {
        return FIELD_ERR_SNAP_VERSION;
    }
    if (len < FIELD_SNAP_HEADER) {
        return FIELD_ERR_SNAP_TRUNCATED;
    }
    s->info.size = get_u32(b + 32);
    if (s->info.size > len) {
        return FIELD_ERR_SNAP_TRUNCATED;
    }
    if (get_u16(b + 10) != FIELD_SNAP_HEADER || s->info.size < FIELD_SNAP_HEADER + 4 ||
        s->info.size != len) {
        return FIELD_ERR_SNAP_CORRUPT;
    }
    size_t body_end = s->info.size - 4;
    if (field_crc32(0, b, body_end) != get_u32(b + body_end)) {
        return FIELD_ERR_SNAP_CHECKSUM;
    }
    s->info.nflavours = get_u32(b + 12);
    s->info.tick = get_u64(b + 16);
    s->info.journal_seq = get_u64(b + 24);
    memcpy(s->info.digest, b + 40, FIELD_DIGEST_SIZE);
    if (get_u32(b + 36) != 0 || s->info.nflavours > FIELD_MAX_FLAVOURS) {
        return FIELD_ERR_SNAP_CORRUPT;
    }

    CRYAL_SHA256_CTX sha;
    sha256_init(&sha);
    uint8_t prefix[12];
    snap_digest_prefix(prefix, s->info.tick, s->info.nflavours);
    sha256_update(&sha, prefix, sizeof prefix);
    reader_t r = { b, FIELD_SNAP_HEADER, body_end };
    for (uint32_t i = 0; i < s->info.nflavours; i++) {
        snap_flavour_t *fl = &s->fl[i];
        size_t start = r.pos;
        const uint8_t *d = take(&r, FIELD_SNAP_DESC);
        if (!d || !parse_desc(d, fl)) {
            return FIELD_ERR_SNAP_CORRUPT;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (s->fl[j].name_len == fl->name_len && !memcmp(s->fl[j].name, fl->name, 16)) {
                return FIELD_ERR_SNAP_CORRUPT;
            }
        }
        int ok = fl->kind == FIELD_GRID ? parse_grid(&r, fl) : parse_keyed(&r, fl);
        if (!ok) {
            return FIELD_ERR_SNAP_CORRUPT;
        }
        sha256_update(&sha, b + start, r.pos - start);
        uint32_t limit = fl->kind == FIELD_GRID ? fl->w * fl->h : fl->count;
        if (!parse_pairs(&r, limit, 0, 0.0f, &fl->prov, &fl->nprov)) {
            return FIELD_ERR_SNAP_CORRUPT;
        }
    }
    if (r.pos != body_end) {
        return FIELD_ERR_SNAP_CORRUPT;
    }
    uint8_t digest[FIELD_DIGEST_SIZE];
    sha256_final(&sha, digest);
    if (memcmp(digest, s->info.digest, FIELD_DIGEST_SIZE) != 0) {
        return FIELD_ERR_SNAP_DIGEST;
    }
    return FIELD_OK;
}

int field_snapshot_check(const void *buf, size_t len, field_snap_info_t *info) {
    snap_t s;
    int err = snap_open(buf, len, &s);
    if (!err && info) {
        *info = s.info;
    }
    return err;
}

int snap_layout_matches(const field_t *f, const snap_t *s) {
    if (f->nflavours != s->info.nflavours) {
        return 0;
    }
    for (uint32_t i = 0; i < f->nflavours; i++) {
        const field_flavour_t *a = &f->fl[i];
        const snap_flavour_t *b = &s->fl[i];
        if (a->kind != b->kind || a->name_len != b->name_len ||
            memcmp(a->name, b->name, a->name_len) || a->w != b->w || a->h != b->h ||
            memcmp(&a->p, &b->p, sizeof a->p)) {
            return 0;
        }
    }
    return 1;
}
