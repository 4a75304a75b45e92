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
// Cells go four at a time ("quads") through GCC vector types (SSE on x86-64, plain
// scalar code elsewhere); each lane does exactly the float32 operations of the scalar
// code, in the same order (walls: see "The vector path" below). The columns left over
// when W % 4 != 0, and any quad where a cell is clipped at the cap or dropped by the min
// rule, take the scalar path, cell_scalar(): those cells add to the clipped and dropped
// sums, which must stay in cell order.
//
// The double statistics are summed in row-major cell order, as before: the host tests
// compare them with tests/host/field_model.py exactly (and `after` with field_total()),
// so they are sequential sums, not sums in lanes.
#include <string.h>

#include "field_internal.h"

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef int64_t v2l __attribute__((vector_size(16)));
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

// The vector path. Each lane does the float32 operations of cell_scalar() in the same
// order, with one difference at the left and right walls: there the lane adds +0.0 in
// place of the missing neighbour, which gives the same bits as skipping it. (acc starts
// at +0.0, and a round-to-nearest sum is -0.0 only if both terms are, so acc is never
// -0.0, and acc + +0.0 == acc for every other acc.) The rows above and below are never
// missing inside a row, so for them the code simply leaves the addition out.
typedef struct {
    v4f cap, keep, share, min, zero;
} lanes_t;

// Four cells' results before anything is written: the committed cells below, the new
// values, and the lanes that need the scalar path (the cell below is clipped at the cap,
// or the result is dropped by the min rule), so that clipped and dropped are summed in
// cell order by cell_scalar().
typedef struct {
    v4f below, res;
    v4i odd;
} quad_t;

static inline __attribute__((always_inline)) quad_t quad(const lanes_t *k, const float *mid,
                                                         const float *out, size_t w, size_t x,
                                                         v4f left, v4f right, v4f self,
                                                         const int has_up, const int has_down) {
    quad_t q = { k->zero, k->zero, { 0, 0, 0, 0 } };
    if (has_down) {
        v4f v = load4(mid + w + x) + load4(out + w + x);
        q.odd = k->cap < v;
        q.below = v * k->keep;
    }
    v4f acc = k->zero + left;
    acc = acc + right;
    if (has_up) {
        acc = acc + load4(mid - w + x);
    }
    if (has_down) {
        acc = acc + q.below;
    }
    v4f kept = load4(mid + x) * self;
    v4f got = k->share * acc;
    q.res = kept + got;
    q.odd |= q.res < k->min;
    return q;
}

// Writes a quad: the committed cells below, zeros over the row above (read for the last
// time), the results; and adds to the sums, in cell order.
static inline __attribute__((always_inline)) void put(const lanes_t *k, double *before,
                                                      double *after, float *mid, float *out,
                                                      size_t w, size_t x, const quad_t *q,
                                                      const int has_up, const int has_down) {
    if (has_down) {
        float *down = mid + w;
        *before += (double)down[x];
        *before += (double)down[x + 1];
        *before += (double)down[x + 2];
        *before += (double)down[x + 3];
        store4(down + x, q->below);
    }
    if (has_up) {
        store4(mid - w + x, k->zero);
    }
    store4(out + x, q->res);
    // Read the results back from memory: the compiler would otherwise take the four
    // lanes out of the register, which costs more instructions than four loads.
    __asm__ volatile("" ::: "memory");
    *after += (double)out[x];
    *after += (double)out[x + 1];
    *after += (double)out[x + 2];
    *after += (double)out[x + 3];
}

