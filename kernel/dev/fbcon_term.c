// SPDX-License-Identifier: MIT
// The screen console's terminal: bytes in (UTF-8, control characters, escape sequences;
// fbcon_term.h lists what is understood), cells out. Scrolling moves the grid's first
// row (a ring of rows), so a line costs the clearing of one row, not a copy of them all.
#include "fbcon_term.h"

enum {
    ST_GROUND,
    ST_ESC,
    ST_ESC_SKIP,  // ESC ( x, ESC ) x, ESC # x: one more byte, ignored
    ST_CSI,
    ST_CSI_IGNORE,  // a malformed CSI: consumed up to its final byte
};

static void mark(struct fbterm *t, unsigned r) {
    t->dirty[r] = 1;
}

static void mark_all(struct fbterm *t) {
    for (unsigned r = 0; r < t->rows; r++) {
        t->dirty[r] = 1;
    }
}

static struct fbcell *cell_at(struct fbterm *t, unsigned r, unsigned c) {
    return (struct fbcell *)fbterm_cell(t, r, c);
}

static struct fbcell blank(const struct fbterm *t) {
    // Erased cells take the current background, as xterm does; no reverse, no bold.
    return (struct fbcell){ .ch = ' ', .fg = t->fg, .bg = t->bg };
}

static void clear_cells(struct fbterm *t, unsigned r, unsigned from, unsigned to) {
    struct fbcell b = blank(t);
    for (unsigned c = from; c < to; c++) {
        *cell_at(t, r, c) = b;
    }
    mark(t, r);
}

// The cursor moves: the rows it leaves and enters are redrawn (the cursor is drawn).
static void move_to(struct fbterm *t, unsigned r, unsigned c) {
    mark(t, t->row);
    t->row = r < t->rows ? r : t->rows - 1;
    t->col = c < t->cols ? c : t->cols - 1;
    t->wrap_pending = false;
    mark(t, t->row);
}

static void scroll_up(struct fbterm *t, unsigned n) {
    if (n > t->rows) {
        n = t->rows;
    }
    for (unsigned i = 0; i < n; i++) {
        t->top = t->top + 1 == t->rows ? 0 : t->top + 1;
        clear_cells(t, t->rows - 1, 0, t->cols);
        t->scrolled++;
    }
    mark_all(t);
}

static void line_feed(struct fbterm *t) {
    if (t->row + 1 == t->rows) {
        scroll_up(t, 1);
        move_to(t, t->row, t->col);
    } else {
        move_to(t, t->row + 1, t->col);
    }
}

static void reset_attrs(struct fbterm *t) {
    t->fg = FBTERM_DEFAULT_FG;
    t->bg = FBTERM_DEFAULT_BG;
    t->bold = t->reverse = false;
}

static void reset(struct fbterm *t) {
    reset_attrs(t);
    t->top = 0;
    t->row = t->col = 0;
    t->saved_row = t->saved_col = 0;
    t->wrap_pending = false;
    t->cursor_on = true;
    for (unsigned r = 0; r < t->rows; r++) {
        clear_cells(t, r, 0, t->cols);
    }
}

void fbterm_init(struct fbterm *t, struct fbcell *cells, uint8_t *dirty, unsigned cols,
                 unsigned rows) {
    *t = (struct fbterm){ .cols = cols, .rows = rows, .cells = cells, .dirty = dirty };
    reset(t);
}

static void put_char(struct fbterm *t, uint32_t cp) {
    if (t->wrap_pending) {
        t->col = 0;
        line_feed(t);
    }
    uint8_t fg = t->bold && t->fg < 8 ? (uint8_t)(t->fg + 8) : t->fg;
    uint8_t bg = t->bg;
    if (t->reverse) {
        uint8_t x = fg;
        fg = bg;
        bg = x;
    }
    *cell_at(t, t->row, t->col) = (struct fbcell){ .ch = cp, .fg = fg, .bg = bg };
    mark(t, t->row);
    if (t->col + 1 == t->cols) {
        t->wrap_pending = true;
    } else {
        t->col++;
    }
}

// ---- CSI ---------------------------------------------------------------------------------

