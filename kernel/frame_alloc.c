// SPDX-License-Identifier: MIT
// Physical frame allocator over two bitmaps; see frame_alloc.h. No arch code here.
#include "frame_alloc.h"

static bool bit(const uint64_t *map, uint64_t i) {
    return map[i / 64] >> (i % 64) & 1;
}
static void set_bit(uint64_t *map, uint64_t i) {
    map[i / 64] |= 1ULL << (i % 64);
}
static void clear_bit(uint64_t *map, uint64_t i) {
    map[i / 64] &= ~(1ULL << (i % 64));
}

size_t frame_alloc_words(uint64_t nframes) {
    return (size_t)((nframes + 63) / 64);
}

void frame_alloc_init(struct frame_alloc *fa, uint64_t *words, uint64_t nframes) {
    size_t n = frame_alloc_words(nframes);
    fa->managed = words;
    fa->used = words + n;
    for (size_t i = 0; i < n; i++) {
        fa->managed[i] = 0;
        fa->used[i] = ~0ULL;
    }
    fa->nframes = nframes;
    fa->total = fa->free = 0;
    fa->hint = nframes;
}

bool frame_alloc_is_free(const struct frame_alloc *fa, uint64_t frame) {
    return frame < fa->nframes && !bit(fa->used, frame);
}

uint64_t frame_alloc_add(struct frame_alloc *fa, uint64_t first, uint64_t count) {
    uint64_t added = 0;
    for (uint64_t f = first; f < fa->nframes && f - first < count; f++) {
        if (!bit(fa->managed, f)) {
            set_bit(fa->managed, f);
            clear_bit(fa->used, f);
            added++;
            if (f < fa->hint) {
                fa->hint = f;
            }
        }
    }
    fa->total += added;
    fa->free += added;
    return added;
}

static bool run_is_free(const struct frame_alloc *fa, uint64_t first, uint64_t count) {
    if (count == 0 || first >= fa->nframes || count > fa->nframes - first) {
        return false;
    }
    for (uint64_t f = first; f < first + count; f++) {
        if (bit(fa->used, f)) {
            return false;
        }
    }
    return true;
}

static void mark_used(struct frame_alloc *fa, uint64_t first, uint64_t count) {
    for (uint64_t f = first; f < first + count; f++) {
        set_bit(fa->used, f);
    }
    fa->free -= count;
    if (first <= fa->hint) {
        uint64_t h = first + count;
        while (h < fa->nframes && bit(fa->used, h)) {
            h++;
        }
        fa->hint = h;
    }
}

bool frame_alloc_take(struct frame_alloc *fa, uint64_t first, uint64_t count) {
    if (!run_is_free(fa, first, count)) {
        return false;
    }
    mark_used(fa, first, count);
    return true;
}

bool frame_alloc_alloc(struct frame_alloc *fa, uint64_t count, uint64_t *first) {
    if (count == 0 || count > fa->free) {
        return false;
    }
    uint64_t run = 0, start = 0;
    for (uint64_t f = fa->hint; f < fa->nframes; f++) {
        if (f % 64 == 0 && fa->used[f / 64] == ~0ULL) {
            run = 0;
            f += 63;
            continue;
        }
        if (bit(fa->used, f)) {
            run = 0;
            continue;
        }
        if (run++ == 0) {
            start = f;
        }
        if (run == count) {
            mark_used(fa, start, count);
            *first = start;
            return true;
        }
    }
    return false;
}

bool frame_alloc_free(struct frame_alloc *fa, uint64_t first, uint64_t count) {
    if (count == 0 || first >= fa->nframes || count > fa->nframes - first) {
        return false;
    }
    for (uint64_t f = first; f < first + count; f++) {
        if (!bit(fa->managed, f) || !bit(fa->used, f)) {
            return false;
        }
    }
    for (uint64_t f = first; f < first + count; f++) {
        clear_bit(fa->used, f);
    }
    fa->free += count;
    if (first < fa->hint) {
        fa->hint = first;
    }
    return true;
}

uint64_t frame_alloc_largest_run(const struct frame_alloc *fa, uint64_t *first) {
    uint64_t best = 0, best_start = 0, run = 0, start = 0;
    for (uint64_t f = fa->hint; f < fa->nframes; f++) {
        if (bit(fa->used, f)) {
            run = 0;
            continue;
        }
        if (run++ == 0) {
            start = f;
        }
        if (run > best) {
            best = run;
            best_start = start;
        }
    }
    *first = best_start;
    return best;
}
