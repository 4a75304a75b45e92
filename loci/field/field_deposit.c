// SPDX-License-Identifier: MIT
// Deposits and point reads. A deposit is validated, added to the cell's (or key's)
// pending amount, attributed and journaled; it becomes visible at the next tick.
#include <string.h>

#include "field_internal.h"

static int amount_check(float amount) {
    return field_finite(amount) && amount >= 0.0f ? FIELD_OK : FIELD_ERR_AMOUNT;
}

// Pending amounts are held at or below the cap: the tick would clip them there anyway,
// and it keeps every later sum finite. What the clamp removes is counted as clipped.
static void add_pending(field_flavour_t *fl, float *pending, float amount) {
    float sum = *pending + amount;
    if (sum > fl->p.cap) {
        fl->clipped += (double)sum - (double)fl->p.cap;
        sum = fl->p.cap;
    }
    *pending = sum;
    fl->deposited += (double)amount;
}

static void record(field_t *f, uint32_t flavour, uint32_t where, const uint8_t *key, uint8_t keylen,
                   float amount, uint32_t depositor) {
    field_record_t r;
    memset(&r, 0, sizeof r);
    r.kind = FIELD_REC_DEPOSIT;
    r.tick = f->tick;
    r.flavour = (uint16_t)flavour;
    r.where = where;
    r.keylen = keylen;
    if (keylen) {
        memcpy(r.key, key, keylen);
    }
    r.amount = amount;
    r.depositor = depositor;
    field_journal_append(f, &r);
    field_depositor_add(f, depositor, flavour, amount);
}

int field_deposit_cell(field_t *f, uint32_t flavour, uint32_t cell, float amount,
                       uint32_t depositor) {
    field_flavour_t *fl = field_flavour(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_GRID) {
        return FIELD_ERR_KIND;
    }
    if (cell >= fl->w * fl->h) {
        return FIELD_ERR_RANGE;
    }
    if (amount_check(amount)) {
        return FIELD_ERR_AMOUNT;
    }
    if (depositor == 0) {
        return FIELD_ERR_DEPOSITOR;
    }
    add_pending(fl, &fl->pending[cell], amount);
    fl->last[cell] = depositor;
    record(f, flavour, cell, NULL, 0, amount, depositor);
    return FIELD_OK;
}

int field_deposit_xy(field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float amount,
                     uint32_t depositor) {
    const field_flavour_t *fl = field_flavour(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_GRID) {
        return FIELD_ERR_KIND;
    }
    if (x >= fl->w || y >= fl->h) {
        return FIELD_ERR_RANGE;
    }
    return field_deposit_cell(f, flavour, y * fl->w + x, amount, depositor);
}

int field_deposit_key(field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen, float amount,
                      uint32_t depositor) {
    field_flavour_t *fl = field_flavour(f, flavour);
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
    if (amount_check(amount)) {
        return FIELD_ERR_AMOUNT;
    }
    if (depositor == 0) {
        return FIELD_ERR_DEPOSITOR;
    }
    uint32_t pos;
    if (!field_keyed_find(fl, key, (uint8_t)keylen, &pos)) {
        if (fl->count >= fl->w) {
            return FIELD_ERR_FULL;
        }
        field_keyed_insert(fl, pos, key, (uint8_t)keylen);
    }
    field_entry_t *e = &fl->entries[pos];
    add_pending(fl, &e->pending, amount);
    e->last = depositor;
    record(f, flavour, 0, key, (uint8_t)keylen, amount, depositor);
    return FIELD_OK;
}

static int grid_cell(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y,
                     const field_flavour_t **out, uint32_t *cell) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_GRID) {
        return FIELD_ERR_KIND;
    }
    if (x >= fl->w || y >= fl->h) {
        return FIELD_ERR_RANGE;
    }
    *out = fl;
    *cell = y * fl->w + x;
    return FIELD_OK;
}

static int keyed_entry(const field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                       const field_entry_t **out) {
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
    uint32_t pos;
    *out = field_keyed_find(fl, key, (uint8_t)keylen, &pos) ? &fl->entries[pos] : NULL;
    return FIELD_OK;
}

int field_sense_xy(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float *out) {
    const field_flavour_t *fl;
    uint32_t cell;
    if (!out) {
        return FIELD_ERR_ARG;
    }
    int err = grid_cell(f, flavour, x, y, &fl, &cell);
    if (!err) {
        *out = fl->cells[cell];
    }
    return err;
}

// An absent key reads as 0: absence and "evaporated below min" are the same state.
int field_sense_key(const field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                    float *out) {
    const field_entry_t *e;
    if (!out) {
        return FIELD_ERR_ARG;
    }
    int err = keyed_entry(f, flavour, key, keylen, &e);
    if (!err) {
        *out = e ? e->value : 0.0f;
    }
    return err;
}

int field_last_xy(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, uint32_t *who) {
    const field_flavour_t *fl;
    uint32_t cell;
    if (!who) {
        return FIELD_ERR_ARG;
    }
    int err = grid_cell(f, flavour, x, y, &fl, &cell);
    if (!err) {
        *who = fl->last[cell];
    }
    return err;
}

int field_last_key(const field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                   uint32_t *who) {
    const field_entry_t *e;
    if (!who) {
        return FIELD_ERR_ARG;
    }
    int err = keyed_entry(f, flavour, key, keylen, &e);
    if (!err) {
        *who = e ? e->last : 0;
    }
    return err;
}