static unsigned param(const struct fbterm *t, unsigned i, unsigned dflt) {
    return i < t->nparams && t->params[i] ? t->params[i] : dflt;
}

// 24-bit colour to the nearest entry of the 6x6x6 cube or the grey ramp.
static uint8_t nearest_256(unsigned r, unsigned g, unsigned b) {
    static const uint8_t level[6] = { 0, 95, 135, 175, 215, 255 };
    unsigned idx[3], v[3] = { r > 255 ? 255 : r, g > 255 ? 255 : g, b > 255 ? 255 : b };
    unsigned cube_err = 0;
    for (int k = 0; k < 3; k++) {
        unsigned best = 0, err = 1u << 20;
        for (unsigned i = 0; i < 6; i++) {
            unsigned d = v[k] > level[i] ? v[k] - level[i] : level[i] - v[k];
            if (d < err) {
                err = d;
                best = i;
            }
        }
        idx[k] = best;
        cube_err += err * err;
    }
    unsigned avg = (v[0] + v[1] + v[2]) / 3;
    unsigned gi = avg < 8 ? 0 : (avg - 8) / 10 > 23 ? 23 : (avg - 8) / 10;
    unsigned grey = 8 + 10 * gi, grey_err = 0;
    for (int k = 0; k < 3; k++) {
        unsigned d = v[k] > grey ? v[k] - grey : grey - v[k];
        grey_err += d * d;
    }
    if (grey_err < cube_err) {
        return (uint8_t)(232 + gi);
    }
    return (uint8_t)(16 + 36 * idx[0] + 6 * idx[1] + idx[2]);
}

// 38;5;n / 38;2;r;g;b (and 48;...) starting at params[i]; returns the parameters used.
static unsigned extended_colour(const struct fbterm *t, unsigned i, uint8_t *out) {
    if (i + 1 < t->nparams && t->params[i + 1] == 5) {
        if (i + 2 < t->nparams) {
            *out = (uint8_t)(t->params[i + 2] > 255 ? 255 : t->params[i + 2]);
        }
        return 3;
    }
    if (i + 1 < t->nparams && t->params[i + 1] == 2) {
        if (i + 4 < t->nparams) {
            *out = nearest_256(t->params[i + 2], t->params[i + 3], t->params[i + 4]);
        }
        return 5;
    }
    return 1;
}

static void sgr(struct fbterm *t) {
    if (t->nparams == 0) {
        reset_attrs(t);
        return;
    }
    for (unsigned i = 0; i < t->nparams;) {
        unsigned p = t->params[i];
        unsigned used = 1;
        if (p == 0) {
            reset_attrs(t);
        } else if (p == 1) {
            t->bold = true;
        } else if (p == 22) {
            t->bold = false;
        } else if (p == 7) {
            t->reverse = true;
        } else if (p == 27) {
            t->reverse = false;
        } else if (p >= 30 && p <= 37) {
            t->fg = (uint8_t)(p - 30);
        } else if (p == 39) {
            t->fg = FBTERM_DEFAULT_FG;
        } else if (p >= 40 && p <= 47) {
            t->bg = (uint8_t)(p - 40);
        } else if (p == 49) {
            t->bg = FBTERM_DEFAULT_BG;
        } else if (p >= 90 && p <= 97) {
            t->fg = (uint8_t)(p - 90 + 8);
        } else if (p >= 100 && p <= 107) {
            t->bg = (uint8_t)(p - 100 + 8);
        } else if (p == 38) {
            used = extended_colour(t, i, &t->fg);
        } else if (p == 48) {
            used = extended_colour(t, i, &t->bg);
        }
        i += used;
    }
}

static void erase_display(struct fbterm *t, unsigned how) {
    if (how == 0) {
        clear_cells(t, t->row, t->col, t->cols);
        for (unsigned r = t->row + 1; r < t->rows; r++) {
            clear_cells(t, r, 0, t->cols);
        }
    } else if (how == 1) {
        for (unsigned r = 0; r < t->row; r++) {
            clear_cells(t, r, 0, t->cols);
        }
        clear_cells(t, t->row, 0, t->col + 1);
    } else if (how == 2 || how == 3) {
        for (unsigned r = 0; r < t->rows; r++) {
            clear_cells(t, r, 0, t->cols);
        }
    }
}

