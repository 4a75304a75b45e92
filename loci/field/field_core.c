// SPDX-License-Identifier: MIT
// Field set-up: the caller's arena, carving it into journal, tables and flavours,
// parameter validation and the derived per-flavour weights; error names.
#include <string.h>

#include "field_internal.h"

static const char *const err_names[FIELD_ERR__COUNT] = {
    "ok",
    "bad argument",
    "unknown flavour",
    "wrong flavour kind",
    "out of range",
    "amount must be finite and >= 0",
    "bad flavour parameter",
    "bad or duplicate name",
    "bad key",
    "out of memory",
    "full",
    "depositor id 0 is reserved",
    "mass invariant violated",
    "journal lost the records needed",
    "snapshot truncated",
    "not a field snapshot",
    "snapshot of another format version",
    "snapshot checksum mismatch",
    "snapshot corrupt",
    "snapshot digest mismatch",
    "snapshot layout differs from the field",
    "journal cannot be replayed",
    "journal export truncated",
    "not a journal export",
    "journal export of another format version",
    "journal export checksum mismatch",
    "journal export corrupt",
    "replay does not reach the journal's recorded digest",
};

const char *field_err_name(int err) {
    return err >= 0 && err < FIELD_ERR__COUNT ? err_names[err] : "unknown error";
}

uint32_t field_f32_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

float field_bits_f32(uint32_t b) {
    float v;
    memcpy(&v, &b, 4);
    return v;
}

static size_t round_up(size_t n) {
    return (n + FIELD_ALIGN - 1) & ~(size_t)(FIELD_ALIGN - 1);
}

size_t field_base_size(uint32_t journal_cap, uint32_t deps_cap, uint32_t watch_cap) {
    return round_up((size_t)journal_cap * sizeof(field_record_t)) +
           round_up((size_t)deps_cap * sizeof(field_depositor_t)) +
           round_up((size_t)watch_cap * sizeof(field_watch_t)) + FIELD_ALIGN;
}

size_t field_grid_size(uint32_t w, uint32_t h) {
    size_t n = (size_t)w * h;
    return 2 * round_up(n * sizeof(float)) + round_up(n * sizeof(uint32_t));
}

size_t field_keyed_size(uint32_t capacity) {
    return round_up((size_t)capacity * sizeof(field_entry_t));
}

void *field_carve(field_t *f, size_t bytes) {
    uintptr_t base = (uintptr_t)f->arena;
    size_t start = (size_t)(round_up(base + f->arena_used) - base);
    if (start > f->arena_size || bytes > f->arena_size - start) {
        return NULL;
    }
    f->arena_used = start + round_up(bytes);
    if (f->arena_used > f->arena_size) {
        f->arena_used = f->arena_size;
    }
    return f->arena + start;
}

int field_init(field_t *f, void *arena, size_t arena_size, uint32_t journal_cap, uint32_t deps_cap,
               uint32_t watch_cap) {
    if (!f || (!arena && arena_size) || journal_cap == 0) {
        return FIELD_ERR_ARG;
    }
    memset(f, 0, sizeof *f);
    f->arena = arena;
    f->arena_size = arena_size;
    f->invariant_tol = FIELD_INVARIANT_TOL;
    f->journal = field_carve(f, (size_t)journal_cap * sizeof(field_record_t));
    f->deps = deps_cap ? field_carve(f, (size_t)deps_cap * sizeof(field_depositor_t)) : NULL;
    f->watches = watch_cap ? field_carve(f, (size_t)watch_cap * sizeof(field_watch_t)) : NULL;
    if (!f->journal || (deps_cap && !f->deps) || (watch_cap && !f->watches)) {
        memset(f, 0, sizeof *f);
        return FIELD_ERR_NOMEM;
    }
    f->journal_cap = journal_cap;
    f->deps_cap = deps_cap;
    f->watch_cap = watch_cap;
    if (f->watches) {
        memset(f->watches, 0, (size_t)watch_cap * sizeof(field_watch_t));
    }
    return FIELD_OK;
}

field_flavour_t *field_flavour(field_t *f, uint32_t index) {
    return f && index < f->nflavours ? &f->fl[index] : NULL;
}

const field_flavour_t *field_flavour_c(const field_t *f, uint32_t index) {
    return f && index < f->nflavours ? &f->fl[index] : NULL;
}

static int in_unit(float v) {
    return field_finite(v) && v >= 0.0f && v <= 1.0f;
}

