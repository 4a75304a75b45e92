// SPDX-License-Identifier: MIT
// The journal as bytes (FORMAT.md, "Journal export"): export of the ring from a sequence
// number on, its validating reader, and replay of a snapshot plus an export, so that a
// run can be re-done off-target and checked against the digest the guest recorded.
#include <string.h>

#include "field_snap.h"

static uint64_t export_first(const field_t *f, uint64_t from) {
    uint64_t oldest = field_journal_oldest(f);
    return from < oldest ? oldest : from;
}

size_t field_journal_export_size(const field_t *f, uint64_t from) {
    if (!f || from > f->journal_next) {
        return 0;
    }
    uint64_t n = f->journal_next - export_first(f, from);
    return FIELD_JRN_HEADER + (size_t)n * FIELD_JRN_RECORD + 4;
}

static void put_record(uint8_t *b, const field_record_t *r) {
    memset(b, 0, FIELD_JRN_RECORD);
    b[0] = r->kind;
    b[1] = r->flags;
    put_u16(b + 2, r->flavour);
    put_u32(b + 4, r->depositor);
    put_u64(b + 8, r->tick);
    put_u32(b + 16, r->where);
    put_f32(b + 20, r->amount);
    b[24] = r->keylen;
    memcpy(b + 25, r->key, r->keylen <= FIELD_KEY_MAX ? r->keylen : FIELD_KEY_MAX);
}

int field_journal_export(const field_t *f, uint64_t from, const uint8_t *digest, void *buf,
                         size_t cap, size_t *len) {
    if (!f || !buf || !len) {
        return FIELD_ERR_ARG;
    }
    if (from > f->journal_next) {
        return FIELD_ERR_RANGE;
    }
    size_t size = field_journal_export_size(f, from);
    if (cap < size || size > 0xffffffffu) {
        return FIELD_ERR_ARG;
    }
    uint8_t *b = buf;
    uint64_t first = export_first(f, from);
    uint32_t count = (uint32_t)(f->journal_next - first);
    memset(b, 0, FIELD_JRN_HEADER);
    memcpy(b, FIELD_JRN_MAGIC, 8);
    put_u16(b + 8, FIELD_JRN_VERSION);
    put_u16(b + 10, FIELD_JRN_HEADER);
    put_u16(b + 12, FIELD_JRN_RECORD);
    put_u64(b + 16, first);
    put_u32(b + 24, count);
    put_u32(b + 28, (uint32_t)size);
    put_u64(b + 32, first - from);
    put_u64(b + 40, f->tick);
    if (digest) {
        memcpy(b + 48, digest, FIELD_DIGEST_SIZE);
    } else {
        field_digest(f, b + 48);
    }
    field_record_t r;
    for (uint32_t i = 0; i < count; i++) {
        field_journal_get(f, first + i, &r);
        put_record(b + FIELD_JRN_HEADER + (size_t)i * FIELD_JRN_RECORD, &r);
    }
    put_u32(b + size - 4, field_crc32(0, b, size - 4));
    *len = size;
    return FIELD_OK;
}

static void get_record(const uint8_t *b, uint64_t seq, field_record_t *r) {
    memset(r, 0, sizeof *r);
    r->seq = seq;
    r->kind = b[0];
    r->flags = b[1];
    r->flavour = get_u16(b + 2);
    r->depositor = get_u32(b + 4);
    r->tick = get_u64(b + 8);
    r->where = get_u32(b + 16);
    r->amount = get_f32(b + 20);
    r->keylen = b[24];
    memcpy(r->key, b + 25, FIELD_KEY_MAX);
}

static int zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return 0;
        }
    }
    return 1;
}

// The rules of one record that hold whatever the field's layout (FORMAT.md); `prev` is
// the tick of the record before it, or -1 for the first.
static int record_ok(const uint8_t *b, int64_t prev) {
    field_record_t r;
    get_record(b, 0, &r);
    if (r.keylen > FIELD_KEY_MAX || !zero(b + 25 + r.keylen, FIELD_KEY_MAX - r.keylen)) {
        return 0;
    }
    int same = prev < 0 || r.tick == (uint64_t)prev;
    switch (r.kind) {
        case FIELD_REC_DEPOSIT:
            return same && r.flags == 0 && r.flavour < FIELD_MAX_FLAVOURS && r.depositor != 0 &&
                   field_finite(r.amount) && r.amount >= 0.0f && (r.keylen == 0 || r.where == 0);
        case FIELD_REC_WATCH:
            return same && r.flags <= 1 && r.flavour < FIELD_MAX_FLAVOURS && r.depositor == 0;
        case FIELD_REC_TICK:
            return (prev < 0 || r.tick == (uint64_t)prev + 1) && r.tick != 0 && r.flags == 0 &&
                   r.flavour == 0 && r.depositor == 0 && r.where == 0 && get_u32(b + 20) == 0 &&
                   r.keylen == 0;
        case FIELD_REC_RESTORE:
            return r.flags == 0 && r.flavour == 0 && r.depositor == 0 && r.where == 0 &&
                   get_u32(b + 20) == 0 && r.keylen == 0;
        default:
            return 0;
    }
}

