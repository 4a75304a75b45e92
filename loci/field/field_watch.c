// SPDX-License-Identifier: MIT
// Watchpoints: a grid region (its sum) or a key (its value) with a threshold. After each
// tick a crossing in either direction is counted and journaled as a WATCH record.
#include <string.h>

#include "field_internal.h"

static double metric(const field_t *f, const field_watch_t *w) {
    const field_flavour_t *fl = &f->fl[w->flavour];
    if (fl->kind == FIELD_KEYED) {
        uint32_t pos;
        return field_keyed_find(fl, w->key, w->keylen, &pos) ? fl->entries[pos].value : 0.0;
    }
    double sum = 0.0;
    for (uint32_t y = w->y0; y < w->y0 + w->h; y++) {
        for (uint32_t x = w->x0; x < w->x0 + w->w; x++) {
            sum += (double)fl->cells[(size_t)y * fl->w + x];
        }
    }
    return sum;
}

// A crossing is a change of side: below (metric < threshold) to at-or-above, or back.
// With record_events = 0 (after a restore) the sides are re-read silently.
void field_watch_check(field_t *f, int record_events) {
    for (uint32_t i = 0; i < f->watch_cap; i++) {
        field_watch_t *w = &f->watches[i];
        if (!w->used) {
            continue;
        }
        w->metric = metric(f, w);
        uint8_t above = w->metric >= (double)w->threshold;
        if (above != w->above && record_events) {
            w->crossings++;
            field_record_t r;
            memset(&r, 0, sizeof r);
            r.kind = FIELD_REC_WATCH;
            r.tick = f->tick;
            r.flavour = w->flavour;
            r.where = i;
            r.amount = (float)w->metric;
            r.flags = above;
            r.keylen = w->keylen;
            memcpy(r.key, w->key, FIELD_KEY_MAX);
            field_journal_append(f, &r);
        }
        w->above = above;
    }
}

static int add(field_t *f, const field_watch_t *tmpl, uint32_t *id) {
    if (!field_finite(tmpl->threshold)) {
        return FIELD_ERR_PARAM;
    }
    for (uint32_t i = 0; i < f->watch_cap; i++) {
        field_watch_t *w = &f->watches[i];
        if (w->used) {
            continue;
        }
        *w = *tmpl;
        w->used = 1;
        w->metric = metric(f, w);
        w->above = w->metric >= (double)w->threshold;
        if (id) {
            *id = i;
        }
        return FIELD_OK;
    }
    return FIELD_ERR_FULL;
}

int field_watch_region(field_t *f, uint32_t flavour, uint32_t x0, uint32_t y0, uint32_t w,
                       uint32_t h, float threshold, uint32_t *id) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_GRID) {
        return FIELD_ERR_KIND;
    }
    if (w == 0 || h == 0 || x0 >= fl->w || y0 >= fl->h || w > fl->w - x0 || h > fl->h - y0) {
        return FIELD_ERR_RANGE;
    }
    field_watch_t t;
    memset(&t, 0, sizeof t);
    t.flavour = (uint16_t)flavour;
    t.x0 = x0;
    t.y0 = y0;
    t.w = w;
    t.h = h;
    t.threshold = threshold;
    return add(f, &t, id);
}

int field_watch_key(field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                    float threshold, uint32_t *id) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_KEYED) {
        return FIELD_ERR_KIND;
    }
    int err = field_key_check(key, keylen);
    if (err) {
        return err;
    }
    field_watch_t t;
    memset(&t, 0, sizeof t);
    t.flavour = (uint16_t)flavour;
    t.keylen = (uint8_t)keylen;
    memcpy(t.key, key, keylen);
    t.threshold = threshold;
    return add(f, &t, id);
}

int field_unwatch(field_t *f, uint32_t id) {
    if (!f) {
        return FIELD_ERR_ARG;
    }
    if (id >= f->watch_cap || !f->watches[id].used) {
        return FIELD_ERR_RANGE;
    }
    memset(&f->watches[id], 0, sizeof f->watches[id]);
    return FIELD_OK;
}