int field_params_check(uint8_t kind, const field_params_t *p) {
    if (!p) {
        return FIELD_ERR_ARG;
    }
    if (!in_unit(p->evaporation) || !in_unit(p->diffusion)) {
        return FIELD_ERR_PARAM;
    }
    if (kind == FIELD_KEYED && p->diffusion != 0.0f) {
        return FIELD_ERR_PARAM;
    }
    if (!field_finite(p->cap) || !(p->cap > 0.0f) || p->cap > FIELD_CAP_MAX) {
        return FIELD_ERR_PARAM;
    }
    if (!field_finite(p->min) || p->min < 0.0f || p->min > p->cap) {
        return FIELD_ERR_PARAM;
    }
    return FIELD_OK;
}

// The weights are computed once in float32 so that host and guest (and the Python
// reference model) share them bit for bit.
void field_derive(field_flavour_t *fl) {
    fl->keep = 1.0f - fl->p.evaporation;
    fl->share = fl->p.diffusion * 0.25f;
    float stay = 1.0f - fl->p.diffusion;
    for (int k = 0; k < 5; k++) {
        fl->self_w[k] = stay + (float)k * fl->share;
    }
}

static int name_check(const field_t *f, const char *name) {
    if (!name) {
        return FIELD_ERR_ARG;
    }
    size_t n = strlen(name);
    if (n == 0 || n > FIELD_NAME_MAX) {
        return FIELD_ERR_NAME;
    }
    uint32_t dummy;
    if (field_find(f, name, &dummy) == FIELD_OK) {
        return FIELD_ERR_NAME;
    }
    return FIELD_OK;
}

static field_flavour_t *new_flavour(field_t *f, const char *name, uint8_t kind,
                                    const field_params_t *p) {
    field_flavour_t *fl = &f->fl[f->nflavours];
    memset(fl, 0, sizeof *fl);
    fl->kind = kind;
    fl->name_len = (uint8_t)strlen(name);
    memcpy(fl->name, name, fl->name_len);
    fl->p = *p;
    field_derive(fl);
    return fl;
}

int field_add_grid(field_t *f, const char *name, uint32_t w, uint32_t h, const field_params_t *p,
                   uint32_t *index) {
    if (!f) {
        return FIELD_ERR_ARG;
    }
    int err = name_check(f, name);
    if (err) {
        return err;
    }
    if ((err = field_params_check(FIELD_GRID, p))) {
        return err;
    }
    if (w == 0 || h == 0 || w > FIELD_GRID_MAX_SIDE || h > FIELD_GRID_MAX_SIDE) {
        return FIELD_ERR_RANGE;
    }
    if (f->nflavours >= FIELD_MAX_FLAVOURS) {
        return FIELD_ERR_FULL;
    }
    size_t n = (size_t)w * h, used = f->arena_used;
    float *cells = field_carve(f, n * sizeof(float));
    float *pending = field_carve(f, n * sizeof(float));
    uint32_t *last = field_carve(f, n * sizeof(uint32_t));
    if (!cells || !pending || !last) {
        f->arena_used = used;
        return FIELD_ERR_NOMEM;
    }
    field_flavour_t *fl = new_flavour(f, name, FIELD_GRID, p);
    fl->w = w;
    fl->h = h;
    fl->cells = cells;
    fl->pending = pending;
    fl->last = last;
    memset(cells, 0, n * sizeof(float));
    memset(pending, 0, n * sizeof(float));
    memset(last, 0, n * sizeof(uint32_t));
    if (index) {
        *index = f->nflavours;
    }
    f->nflavours++;
    return FIELD_OK;
}

int field_add_keyed(field_t *f, const char *name, uint32_t capacity, const field_params_t *p,
                    uint32_t *index) {
    if (!f) {
        return FIELD_ERR_ARG;
    }
    int err = name_check(f, name);
    if (err) {
        return err;
    }
    if ((err = field_params_check(FIELD_KEYED, p))) {
        return err;
    }
    if (capacity == 0 || capacity > FIELD_KEYED_MAX_CAP) {
        return FIELD_ERR_RANGE;
    }
    if (f->nflavours >= FIELD_MAX_FLAVOURS) {
        return FIELD_ERR_FULL;
    }
    field_entry_t *entries = field_carve(f, (size_t)capacity * sizeof(field_entry_t));
    if (!entries) {
        return FIELD_ERR_NOMEM;
    }
    field_flavour_t *fl = new_flavour(f, name, FIELD_KEYED, p);
    fl->w = capacity;
    fl->entries = entries;
    if (index) {
        *index = f->nflavours;
    }
    f->nflavours++;
    return FIELD_OK;
}

int field_find(const field_t *f, const char *name, uint32_t *index) {
    if (!f || !name || !index) {
        return FIELD_ERR_ARG;
    }
    size_t n = strlen(name);
    for (uint32_t i = 0; i < f->nflavours; i++) {
        if (f->fl[i].name_len == n && memcmp(f->fl[i].name, name, n) == 0) {
            *index = i;
            return FIELD_OK;
        }
    }
    return FIELD_ERR_FLAVOUR;
}
