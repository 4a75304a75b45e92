// SPDX-License-Identifier: MIT
// Glyph blits. The framebuffer is write-combining memory and never read: each glyph row
// goes out as 16-byte stores of four pixels, looked up by four bits of the glyph in a
// table of the 16 colourings (made again only when the colours change).
#include "fbcon_draw.h"

// The PC console's 16 colours (CGA order and values), then xterm's cube and grey ramp.
static const uint32_t base16[16] = {
    0x000000, 0xaa0000, 0x00aa00, 0xaa5500, 0x0000aa, 0xaa00aa, 0x00aaaa, 0xaaaaaa,
    0x555555, 0xff5555, 0x55ff55, 0xffff55, 0x5555ff, 0xff55ff, 0x55ffff, 0xffffff,
};

uint32_t fbdraw_rgb(unsigned i) {
    static const uint8_t level[6] = { 0, 95, 135, 175, 215, 255 };
    if (i < 16) {
        return base16[i];
    }
    if (i < 232) {
        i -= 16;
        return (uint32_t)level[i / 36] << 16 | (uint32_t)level[i / 6 % 6] << 8 | level[i % 6];
    }
    uint32_t g = 8 + 10 * (i - 232);
    return g << 16 | g << 8 | g;
}

void fbdraw_init(struct fbdraw *d, uintptr_t base, uint32_t width, uint32_t height, uint32_t stride,
                 uint32_t format, const struct kfont *font) {
    d->base = (uint32_t *)base;
    d->nib_valid = 0;
    d->width = width;
    d->height = height;
    d->stride = stride;
    d->font = font;
    for (unsigned i = 0; i < 256; i++) {
        uint32_t rgb = fbdraw_rgb(i);
        uint32_t r = rgb >> 16 & 0xff, g = rgb >> 8 & 0xff, b = rgb & 0xff;
        d->palette[i] = format == 0 ? (b << 16 | g << 8 | r) : (r << 16 | g << 8 | b);
    }
}

typedef fbdraw_px4 px4;

// The 16 ways to colour four pixels in fg and bg, kept for the last colour pair.
static void set_colours(struct fbdraw *d, uint8_t fg, uint8_t bg) {
    if (d->nib_valid && d->nib_fg == fg && d->nib_bg == bg) {
        return;
    }
    uint32_t cf = d->palette[fg], cb = d->palette[bg];
    for (unsigned n = 0; n < 16; n++) {
        px4 v = { n & 8 ? cf : cb, n & 4 ? cf : cb, n & 2 ? cf : cb, n & 1 ? cf : cb };
        d->nib[n] = v;
    }
    d->nib_fg = fg;
    d->nib_bg = bg;
    d->nib_valid = 1;
}

// One glyph of `quads` * 4 pixels a row (quads a constant where it is inlined, so the
// row loop unrolls); `top` is the bit of the leftmost pixel in the assembled row.
static inline __attribute__((always_inline)) void glyph4(const struct fbdraw *d, uint32_t *dst,
                                                         const uint8_t *bits, unsigned height,
                                                         unsigned rb, unsigned top,
                                                         unsigned quads) {
    for (unsigned y = 0; y < height; y++, bits += rb, dst += d->stride) {
        uint32_t r = bits[0];
        for (unsigned i = 1; i < rb; i++) {
            r = r << 8 | bits[i];
        }
        for (unsigned q = 0; q < quads; q++) {
            px4 v = d->nib[r >> (top - 3 - 4 * q) & 15];
            __builtin_memcpy(dst + 4 * q, &v, sizeof v);
        }
    }
}

void fbdraw_cell(struct fbdraw *d, unsigned row, unsigned col, unsigned g, uint8_t fg, uint8_t bg) {
    const struct kfont *f = d->font;
    set_colours(d, fg, bg);
    const uint8_t *bits = f->bits + (uint32_t)g * f->height * f->row_bytes;
    uint32_t *dst = d->base + (uintptr_t)row * f->height * d->stride + (uintptr_t)col * f->width;
    unsigned rb = f->row_bytes, top = rb * 8 - 1;
    if (f->width == 8 && rb == 1) {
        glyph4(d, dst, bits, f->height, 1, 7, 2);
    } else if (f->width == 12 && rb == 2) {
        glyph4(d, dst, bits, f->height, 2, 15, 3);
    } else if (f->width == 16 && rb == 2) {
        glyph4(d, dst, bits, f->height, 2, 15, 4);
    } else {
        // Any other width: whole quads, then the pixels left over one by one.
        uint32_t cf = d->palette[fg], cb = d->palette[bg];
        unsigned quads = f->width / 4;
        glyph4(d, dst, bits, f->height, rb, top, quads);
        for (unsigned y = 0; y < f->height; y++, bits += rb, dst += d->stride) {
            uint32_t r = 0;
            for (unsigned i = 0; i < rb; i++) {
                r = r << 8 | bits[i];
            }
            for (unsigned x = quads * 4; x < f->width; x++) {
                dst[x] = (r >> (top - x) & 1) ? cf : cb;
            }
        }
    }
}

void fbdraw_fill(const struct fbdraw *d, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                 uint8_t colour) {
    uint32_t c = d->palette[colour];
    for (uint32_t j = 0; j < h && y + j < d->height; j++) {
        uint32_t *line = d->base + (uintptr_t)(y + j) * d->stride;
        for (uint32_t i = 0; i < w && x + i < d->width; i++) {
            line[x + i] = c;
        }
    }
}
