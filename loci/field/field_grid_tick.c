// SPDX-License-Identifier: MIT
// The tick of one grid flavour: commit pending deposits, clip at the cap, evaporate,
// diffuse (4-neighbour, reflecting borders), apply the min rule, and zero the pending
// buffer, in one walk over the grid. The semantics are those of loci/field/README.md
// ("tick()"), cell by cell; this file only chooses the order the work is done in.
//
// Rows are visited top to bottom. While row y is diffused, row y+1 is committed at the
// same column, so the value below a cell is still in a register when the cell needs it;
// row y's own left/right neighbours were committed during row y-1. Committed values
// overwrite the old values in place (no cell reads the old value of a row below it
// after that row is committed), diffusion results go into the pending buffer (whose
// row y was read when row y was committed), and the buffers then swap. Row y-1 of the
// old value buffer is zeroed as row y reads it for the last time: that makes the new
// pending buffer all zeros without a separate pass.
//
// Interior cells go four at a time through GCC vector types (SSE on x86-64, plain
// scalar code elsewhere); each lane does exactly the float32 operations of the scalar
// code, in the same order. Cells on the border, the columns left over from the groups
// of four, and any group where a cell is clipped at the cap or dropped by the min rule
// take the scalar path: those are the cells whose arithmetic differs (walls) or that
// add to the clipped/dropped sums.
//
// The double statistics are summed in row-major cell order, as before: the host tests
// compare them with tests/host/field_model.py exactly (and `after` with field_total()),
// so they are sequential sums, not sums in lanes.
#include <string.h>

#include "field_internal.h"

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int64_t v2l __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
// Four floats at any 4-byte-aligned address (rows start anywhere when W % 4 != 0).
typedef float v4f_u __attribute__((vector_size(16), aligned(4), may_alias));

static inline v4f load4(const float *p) {
    return *(const v4f_u *)p;
}
static inline void store4(float *p, v4f v) {
    *(v4f_u *)p = v;
}
static inline v4f splat(float x) {
    return (v4f){ x, x, x, x };
}
static inline int any_lane(v4i m) {
    v2l q = (v2l)m;
    return (q[0] | q[1]) != 0;
}

typedef struct {
    const field_flavour_t *fl;
    uint32_t w, h;
    double before, clipped, dropped, after;
} grid_tick_t;

// Commit one cell in place: v = value + pending, clipped at cap, times keep.
static inline float commit(grid_tick_t *t, float *cell, const float *pend) {
    const field_flavour_t *fl = t->fl;
    t->before += (double)*cell;
    float v = *cell + *pend;
    if (v > fl->p.cap) {
        t->clipped += (double)v - (double)fl->p.cap;
        v = fl->p.cap;
    }
    return *cell = v * fl->keep;
}

// Min rule, then the cell's new value goes to the output row.
static inline void emit(grid_tick_t *t, float *out, float v) {
    if (v < t->fl->p.min) {
        t->dropped += (double)v;
        v = 0.0f;
    }
    *out = v;
    t->after += (double)v;
}

// Cell x of row y, any position: commits the cell below it, diffuses it with the
// neighbours that exist (the shares that would leave the grid stay: self_w[walls]) and
// zeroes the cell above it. up/down are NULL on the first/last row.
static void cell_scalar(grid_tick_t *t, float *up, float *mid, float *down, const float *pdown,
                        float *out, uint32_t x) {
    const field_flavour_t *fl = t->fl;
    if (down) {
        commit(t, down + x, pdown + x);
    }
    float acc = 0.0f;
    int walls = 0;
    if (x > 0) {
        acc = acc + mid[x - 1];
    } else {
        walls++;
    }
    if (x + 1 < t->w) {
        acc = acc + mid[x + 1];
    } else {
        walls++;
    }
    if (up) {
        acc = acc + up[x];
        up[x] = 0.0f;
    } else {
        walls++;
    }
    if (down) {
        acc = acc + down[x];
    } else {
        walls++;
    }
    float kept = mid[x] * fl->self_w[walls];
    float got = fl->share * acc;
    emit(t, out + x, kept + got);
}