// Columns x .. (w & ~3) - 1 of a row in quads, until one needs the scalar path; returns
// where it stopped (the caller does those four cells and calls again after them). The
// quad at column 0 touches the left wall with lane 0, and if w % 4 == 0 the last quad
// touches the right wall with lane 3; quads in between go two at a time. A leaf
// function, one per kind of row, so that every constant stays in a register.
static inline __attribute__((always_inline)) size_t quads(grid_tick_t *t, float *mid, float *out,
                                                          size_t x, const int has_up,
                                                          const int has_down) {
    const field_flavour_t *fl = t->fl;
    const lanes_t k = { splat(fl->p.cap), splat(fl->keep), splat(fl->share), splat(fl->p.min),
                        splat(0.0f) };
    const int walls = !has_up + !has_down;
    const v4f self = splat(fl->self_w[walls]);
    const size_t w = t->w, body = w & ~(size_t)3, inner = w % 4 ? body : body - 4;
    double before = t->before, after = t->after;
    if (x == 0) {
        v4f left = { 0.0f, mid[0], mid[1], mid[2] }, right = load4(mid + 1), s = self;
        s[0] = fl->self_w[walls + 1];
        if (w == 4) {
            right = (v4f){ mid[1], mid[2], mid[3], 0.0f };
            s[3] = fl->self_w[walls + 1];
        }
        quad_t q = quad(&k, mid, out, w, 0, left, right, s, has_up, has_down);
        if (any_lane(q.odd)) {
            goto done;
        }
        put(&k, &before, &after, mid, out, w, 0, &q, has_up, has_down);
        x = 4;
    }
    if (x + 8 <= inner) {
        const size_t last = inner - 8;  // the last column a pair may start at
        do {
            quad_t a = quad(&k, mid, out, w, x, load4(mid + x - 1), load4(mid + x + 1), self,
                            has_up, has_down);
            quad_t b = quad(&k, mid, out, w, x + 4, load4(mid + x + 3), load4(mid + x + 5), self,
                            has_up, has_down);
            if (any_lane(a.odd | b.odd)) {
                goto done;  // the caller does a scalar; b comes back as the first of a pair
            }
            put(&k, &before, &after, mid, out, w, x, &a, has_up, has_down);
            put(&k, &before, &after, mid, out, w, x + 4, &b, has_up, has_down);
            x += 8;
        } while (x <= last);
    }
    if (x < inner) {
        quad_t q = quad(&k, mid, out, w, x, load4(mid + x - 1), load4(mid + x + 1), self, has_up,
                        has_down);
        if (any_lane(q.odd)) {
            goto done;
        }
        put(&k, &before, &after, mid, out, w, x, &q, has_up, has_down);
        x += 4;
    }
    if (x < body) {  // x + 4 == w
        v4f right = { mid[x + 1], mid[x + 2], mid[x + 3], 0.0f }, s = self;
        s[3] = fl->self_w[walls + 1];
        quad_t q = quad(&k, mid, out, w, x, load4(mid + x - 1), right, s, has_up, has_down);
        if (any_lane(q.odd)) {
            goto done;
        }
        put(&k, &before, &after, mid, out, w, x, &q, has_up, has_down);
        x += 4;
    }
done:
    t->before = before;
    t->after = after;
    return x;
}

#define QUADS(name, has_up, has_down)                                                    \
    __attribute__((noinline)) static size_t name(grid_tick_t *t, float *mid, float *out, \
                                                 size_t x) {                             \
        return quads(t, mid, out, x, has_up, has_down);                                  \
    }
QUADS(quads_inner, 1, 1)
QUADS(quads_top, 0, 1)
QUADS(quads_bottom, 1, 0)
QUADS(quads_single, 0, 0)

static void scalar_cells(grid_tick_t *t, float *up, float *mid, float *down, float *out, size_t x,
                         size_t end) {
    for (; x < end; x++) {
        cell_scalar(t, up, mid, down, out + t->w, out, (uint32_t)x);
    }
}

// Row 0's cells are committed before the walk starts (each later row is committed while
// the row above it is diffused); groups of four like the walk, scalar where clipped.
static void commit_first_row(grid_tick_t *t, float *s, const float *d) {
    const v4f cap = splat(t->fl->p.cap), keep = splat(t->fl->keep);
    const size_t w = t->w;
    size_t x = 0;
    for (; x + 4 <= w; x += 4) {
        v4f v = load4(s + x) + load4(d + x);
        if (any_lane(cap < v)) {
            for (size_t j = x; j < x + 4; j++) {
                commit(t, s + j, d + j);
            }
            continue;
        }
        t->before += (double)s[x];
        t->before += (double)s[x + 1];
        t->before += (double)s[x + 2];
        t->before += (double)s[x + 3];
        store4(s + x, v * keep);
    }
    for (; x < w; x++) {
        commit(t, s + x, d + x);
    }
}

void field_tick_grid(field_flavour_t *fl) {
    const uint32_t w = fl->w, h = fl->h;
    float *s = fl->cells, *d = fl->pending;
    grid_tick_t t = { fl, w, h, 0.0, fl->clipped, 0.0, 0.0 };
    size_t (*const kinds[2][2])(grid_tick_t *, float *, float *,
                                size_t) = { { quads_single, quads_top },
                                            { quads_bottom, quads_inner } };
    const size_t body = w & ~(size_t)3;  // columns done in quads

    commit_first_row(&t, s, d);
    for (uint32_t y = 0; y < h; y++) {
        float *mid = s + (size_t)y * w;
        float *up = y > 0 ? mid - w : NULL;
        float *down = y + 1 < h ? mid + w : NULL;
        float *out = d + (size_t)y * w;
        size_t (*const run)(grid_tick_t *, float *, float *, size_t) =
            kinds[up != NULL][down != NULL];
        size_t x = 0;
        while (x < body && (x = run(&t, mid, out, x)) < body) {
            scalar_cells(&t, up, mid, down, out, x, x + 4);
            x += 4;
        }
        scalar_cells(&t, up, mid, down, out, x, w);
    }
    // Rows 0 .. h-2 were zeroed as the row below them was diffused.
    memset(s + (size_t)(h - 1) * w, 0, w * sizeof(float));
    fl->cells = d;
    fl->pending = s;
    fl->stats = (field_tick_stats_t){ t.before, fl->deposited, t.clipped, t.dropped, t.after };
}
