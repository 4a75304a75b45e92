// SPDX-License-Identifier: MIT
// Provenance: the bounded journal ring (sequence numbers, counted loss on wrap) and the
// bounded per-(depositor, flavour) totals table (counted overflow when full).
#include <string.h>

#include "field_internal.h"

void field_journal_append(field_t *f, const field_record_t *rec) {
    if (f->journal_next >= f->journal_cap) {
        f->journal_lost++;
    }
    field_record_t *slot = &f->journal[f->journal_next % f->journal_cap];
    *slot = *rec;
    slot->seq = f->journal_next++;
}

uint64_t field_journal_oldest(const field_t *f) {
    return f->journal_next > f->journal_cap ? f->journal_next - f->journal_cap : 0;
}

int field_journal_get(const field_t *f, uint64_t seq, field_record_t *out) {
    if (!f || !out) {
        return FIELD_ERR_ARG;
    }
    if (seq >= f->journal_next) {
        return FIELD_ERR_RANGE;
    }
    if (seq < field_journal_oldest(f)) {
        return FIELD_ERR_JOURNAL_LOST;
    }
    *out = f->journal[seq % f->journal_cap];
    return FIELD_OK;
}

static int dep_cmp(const field_depositor_t *d, uint32_t id, uint32_t flavour) {
    if (d->id != id) {
        return d->id < id ? -1 : 1;
    }
    return d->flavour < flavour ? -1 : d->flavour > flavour;
}

static int dep_find(const field_t *f, uint32_t id, uint32_t flavour, uint32_t *pos) {
    uint32_t lo = 0, hi = f->deps_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = dep_cmp(&f->deps[mid], id, flavour);
        if (c == 0) {
            *pos = mid;
            return 1;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *pos = lo;
    return 0;
}

void field_depositor_add(field_t *f, uint32_t id, uint32_t flavour, float amount) {
    uint32_t pos;
    field_depositor_t *d = &f->deps_overflow;
    if (dep_find(f, id, flavour, &pos)) {
        d = &f->deps[pos];
    } else if (f->deps_count < f->deps_cap) {
        memmove(&f->deps[pos + 1], &f->deps[pos],
                (size_t)(f->deps_count - pos) * sizeof(field_depositor_t));
        d = &f->deps[pos];
        memset(d, 0, sizeof *d);
        d->id = id;
        d->flavour = (uint16_t)flavour;
        f->deps_count++;
    }
    d->count++;
    d->total += (double)amount;
}

// id 0 asks for the overflow bucket: everything the table had no room for.
int field_depositor_total(const field_t *f, uint32_t id, uint32_t flavour, double *total,
                          uint64_t *count) {
    if (!f || !total || !count) {
        return FIELD_ERR_ARG;
    }
    const field_depositor_t *d = &f->deps_overflow;
    uint32_t pos;
    if (id != 0) {
        if (flavour >= f->nflavours) {
            return FIELD_ERR_FLAVOUR;
        }
        if (!dep_find(f, id, flavour, &pos)) {
            *total = 0.0;
            *count = 0;
            return FIELD_OK;
        }
        d = &f->deps[pos];
    }
    *total = d->total;
    *count = d->count;
    return FIELD_OK;
}
