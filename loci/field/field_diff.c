// SPDX-License-Identifier: MIT
// diff(a, b): the cells or keys whose committed value differs between two snapshots of
// the same layout, in flavour order, then cell index or key order.
#include <string.h>

#include "field_snap.h"

typedef struct {
    field_diff_t *out;
    uint32_t cap, total;
} diff_sink_t;

static void put(diff_sink_t *d, uint32_t flavour, uint32_t index, const uint8_t *key,
                uint8_t keylen, float a, float b) {
    if (d->total < d->cap) {
        field_diff_t *o = &d->out[d->total];
        memset(o, 0, sizeof *o);
        o->flavour = flavour;
        o->index = index;
        o->keylen = keylen;
        if (keylen) {
            memcpy(o->key, key, keylen);
        }
        o->a = a;
        o->b = b;
    }
    d->total++;
}

static void diff_grid(diff_sink_t *d, uint32_t i, const snap_flavour_t *a,
                      const snap_flavour_t *b) {
    for (uint32_t c = 0; c < a->w * a->h; c++) {
        float va = get_f32(a->values + 4 * c), vb = get_f32(b->values + 4 * c);
        if (va != vb) {
            put(d, i, c, NULL, 0, va, vb);
        }
    }
}

// Merge of two sorted key lists; a key missing on one side reads 0 there, and `index`
// is its ordinal in whichever snapshot holds it (the first, if both do).
static void diff_keyed(diff_sink_t *d, uint32_t i, const snap_flavour_t *a,
                       const snap_flavour_t *b) {
    uint32_t ia = 0, ib = 0;
    while (ia < a->count || ib < b->count) {
        const uint8_t *ea = ia < a->count ? a->values + (size_t)FIELD_SNAP_ENTRY * ia : NULL;
        const uint8_t *eb = ib < b->count ? b->values + (size_t)FIELD_SNAP_ENTRY * ib : NULL;
        int c = !ea ? 1 : !eb ? -1 : field_key_cmp(ea + 1, ea[0], eb + 1, eb[0]);
        if (c < 0) {
            if (get_f32(ea + 16) != 0.0f) {
                put(d, i, ia, ea + 1, ea[0], get_f32(ea + 16), 0.0f);
            }
            ia++;
        } else if (c > 0) {
            if (get_f32(eb + 16) != 0.0f) {
                put(d, i, ib, eb + 1, eb[0], 0.0f, get_f32(eb + 16));
            }
            ib++;
        } else {
            float va = get_f32(ea + 16), vb = get_f32(eb + 16);
            if (va != vb) {
                put(d, i, ia, ea + 1, ea[0], va, vb);
            }
            ia++;
            ib++;
        }
    }
}

// Writes up to `cap` differences to `out`; `total` counts all of them, so
// total > cap says the list was cut.
int field_diff(const void *a, size_t alen, const void *b, size_t blen, field_diff_t *out,
               uint32_t cap, uint32_t *total) {
    if (!total || (cap && !out)) {
        return FIELD_ERR_ARG;
    }
    snap_t sa, sb;
    int err = snap_open(a, alen, &sa);
    if (err) {
        return err;
    }
    if ((err = snap_open(b, blen, &sb))) {
        return err;
    }
    if (sa.info.nflavours != sb.info.nflavours) {
        return FIELD_ERR_LAYOUT;
    }
    for (uint32_t i = 0; i < sa.info.nflavours; i++) {
        const snap_flavour_t *x = &sa.fl[i], *y = &sb.fl[i];
        if (x->kind != y->kind || x->name_len != y->name_len ||
            memcmp(x->name, y->name, x->name_len) || x->w != y->w || x->h != y->h) {
            return FIELD_ERR_LAYOUT;
        }
    }
    diff_sink_t d = { out, cap, 0 };
    for (uint32_t i = 0; i < sa.info.nflavours; i++) {
        if (sa.fl[i].kind == FIELD_GRID) {
            diff_grid(&d, i, &sa.fl[i], &sb.fl[i]);
        } else {
            diff_keyed(&d, i, &sa.fl[i], &sb.fl[i]);
        }
    }
    *total = d.total;
    return FIELD_OK;
}
