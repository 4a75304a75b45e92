// SPDX-License-Identifier: MIT
// tick(): for every flavour in index order, commit pending deposits, clip at the cap,
// evaporate, diffuse (grids, 4-neighbour, reflecting borders: field_grid_tick.c) and
// apply the min rule; then check watchpoints and journal the tick. Also the
// mass-invariant check.
#include <string.h>

#include "field_internal.h"

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
            field_tick_grid(fl);
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