// Columns x .. x1-1 of an interior row (rows above and below exist; 1 <= x, x1 <= w-1),
// four at a time, until fewer than four are left or a group has a cell that the cap
// clips or the min rule drops (the scalar path does that group: nothing of it has been
// written yet). Returns the first column not done. A leaf, so that every constant stays
// in a register.
__attribute__((noinline)) static uint32_t row_vector(grid_tick_t *t, float *mid, float *out,
                                                     uint32_t x0, uint32_t x1) {
    const field_flavour_t *fl = t->fl;
    const uint32_t w = t->w;
    float *up = mid - w, *down = mid + w;
    const float *pdown = out + w;
    const v4f cap = splat(fl->p.cap), keep = splat(fl->keep), share = splat(fl->share);
    const v4f min = splat(fl->p.min), self0 = splat(fl->self_w[0]), zero = splat(0.0f);
    double before = t->before, after = t->after;
    size_t x = x0;
    if (x1 < x0 + 4) {
        return x0;
    }
    const size_t last = x1 - 4;  // the last column a group may start at
    do {
        v4f v = load4(down + x) + load4(pdown + x);
        v4i odd = cap < v;  // v > cap: clipped
        v4f below = v * keep;
        v4f acc = zero + load4(mid + x - 1);
        acc = acc + load4(mid + x + 1);
        acc = acc + load4(up + x);
        acc = acc + below;
        v4f kept = load4(mid + x) * self0;
        v4f got = share * acc;
        v4f res = kept + got;
        odd |= res < min;  // dropped
        if (any_lane(odd)) {
            break;
        }
        before += (double)down[x];
        before += (double)down[x + 1];
        before += (double)down[x + 2];
        before += (double)down[x + 3];
        store4(down + x, below);
        store4(up + x, zero);
        store4(out + x, res);
        // Read the results back from memory: the compiler would otherwise take the four
        // lanes out of the register, which costs more instructions than four loads.
        __asm__ volatile("" ::: "memory");
        after += (double)out[x];
        after += (double)out[x + 1];
        after += (double)out[x + 2];
        after += (double)out[x + 3];
        x += 4;
    } while (x <= last);
    t->before = before;
    t->after = after;
    return (uint32_t)x;
}

void field_tick_grid(field_flavour_t *fl) {
    const uint32_t w = fl->w, h = fl->h;
    float *s = fl->cells, *d = fl->pending;
    grid_tick_t t = { fl, w, h, 0.0, fl->clipped, 0.0, 0.0 };

    for (uint32_t x = 0; x < w; x++) {
        commit(&t, s + x, d + x);
    }
    for (uint32_t y = 0; y < h; y++) {
        float *mid = s + (size_t)y * w;
        float *up = y > 0 ? mid - w : NULL;
        float *down = y + 1 < h ? mid + w : NULL;
        const float *pdown = d + (size_t)(y + 1) * w;
        float *out = d + (size_t)y * w;
        uint32_t x = 0;
        if (up && down && w > 2) {
            cell_scalar(&t, up, mid, down, pdown, out, 0);
            x = 1;
            while ((x = row_vector(&t, mid, out, x, w - 1)) + 4 <= w - 1) {
                for (uint32_t end = x + 4; x < end; x++) {
                    cell_scalar(&t, up, mid, down, pdown, out, x);
                }
            }
        }
        for (; x < w; x++) {
            cell_scalar(&t, up, mid, down, pdown, out, x);
        }
    }
    // Rows 0 .. h-2 were zeroed as the row below them was diffused.
    memset(s + (size_t)(h - 1) * w, 0, w * sizeof(float));
    fl->cells = d;
    fl->pending = s;
    fl->stats = (field_tick_stats_t){ t.before, fl->deposited, t.clipped, t.dropped, t.after };
}
