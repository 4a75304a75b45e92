// SPDX-License-Identifier: MIT
// Font lookup (code point to glyph) and the choice of font by screen resolution.
#include "fbcon_font.h"

// Punctuation that console fonts often lack but ordinary text uses (the banner's em
// dash, quotes and dashes in pasted prose, the minus sign): drawn as the ASCII
// character it stands for, which reads better than the replacement glyph. 0: none.
static uint32_t ascii_lookalike(uint32_t cp) {
    if ((cp >= 0x2010 && cp <= 0x2015) || cp == 0x2212) {
        return '-';
    }
    if ((cp >= 0x2018 && cp <= 0x201b) || cp == 0x2032) {
        return '\'';
    }
    if ((cp >= 0x201c && cp <= 0x201f) || cp == 0x2033) {
        return '"';
    }
    if (cp == 0x2022 || cp == 0x2023 || cp == 0x2043) {
        return '*';
    }
    return 0;
}

static unsigned lookup(const struct kfont *f, uint32_t cp, int *found) {
    uint32_t lo = 0, hi = f->map_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->map[mid].cp < cp) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *found = lo < f->map_count && f->map[lo].cp == cp;
    return *found ? f->map[lo].glyph : f->replacement;
}

unsigned kfont_glyph(const struct kfont *f, uint32_t cp) {
    if (cp < 0x100) {
        return f->latin[cp];
    }
    int found;
    unsigned g = lookup(f, cp, &found);
    uint32_t alt = found ? 0 : ascii_lookalike(cp);
    return alt ? f->latin[alt] : g;
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
