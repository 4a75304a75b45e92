// SPDX-License-Identifier: MIT
// Glyph drawing on a 32-bit linear framebuffer: one cell at a time, never reading the
// framebuffer back, four pixels per store from precomputed colour words. Plain C.
#ifndef LOCIOS_KERNEL_DEV_FBCON_DRAW_H
#define LOCIOS_KERNEL_DEV_FBCON_DRAW_H

#include <stdint.h>

#include "fbcon_font.h"

typedef uint32_t fbdraw_px4 __attribute__((vector_size(16)));  // four pixels

struct fbdraw {
    uint32_t *base;          // pixel (0, 0); written, never read
    uint32_t stride;         // pixels per scan line
    uint32_t width, height;  // pixels
    const struct kfont *font;
    uint32_t palette[256];  // the 256 terminal colours as framebuffer pixels
    // Four pixels for each 4-bit piece of a glyph row, in the colours nib_fg on nib_bg.
    fbdraw_px4 nib[16];
    uint8_t nib_fg, nib_bg, nib_valid;
};

// format: 0 = RGBX (red in the lowest byte), 1 = BGRX (boot/bootinfo.h).
void fbdraw_init(struct fbdraw *d, uintptr_t base, uint32_t width, uint32_t height, uint32_t stride,
                 uint32_t format, const struct kfont *font);
// The 0xRRGGBB value of palette entry i (the PC console's 16 colours, the 6x6x6 cube,
// the 24 greys).
uint32_t fbdraw_rgb(unsigned i);
// Glyph g of the font at cell (row, col), in palette colours fg on bg.
void fbdraw_cell(struct fbdraw *d, unsigned row, unsigned col, unsigned g, uint8_t fg, uint8_t bg);
// A rectangle of one palette colour (the margins right of and below the cell grid).
void fbdraw_fill(const struct fbdraw *d, uint32_t x, uint32_t y, uint32_t w, uint32_t h,
                 uint8_t colour);

#endif
