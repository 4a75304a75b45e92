// SPDX-License-Identifier: MIT
// Glyph blits. The framebuffer is write-combining memory: only stores reach it, in
// address order, 64 bits at a time where the font's width is even.
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
    d->base = (volatile uint32_t *)base;
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

void fbdraw_cell(const struct fbdraw *d, unsigned row, unsigned col, unsigned g, uint8_t fg,
                 uint8_t bg) {
    const struct kfont *f = d->font;
    uint32_t cf = d->palette[fg], cb = d->palette[bg];
    // Two pixels per 64-bit store; index = (left pixel lit) << 1 | (right pixel lit).
    const uint64_t pair[4] = {
        (uint64_t)cb << 32 | cb,
        (uint64_t)cf << 32 | cb,
        (uint64_t)cb << 32 | cf,
        (uint64_t)cf << 32 | cf,
    };
    const uint8_t *bits = f->bits + (uint32_t)g * f->height * f->row_bytes;
    volatile uint32_t *line =
        d->base + (uintptr_t)row * f->height * d->stride + (uintptr_t)col * f->width;
    unsigned w = f->width, rb = f->row_bytes, top = rb * 8 - 1;
    for (unsigned y = 0; y < f->height; y++, bits += rb, line += d->stride) {
        uint32_t r = 0;
        for (unsigned i = 0; i < rb; i++) {
            r = r << 8 | bits[i];
        }
        volatile uint64_t *p = (volatile uint64_t *)line;
        unsigned x = 0;
        for (; x + 1 < w; x += 2) {
            *p++ = pair[r >> (top - x - 1) & 3];
        }
        if (x < w) {
            line[x] = (r >> (top - x) & 1) ? cf : cb;
        }
    }
}

void fbdraw_fill(const struct fbdraw *d, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                 uint8_t colour) {
    uint32_t c = d->palette[colour];
    for (uint32_t j = 0; j < h && y + j < d->height; j++) {
        volatile uint32_t *line = d->base + (uintptr_t)(y + j) * d->stride;
        for (uint32_t i = 0; i < w && x + i < d->width; i++) {
            line[x + i] = c;
        }
    }
}