static void erase_line(struct fbterm *t, unsigned how) {
    if (how == 0) {
        clear_cells(t, t->row, t->col, t->cols);
    } else if (how == 1) {
        clear_cells(t, t->row, 0, t->col + 1);
    } else if (how == 2) {
        clear_cells(t, t->row, 0, t->cols);
    }
}

// Insert (n > 0 shifts right) or delete (shifts left) characters at the cursor.
static void shift_chars(struct fbterm *t, unsigned n, bool insert) {
    unsigned room = t->cols - t->col;
    if (n > room) {
        n = room;
    }
    if (insert) {
        for (unsigned c = t->cols; c-- > t->col + n;) {
            *cell_at(t, t->row, c) = *cell_at(t, t->row, c - n);
        }
        clear_cells(t, t->row, t->col, t->col + n);
    } else {
        for (unsigned c = t->col; c + n < t->cols; c++) {
            *cell_at(t, t->row, c) = *cell_at(t, t->row, c + n);
        }
        clear_cells(t, t->row, t->cols - n, t->cols);
    }
}

static void csi_dispatch(struct fbterm *t, uint8_t final) {
    unsigned n = param(t, 0, 1);
    if (t->private_mark) {
        if ((final == 'h' || final == 'l') && param(t, 0, 0) == 25) {
            t->cursor_on = final == 'h';
            mark(t, t->row);
        }
        return;
    }
    switch (final) {
        case 'A':
            move_to(t, t->row > n ? t->row - n : 0, t->col);
            break;
        case 'B':
            move_to(t, t->row + n, t->col);
            break;
        case 'C':
            move_to(t, t->row, t->col + n);
            break;
        case 'D':
            move_to(t, t->row, t->col > n ? t->col - n : 0);
            break;
        case 'E':
            move_to(t, t->row + n, 0);
            break;
        case 'F':
            move_to(t, t->row > n ? t->row - n : 0, 0);
            break;
        case 'G':
            move_to(t, t->row, n - 1);
            break;
        case 'd':
            move_to(t, n - 1, t->col);
            break;
        case 'H':
        case 'f':
            move_to(t, param(t, 0, 1) - 1, param(t, 1, 1) - 1);
            break;
        case 'J':
            erase_display(t, param(t, 0, 0));
            t->wrap_pending = false;
            break;
        case 'K':
            erase_line(t, param(t, 0, 0));
            t->wrap_pending = false;
            break;
        case '@':
            shift_chars(t, n, true);
            break;
        case 'P':
            shift_chars(t, n, false);
            break;
        case 'X':
            clear_cells(t, t->row, t->col, t->col + n < t->cols ? t->col + n : t->cols);
            break;
        case 'S':
            scroll_up(t, n);
            break;
        case 'm':
            sgr(t);
            break;
        case 's':
            t->saved_row = t->row;
            t->saved_col = t->col;
            break;
        case 'u':
            move_to(t, t->saved_row, t->saved_col);
            break;
        default:
            break;
    }
}

// ---- bytes ---------------------------------------------------------------------------------

static void control(struct fbterm *t, uint8_t b) {
    switch (b) {
        case '\r':
            move_to(t, t->row, 0);
            break;
        case '\n':
        case '\v':
        case '\f':
            t->col = 0;
            line_feed(t);
            break;
        case '\b':
            move_to(t, t->row, t->col > 0 ? t->col - 1 : 0);
            break;
        case '\t': {
            unsigned next = (t->col / FBTERM_TAB + 1) * FBTERM_TAB;
            move_to(t, t->row, next < t->cols ? next : t->cols - 1);
            break;
        }
        case 0x18:  // CAN and SUB end an escape sequence
        case 0x1a:
            t->state = ST_GROUND;
            break;
        case 0x1b:
            t->state = ST_ESC;
            break;
        default:  // BEL, NUL and the rest: nothing to draw
            break;
    }
}

