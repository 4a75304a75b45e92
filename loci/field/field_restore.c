// SPDX-License-Identifier: MIT
// restore(): load a validated snapshot into a field, all or nothing; and replay():
// restore a snapshot, then re-apply another field's journal since that snapshot.
#include <string.h>

#include "field_snap.h"

// An empty field takes the snapshot's flavours (if the arena can hold them); a field
// with flavours must have exactly the snapshot's layout.
static int adopt_layout(field_t *f, const snap_t *s) {
    if (f->nflavours) {
        return snap_layout_matches(f, s) ? FIELD_OK : FIELD_ERR_LAYOUT;
    }
    size_t used = f->arena_used;
    for (uint32_t i = 0; i < s->info.nflavours; i++) {
        const snap_flavour_t *sf = &s->fl[i];
        int err = sf->kind == FIELD_GRID ? field_add_grid(f, sf->name, sf->w, sf->h, &sf->p, NULL)
                                         : field_add_keyed(f, sf->name, sf->w, &sf->p, NULL);
        if (err) {
            f->nflavours = 0;
            f->arena_used = used;
            return err;
        }
    }
    return FIELD_OK;
}

static void load_grid(field_flavour_t *fl, const snap_flavour_t *sf) {
    size_t n = (size_t)fl->w * fl->h;
    for (size_t i = 0; i < n; i++) {
        fl->cells[i] = get_f32(sf->values + 4 * i);
    }
    memset(fl->pending, 0, n * sizeof(float));
    memset(fl->last, 0, n * sizeof(uint32_t));
    fl->deposited = 0.0;
    for (uint32_t i = 0; i < sf->npending; i++) {
        float v = get_f32(sf->pending + 8 * i + 4);
        fl->pending[get_u32(sf->pending + 8 * i)] = v;
        fl->deposited += (double)v;
    }
    for (uint32_t i = 0; i < sf->nprov; i++) {
        fl->last[get_u32(sf->prov + 8 * i)] = get_u32(sf->prov + 8 * i + 4);
    }
}

static void load_keyed(field_flavour_t *fl, const snap_flavour_t *sf) {
    fl->count = sf->count;
    fl->deposited = 0.0;
    for (uint32_t i = 0; i < sf->count; i++) {
        const uint8_t *b = sf->values + (size_t)FIELD_SNAP_ENTRY * i;
        field_entry_t *e = &fl->entries[i];
        memset(e, 0, sizeof *e);
        e->len = b[0];
        memcpy(e->key, b + 1, FIELD_KEY_MAX);
        e->value = get_f32(b + 16);
        e->pending = get_f32(b + 20);
        fl->deposited += (double)e->pending;
    }
    for (uint32_t i = 0; i < sf->nprov; i++) {
        fl->entries[get_u32(sf->prov + 8 * i)].last = get_u32(sf->prov + 8 * i + 4);
    }
}

// The restored field's deposited-since-tick is the sum of its pending amounts, so the
// mass invariant holds for the first tick after a restore too.
static void load(field_t *f, const snap_t *s) {
    for (uint32_t i = 0; i < f->nflavours; i++) {
        field_flavour_t *fl = &f->fl[i];
        if (fl->kind == FIELD_GRID) {
            load_grid(fl, &s->fl[i]);
        } else {
            load_keyed(fl, &s->fl[i]);
        }
        fl->clipped = 0.0;
        memset(&fl->stats, 0, sizeof fl->stats);
    }
    f->tick = s->info.tick;
    field_record_t r;
    memset(&r, 0, sizeof r);
    r.kind = FIELD_REC_RESTORE;
    r.tick = f->tick;
    field_journal_append(f, &r);
    field_watch_check(f, 0);
}

int field_restore(field_t *f, const void *buf, size_t len) {
    if (!f) {
        return FIELD_ERR_ARG;
    }
    snap_t s;
    int err = snap_open(buf, len, &s);
    if (err) {
        return err;
    }
    if ((err = adopt_layout(f, &s))) {
        return err;
    }
    load(f, &s);
    return FIELD_OK;
}

// Checked before dst is touched: the snapshot fits src's layout, src still holds every
// record since the snapshot, and none of them is a restore (which replay cannot redo).
int field_replay(field_t *dst, const field_t *src, const void *snap, size_t len) {
    if (!dst || !src || dst == src) {
        return FIELD_ERR_ARG;
    }
    snap_t s;
    int err = snap_open(snap, len, &s);
    if (err) {
        return err;
    }
    if (!snap_layout_matches(src, &s)) {
        return FIELD_ERR_LAYOUT;
    }
    uint64_t from = s.info.journal_seq;
    if (from > src->journal_next) {
        return FIELD_ERR_RANGE;
    }
    if (from < field_journal_oldest(src)) {
        return FIELD_ERR_JOURNAL_LOST;
    }
    field_record_t r;
    for (uint64_t q = from; q < src->journal_next; q++) {
        field_journal_get(src, q, &r);
        if (r.kind == FIELD_REC_RESTORE) {
            return FIELD_ERR_REPLAY;
        }
    }
    if ((err = adopt_layout(dst, &s))) {
        return err;
    }
    load(dst, &s);
    for (uint64_t q = from; q < src->journal_next; q++) {
        field_journal_get(src, q, &r);
        if (r.kind == FIELD_REC_DEPOSIT) {
            if (dst->fl[r.flavour].kind == FIELD_GRID) {
                field_deposit_cell(dst, r.flavour, r.where, r.amount, r.depositor);
            } else {
                field_deposit_key(dst, r.flavour, r.key, r.keylen, r.amount, r.depositor);
            }
        } else if (r.kind == FIELD_REC_TICK) {
            field_tick(dst);
        }
    }
    return FIELD_OK;
}
