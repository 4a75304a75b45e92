// SPDX-License-Identifier: MIT
// The screen console's bitmap fonts: converted at build time from PSF files by
// tools/build/psf2c.py into kfonts[] (build/kernel/dev/fbcon_font_data.c), looked up by
// Unicode code point, and chosen by the screen's resolution. Plain C: no kernel calls.
#ifndef LOCIOS_KERNEL_DEV_FBCON_FONT_H
#define LOCIOS_KERNEL_DEV_FBCON_FONT_H

#include <stdint.h>

struct kfont_map {
    uint32_t cp;     // code point (>= 0x100; lower ones are in kfont.latin)
    uint16_t glyph;  // index into the bitmaps
};

struct kfont {
    const char *name;  // the PSF file it came from
    uint8_t width, height;
    uint8_t row_bytes;  // (width + 7) / 8: each glyph row, most significant bit leftmost
    uint16_t glyph_count;
    uint16_t replacement;         // the glyph for code points the font lacks (its U+FFFD or '?')
    const uint8_t *bits;          // glyph_count * height * row_bytes bytes
    const uint16_t *latin;        // glyph of U+0000..U+00FF (the replacement where absent)
    const struct kfont_map *map;  // the rest, sorted by code point
    uint32_t map_count;
};

// Every font the build converted, smallest cell first.
extern const struct kfont *const kfonts[];
extern const unsigned kfont_count;

// The glyph to draw for a code point: the font's own, the ASCII lookalike of common punctuation
// it lacks (dashes, quotes, bullets), or its replacement glyph.
unsigned kfont_glyph(const struct kfont *f, uint32_t cp);
// The font for a screen of width x height pixels: the largest that still gives at least
// min_cols columns, else the smallest font there is.
const struct kfont *kfont_choose(uint32_t width, uint32_t height, unsigned min_cols);

#endif