static void esc(struct fbterm *t, uint8_t b) {
    t->state = ST_GROUND;
    switch (b) {
        case '[':
            t->state = ST_CSI;
            t->nparams = 0;
            t->private_mark = false;
            break;
        case '(':
        case ')':
        case '#':
            t->state = ST_ESC_SKIP;
            break;
        case '7':
            t->saved_row = t->row;
            t->saved_col = t->col;
            break;
        case '8':
            move_to(t, t->saved_row, t->saved_col);
            break;
        case 'D':
            line_feed(t);
            break;
        case 'E':
            t->col = 0;
            line_feed(t);
            break;
        case 'M':
            move_to(t, t->row > 0 ? t->row - 1 : 0, t->col);
            break;
        case 'c':
            reset(t);
            break;
        default:
            break;
    }
}

static void csi(struct fbterm *t, uint8_t b) {
    if (b >= '0' && b <= '9') {
        if (t->nparams == 0) {
            t->nparams = 1;
            t->params[0] = 0;
        }
        unsigned *p = &t->params[t->nparams - 1];
        *p = *p * 10 + (b - '0');
        if (*p > FBTERM_PARAM_MAX) {
            *p = FBTERM_PARAM_MAX;
        }
    } else if (b == ';') {
        if (t->nparams == 0) {
            t->nparams = 1;
            t->params[0] = 0;
        }
        if (t->nparams == FBTERM_MAX_PARAMS) {
            t->state = ST_CSI_IGNORE;
            return;
        }
        t->params[t->nparams++] = 0;
    } else if (b == '?' && t->nparams == 0) {
        t->private_mark = true;
    } else if (b >= 0x40 && b <= 0x7e) {
        t->state = ST_GROUND;
        csi_dispatch(t, b);
    } else if (b >= 0x20 && b <= 0x3f) {
        t->state = ST_CSI_IGNORE;  // intermediates, ':' and late '?': not ours
    } else {
        t->state = ST_GROUND;  // not part of any sequence: drop the sequence
    }
}

// One byte >= 0x80 in ground state (fbterm_write has already ended a sequence that a
// non-continuation byte cut short); a broken sequence shows U+FFFD.
static void utf8(struct fbterm *t, uint8_t b) {
    if (t->u_need) {
        t->u_cp = t->u_cp << 6 | (b & 0x3f);
        if (--t->u_need == 0) {
            uint32_t cp = t->u_cp;
            bool overlong = (t->u_len == 2 && cp < 0x80) || (t->u_len == 3 && cp < 0x800) ||
                            (t->u_len == 4 && cp < 0x10000);
            bool bad = overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff);
            put_char(t, bad ? FBTERM_REPLACEMENT : cp);
        }
        return;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        t->u_cp = b & 0x1f;
        t->u_need = 1;
    } else if (b >= 0xe0 && b <= 0xef) {
        t->u_cp = b & 0x0f;
        t->u_need = 2;
    } else if (b >= 0xf0 && b <= 0xf4) {
        t->u_cp = b & 0x07;
        t->u_need = 3;
    } else {
        put_char(t, FBTERM_REPLACEMENT);  // stray continuation, C0/C1, F5..FF
        return;
    }
    t->u_len = (uint8_t)(t->u_need + 1);
}

void fbterm_write(struct fbterm *t, const uint8_t *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        uint8_t b = s[i];
        if (t->u_need && (b & 0xc0) != 0x80) {
            t->u_need = 0;  // a sequence cut short by this byte
            put_char(t, FBTERM_REPLACEMENT);
        }
        if (b < 0x20 || b == 0x7f) {
            if (b != 0x7f) {
                control(t, b);
            }
            continue;
        }
        switch (t->state) {
            case ST_ESC:
                esc(t, b);
                continue;
            case ST_ESC_SKIP:
                t->state = ST_GROUND;
                continue;
            case ST_CSI:
                csi(t, b);
                continue;
            case ST_CSI_IGNORE:
                if (b >= 0x40 && b <= 0x7e) {
                    t->state = ST_GROUND;
                }
                continue;
            default:
                break;
        }
        if (b < 0x80) {
            put_char(t, b);
        } else {
            utf8(t, b);
        }
    }
}
