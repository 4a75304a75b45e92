// SPDX-License-Identifier: MIT
// tick(): for every flavour in index order, commit pending deposits, clip at the cap,
// evaporate, diffuse (grids, 4-neighbour, reflecting borders) and apply the min rule;
// then check watchpoints and journal the tick. Also the mass-invariant check.
#include <string.h>

#include "field_internal.h"

// Every float operation below is one IEEE single-precision operation, in the order
// written; the build must not contract a*b+c into an FMA (-ffp-contract=off), so that
// the guest, the host and tests/host/field_model.py produce the same bits.
static void tick_grid(field_flavour_t *fl) {
    const uint32_t w = fl->w, h = fl->h;
    const size_t n = (size_t)w * h;
    const float cap = fl->p.cap, keep = fl->keep, share = fl->share, min = fl->p.min;
    float *s = fl->cells, *d = fl->pending;
    double before = 0.0, clipped = fl->clipped, dropped = 0.0, after = 0.0;

    for (size_t i = 0; i < n; i++) {
        before += (double)s[i];
        float v = s[i] + d[i];
        if (v > cap) {
            clipped += (double)v - (double)cap;
            v = cap;
        }
        s[i] = v * keep;
    }
    // Each cell sends G/4 to each of its four neighbours; a share that would leave the
    // grid is reflected back into the cell (self_w[walls]), so diffusion keeps the mass.
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            float acc = 0.0f;
            int walls = 0;
            if (x > 0) {
                acc = acc + s[i - 1];
            } else {
                walls++;
            }
            if (x + 1 < w) {
                acc = acc + s[i + 1];
            } else {
                walls++;
            }
            if (y > 0) {
                acc = acc + s[i - w];
            } else {
                walls++;
            }
            if (y + 1 < h) {
                acc = acc + s[i + w];
            } else {
                walls++;
            }
            float kept = s[i] * fl->self_w[walls];
            float got = share * acc;
            float v = kept + got;
            if (v < min) {
                dropped += (double)v;
                v = 0.0f;
            }
            d[i] = v;
            after += (double)v;
        }
    }
    fl->cells = d;
    fl->pending = s;
    memset(s, 0, n * sizeof(float));
    fl->stats = (field_tick_stats_t){ before, fl->deposited, clipped, dropped, after };
}

// Keyed flavours do not diffuse. An entry whose value ends below min, or at 0, is
// removed: that is what keeps a keyed flavour from growing without bound.
static void tick_keyed(field_flavour_t *fl) {
    const float cap = fl->p.cap, keep = fl->keep, min = fl->p.min;
    double before = 0.0, clipped = fl->clipped, dropped = 0.0, after = 0.0;
    uint32_t out = 0;
    for (uint32_t i = 0; i < fl->count; i++) {
        field_entry_t e = fl->entries[i];
        before += (double)e.value;
        float v = e.value + e.pending;
        if (v > cap) {
            clipped += (double)v - (double)cap;
            v = cap;
        }
        v = v * keep;
        if (!(v >= min && v > 0.0f)) {
            dropped += (double)v;
            continue;
        }
        e.value = v;
        e.pending = 0.0f;
        fl->entries[out++] = e;
        after += (double)v;
    }
    fl->count = out;
    fl->stats = (field_tick_stats_t){ before, fl->deposited, clipped, dropped, after };
}

int field_check_invariant(const field_t *f, uint32_t flavour, double rel_tol) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (!(rel_tol >= 0.0)) {
        return FIELD_ERR_ARG;
    }
    const field_tick_stats_t *st = &fl->stats;
    double expected = (double)fl->keep * (st->before + st->deposited - st->clipped) - st->dropped;
    double err = st->after - expected;
    if (err < 0) {
        err = -err;
    }
    double scale = st->before + st->deposited;
    return err <= rel_tol * scale + 1e-30 ? FIELD_OK : FIELD_ERR_INVARIANT;
}

int field_tick(field_t *f) {
    if (!f) {
        return FIELD_ERR_ARG;
    }
    for (uint32_t i = 0; i < f->nflavours; i++) {
        field_flavour_t *fl = &f->fl[i];
        if (fl->kind == FIELD_GRID) {
            tick_grid(fl);
        } else {
            tick_keyed(fl);
        }
        fl->deposited = 0.0;
        fl->clipped = 0.0;
    }
    f->tick++;
    field_record_t r;
    memset(&r, 0, sizeof r);
    r.kind = FIELD_REC_TICK;
    r.tick = f->tick;
    field_journal_append(f, &r);
    field_watch_check(f, 1);
    if (f->check_invariant) {
        for (uint32_t i = 0; i < f->nflavours; i++) {
            if (field_check_invariant(f, i, f->invariant_tol)) {
                return FIELD_ERR_INVARIANT;
            }
        }
    }
    return FIELD_OK;
}