int field_journal_check(const void *buf, size_t len, field_journal_info_t *info) {
    const uint8_t *b = buf;
    if (!b || !info) {
        return FIELD_ERR_ARG;
    }
    size_t m = len < 8 ? len : 8;
    if (memcmp(b, FIELD_JRN_MAGIC, m) != 0) {
        return FIELD_ERR_JRN_MAGIC;
    }
    if (len < 10) {
        return FIELD_ERR_JRN_TRUNCATED;
    }
    if (get_u16(b + 8) != FIELD_JRN_VERSION) {
        return FIELD_ERR_JRN_VERSION;
    }
    if (len < FIELD_JRN_HEADER) {
        return FIELD_ERR_JRN_TRUNCATED;
    }
    uint32_t count = get_u32(b + 24), size = get_u32(b + 28);
    if (len < size) {
        return FIELD_ERR_JRN_TRUNCATED;
    }
    if (get_u16(b + 10) != FIELD_JRN_HEADER || get_u16(b + 12) != FIELD_JRN_RECORD ||
        (uint64_t)size != FIELD_JRN_HEADER + (uint64_t)count * FIELD_JRN_RECORD + 4 || len > size) {
        return FIELD_ERR_JRN_CORRUPT;
    }
    if (get_u32(b + size - 4) != field_crc32(0, b, size - 4)) {
        return FIELD_ERR_JRN_CHECKSUM;
    }
    uint64_t first = get_u64(b + 16), lost = get_u64(b + 32), end_tick = get_u64(b + 40);
    if (get_u16(b + 14) != 0 || first + count < first || lost > first) {
        return FIELD_ERR_JRN_CORRUPT;
    }
    int64_t prev = -1;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *rb = b + FIELD_JRN_HEADER + (size_t)i * FIELD_JRN_RECORD;
        if (!record_ok(rb, prev)) {
            return FIELD_ERR_JRN_CORRUPT;
        }
        prev = (int64_t)get_u64(rb + 8);
        if (prev < 0) {
            return FIELD_ERR_JRN_CORRUPT;
        }
    }
    // Every change of the tick is journaled, so the newest record carries the tick the
    // field had when it was exported.
    if (count && (uint64_t)prev != end_tick) {
        return FIELD_ERR_JRN_CORRUPT;
    }
    info->first_seq = first;
    info->count = count;
    info->size = size;
    info->lost = lost;
    info->end_tick = end_tick;
    memcpy(info->digest, b + 48, FIELD_DIGEST_SIZE);
    return FIELD_OK;
}

int field_journal_record(const void *buf, size_t len, uint32_t i, field_record_t *out) {
    field_journal_info_t info;
    if (!out) {
        return FIELD_ERR_ARG;
    }
    int err = field_journal_check(buf, len, &info);
    if (err) {
        return err;
    }
    if (i >= info.count) {
        return FIELD_ERR_RANGE;
    }
    const uint8_t *b = buf;
    get_record(b + FIELD_JRN_HEADER + (size_t)i * FIELD_JRN_RECORD, info.first_seq + i, out);
    return FIELD_OK;
}

// Does this deposit fit the snapshot's flavours (index, kind, cell or key)?
static int fits(const snap_t *s, const field_record_t *r) {
    if (r->flavour >= s->info.nflavours) {
        return 0;
    }
    const snap_flavour_t *sf = &s->fl[r->flavour];
    if (sf->kind == FIELD_GRID) {
        return r->keylen == 0 && r->where < sf->w * sf->h;
    }
    return r->keylen != 0;
}

// Everything is checked before dst is touched: both byte strings, the snapshot's place in
// the export, the records after it (no restore, each deposit fits the layout, the ticks
// follow on from the snapshot's). Then restore, re-apply, and compare the digests.
int field_replay_journal(field_t *dst, const void *snap, size_t slen, const void *jrn,
                         size_t jlen) {
    if (!dst || !snap || !jrn) {
        return FIELD_ERR_ARG;
    }
    snap_t s;
    field_journal_info_t ji;
    int err = snap_open(snap, slen, &s);
    if (err || (err = field_journal_check(jrn, jlen, &ji))) {
        return err;
    }
    uint64_t from = s.info.journal_seq;
    if (from < ji.first_seq) {
        return FIELD_ERR_JOURNAL_LOST;
    }
    if (from > ji.first_seq + ji.count) {
        return FIELD_ERR_RANGE;
    }
    uint32_t start = (uint32_t)(from - ji.first_seq);
    uint64_t tick = s.info.tick;
    const uint8_t *b = jrn;
    field_record_t r;
    for (uint32_t i = start; i < ji.count; i++) {
        get_record(b + FIELD_JRN_HEADER + (size_t)i * FIELD_JRN_RECORD, ji.first_seq + i, &r);
        if (r.kind == FIELD_REC_RESTORE) {
            return FIELD_ERR_REPLAY;
        }
        if (r.kind == FIELD_REC_TICK) {
            tick++;
        }
        if (r.tick != tick) {
            return FIELD_ERR_REPLAY;
        }
        if (r.kind == FIELD_REC_DEPOSIT && !fits(&s, &r)) {
            return FIELD_ERR_LAYOUT;
        }
    }
    if ((err = field_restore(dst, snap, slen))) {
        return err;
    }
    for (uint32_t i = start; i < ji.count; i++) {
        get_record(b + FIELD_JRN_HEADER + (size_t)i * FIELD_JRN_RECORD, ji.first_seq + i, &r);
        if (r.kind == FIELD_REC_DEPOSIT) {
            err = dst->fl[r.flavour].kind == FIELD_GRID
                      ? field_deposit_cell(dst, r.flavour, r.where, r.amount, r.depositor)
                      : field_deposit_key(dst, r.flavour, r.key, r.keylen, r.amount, r.depositor);
        } else if (r.kind == FIELD_REC_TICK) {
            err = field_tick(dst);
            err = err == FIELD_ERR_INVARIANT ? FIELD_OK : err;
        }
        if (err) {
            return err;
        }
    }
    uint8_t d[FIELD_DIGEST_SIZE];
    field_digest(dst, d);
    return memcmp(d, ji.digest, FIELD_DIGEST_SIZE) ? FIELD_ERR_JRN_DIGEST : FIELD_OK;
}
