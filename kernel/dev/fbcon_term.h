// SPDX-License-Identifier: MIT
// The screen console's text model: a grid of cells (code point, foreground, background)
// in RAM and the terminal that writes into it — UTF-8 decoding and the VT100/ANSI subset
// MicroPython's REPL and the field pictures use. It never draws: fbcon.c draws the rows
// it marks dirty. Plain C with no kernel calls, so the host tests drive it directly.
//
// Understood: CR, LF (also returns the carriage, as the serial console is written),
// BS, TAB, BEL (ignored); ESC 7 / ESC 8 (save/restore cursor), ESC D / ESC E / ESC M,
// ESC c (reset); CSI n A/B/C/D/E/F/G/d, CSI r;c H and f, CSI n J and K (0, 1, 2),
// CSI n @/P/X (insert, delete, erase characters), CSI n S (scroll up), CSI s / CSI u,
// CSI ?25 h/l (cursor on/off), SGR (CSI ... m): 0, 1, 22, 7, 27, 30-37, 39, 40-47, 49,
// 90-97, 100-107, 38;5;n and 48;5;n (256 colours), 38;2;r;g;b and 48;2;r;g;b (to the
// nearest of the 256). Any other sequence is consumed and ignored.
#ifndef LOCIOS_KERNEL_DEV_FBCON_TERM_H
#define LOCIOS_KERNEL_DEV_FBCON_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FBTERM_MAX_PARAMS  16
#define FBTERM_PARAM_MAX   9999
#define FBTERM_TAB         8
#define FBTERM_DEFAULT_FG  7  // palette indices (the PC console's light grey on black)
#define FBTERM_DEFAULT_BG  0
#define FBTERM_REPLACEMENT 0xfffdu

struct fbcell {
    uint32_t ch;     // Unicode code point
    uint8_t fg, bg;  // 256-colour palette indices, bold and reverse already applied
    uint8_t flags;   // FBCELL_*: set by whoever draws, never by the terminal
    uint8_t pad;
};
#define FBCELL_CURSOR 0x01  // drawn with foreground and background swapped

struct fbterm {
    unsigned cols, rows;
    struct fbcell *cells;  // rows * cols; screen row r is stored at row (top + r) % rows
    uint8_t *dirty;        // rows entries, by screen row: changed since fbterm_clean
    unsigned top;
    unsigned row, col;  // the cursor
    bool wrap_pending;  // the last column was written: the next character wraps
    bool cursor_on;
    unsigned saved_row, saved_col;
    uint8_t fg, bg;  // as set by SGR, before bold and reverse
    bool bold, reverse;
    // parser
    uint8_t state;
    bool private_mark;
    unsigned nparams;
    unsigned params[FBTERM_MAX_PARAMS];
    uint32_t u_cp;      // UTF-8 code point being assembled
    uint8_t u_need;     // continuation bytes still expected
    uint8_t u_len;      // length of the sequence being assembled
    uint64_t scrolled;  // lines scrolled off the top since init
};

// cells: rows * cols entries, dirty: rows bytes, both owned by the caller. Clears the
// grid, homes the cursor, marks every row dirty.
void fbterm_init(struct fbterm *t, struct fbcell *cells, uint8_t *dirty, unsigned cols,
                 unsigned rows);
void fbterm_write(struct fbterm *t, const uint8_t *s, size_t len);
// The cell at screen row r, column c.
static inline const struct fbcell *fbterm_cell(const struct fbterm *t, unsigned r, unsigned c) {
    unsigned phys = t->top + r;
    if (phys >= t->rows) {
        phys -= t->rows;
    }
    return &t->cells[phys * t->cols + c];
}

#endif
