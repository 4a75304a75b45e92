// SPDX-License-Identifier: MIT
// Font lookup (code point to glyph) and the choice of font by screen resolution.
#include "fbcon_font.h"

unsigned kfont_glyph(const struct kfont *f, uint32_t cp) {
    if (cp < 0x100) {
        return f->latin[cp];
    }
    uint32_t lo = 0, hi = f->map_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->map[mid].cp < cp) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < f->map_count && f->map[lo].cp == cp ? f->map[lo].glyph : f->replacement;
}

const struct kfont *kfont_choose(uint32_t width, uint32_t height, unsigned min_cols) {
    const struct kfont *best = kfonts[0];
    for (unsigned i = 1; i < kfont_count; i++) {
        const struct kfont *f = kfonts[i];
        if (width / f->width >= min_cols && height / f->height >= 1) {
            best = f;
        }
    }
    return best;
}
