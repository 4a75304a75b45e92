// SPDX-License-Identifier: MIT
// Read-only queries on committed values: 3x3 neighbourhood, gradient (steepest
// ascent), rectangular region sum/max/argmax, and a flavour's total mass.
#include "field_internal.h"

static int grid(const field_t *f, uint32_t flavour, const field_flavour_t **out) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (fl->kind != FIELD_GRID) {
        return FIELD_ERR_KIND;
    }
    *out = fl;
    return FIELD_OK;
}

// out[(dy+1)*3 + (dx+1)]; cells outside the grid read 0 and have their bit clear in
// valid_mask, so a caller can tell "empty" from "wall".
int field_neighbourhood(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float out[9],
                        uint32_t *valid_mask) {
    const field_flavour_t *fl;
    if (!out || !valid_mask) {
        return FIELD_ERR_ARG;
    }
    int err = grid(f, flavour, &fl);
    if (err) {
        return err;
    }
    if (x >= fl->w || y >= fl->h) {
        return FIELD_ERR_RANGE;
    }
    uint32_t mask = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int k = (dy + 1) * 3 + (dx + 1);
            int64_t nx = (int64_t)x + dx, ny = (int64_t)y + dy;
            out[k] = 0.0f;
            if (nx < 0 || ny < 0 || nx >= fl->w || ny >= fl->h) {
                continue;
            }
            out[k] = fl->cells[(size_t)ny * fl->w + (size_t)nx];
            mask |= 1u << k;
        }
    }
    *valid_mask = mask;
    return FIELD_OK;
}

// Candidates in this order, first wins a tie: N, NE, E, SE, S, SW, W, NW (y grows
// downwards, so N is y-1). A neighbour must be strictly above the centre; if none is,
// the answer is (0, 0): this cell is a local maximum or a plateau.
static const int8_t grad_dir[8][2] = {
    { 0, -1 }, { 1, -1 }, { 1, 0 }, { 1, 1 }, { 0, 1 }, { -1, 1 }, { -1, 0 }, { -1, -1 },
};

int field_gradient(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, int *dx, int *dy) {
    const field_flavour_t *fl;
    if (!dx || !dy) {
        return FIELD_ERR_ARG;
    }
    int err = grid(f, flavour, &fl);
    if (err) {
        return err;
    }
    if (x >= fl->w || y >= fl->h) {
        return FIELD_ERR_RANGE;
    }
    float best = fl->cells[(size_t)y * fl->w + x];
    int bx = 0, by = 0;
    for (int k = 0; k < 8; k++) {
        int64_t nx = (int64_t)x + grad_dir[k][0], ny = (int64_t)y + grad_dir[k][1];
        if (nx < 0 || ny < 0 || nx >= fl->w || ny >= fl->h) {
            continue;
        }
        float v = fl->cells[(size_t)ny * fl->w + (size_t)nx];
        if (v > best) {
            best = v;
            bx = grad_dir[k][0];
            by = grad_dir[k][1];
        }
    }
    *dx = bx;
    *dy = by;
    return FIELD_OK;
}

// The rectangle must lie inside the grid and hold at least one cell. argmax is the
// first maximum in row-major order, as a cell index y*W + x.
int field_region(const field_t *f, uint32_t flavour, uint32_t x0, uint32_t y0, uint32_t w,
                 uint32_t h, double *sum, float *max, uint32_t *argmax) {
    const field_flavour_t *fl;
    if (!sum || !max || !argmax) {
        return FIELD_ERR_ARG;
    }
    int err = grid(f, flavour, &fl);
    if (err) {
        return err;
    }
    if (w == 0 || h == 0 || x0 >= fl->w || y0 >= fl->h || w > fl->w - x0 || h > fl->h - y0) {
        return FIELD_ERR_RANGE;
    }
    double s = 0.0;
    uint32_t arg = y0 * fl->w + x0;
    float m = fl->cells[arg];
    for (uint32_t y = y0; y < y0 + h; y++) {
        const float *row = &fl->cells[(size_t)y * fl->w];
        for (uint32_t x = x0; x < x0 + w; x++) {
            s += (double)row[x];
            if (row[x] > m) {
                m = row[x];
                arg = y * fl->w + x;
            }
        }
    }
    *sum = s;
    *max = m;
    *argmax = arg;
    return FIELD_OK;
}

// Sum of committed values (row-major for grids, key order for keyed), in double.
int field_total(const field_t *f, uint32_t flavour, double *sum) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (!sum) {
        return FIELD_ERR_ARG;
    }
    double s = 0.0;
    if (fl->kind == FIELD_GRID) {
        for (size_t i = 0; i < (size_t)fl->w * fl->h; i++) {
            s += (double)fl->cells[i];
        }
    } else {
        for (uint32_t i = 0; i < fl->count; i++) {
            s += (double)fl->entries[i].value;
        }
    }
    *sum = s;
    return FIELD_OK;
}
