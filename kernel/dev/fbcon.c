// SPDX-License-Identifier: MIT
// The screen console end: the framebuffer's geometry and font, the cell memory, and when
// to draw. Drawing compares each cell of a dirty row with what was last drawn there (a
// second copy in RAM: the framebuffer is never read) and draws only the difference.
//
// The cost is bounded. Writes and flushes draw at once only when the last draw ended at
// least KFBCON_REDRAW_MS ago and KFBCON_DRAW_SHARE times its own length ago, so drawing
// takes a bounded share of the time however much is printed (10,000 lines scroll the
// cells 10,000 times but redraw the screen only a few times). What a skipped draw left
// is drawn from the timer tick, at most KFBCON_TICK_PIXELS pixels a tick (interrupts
// are off there), unless the console is being written at that moment.
#include "fbcon.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "fbcon_draw.h"
#include "fbcon_font.h"
#include "fbcon_term.h"

static struct {
    bool registered, started;
    struct bootinfo_framebuffer fb;
    struct fbterm term;
    struct fbdraw draw;
    struct fbcell *shown;  // what the framebuffer shows, rows * cols, by screen row
    volatile bool busy;    // the main path is inside the console: the tick keeps off
    bool pending;          // cells changed since the last complete draw
    uint64_t next_draw;    // TSC before which no new draw starts
    char early[KFBCON_EARLY_BYTES];
    size_t early_len;
} con;

// ---- drawing --------------------------------------------------------------------------

static bool same(const struct fbcell *a, const struct fbcell *b) {
    return a->ch == b->ch && a->fg == b->fg && a->bg == b->bg && a->flags == b->flags;
}

// Draws the dirty rows, stopping after a row once `max_cells` cells were drawn; true
// when no dirty row is left.
static bool draw_dirty(uint64_t max_cells) {
    struct fbterm *t = &con.term;
    uint64_t drawn = 0;
    for (unsigned r = 0; r < t->rows; r++) {
        if (!t->dirty[r]) {
            continue;
        }
        if (drawn >= max_cells) {
            return false;
        }
        t->dirty[r] = 0;
        struct fbcell *shown = &con.shown[r * t->cols];
        for (unsigned c = 0; c < t->cols; c++) {
            struct fbcell want = *fbterm_cell(t, r, c);
            if (t->cursor_on && r == t->row && c == t->col) {
                want.flags = FBCELL_CURSOR;
            }
            if (same(&want, &shown[c])) {
                continue;
            }
            bool inv = want.flags & FBCELL_CURSOR;
            fbdraw_cell(&con.draw, r, c, kfont_glyph(con.draw.font, want.ch),
                        inv ? want.bg : want.fg, inv ? want.fg : want.bg);
            shown[c] = want;
            drawn++;
        }
    }
    return true;
}

// Draws if the rate allows it (or `now_anyway`); from the tick, only a slice.
static void draw(bool from_tick, bool now_anyway) {
    uint64_t start = arch_rdtsc();
    if (!con.pending || (!now_anyway && start < con.next_draw)) {
        return;
    }
    const struct kfont *f = con.draw.font;
    uint64_t slice =
        from_tick ? KFBCON_TICK_PIXELS / ((uint64_t)f->width * f->height) + 1 : UINT64_MAX;
    bool done = draw_dirty(slice);
    if (!done) {
        return;  // the next tick goes on
    }
    con.pending = false;
    uint64_t end = arch_rdtsc();
    uint64_t gap = ktime_tsc_hz() / 1000 * KFBCON_REDRAW_MS;
    uint64_t share = (end - start) * KFBCON_DRAW_SHARE;
    con.next_draw = end + (gap > share ? gap : share);
}

// ---- the console end ------------------------------------------------------------------

static void fb_write(const char *s, size_t len) {
    if (!con.started) {
        size_t room = sizeof con.early - con.early_len;
        size_t n = len < room ? len : room;
        memcpy(con.early + con.early_len, s, n);
        con.early_len += n;
        return;
    }
    con.busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fbterm_write(&con.term, (const uint8_t *)s, len);
    con.pending = true;
    draw(false, false);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    con.busy = false;
}

static void fb_flush(void) {
    if (!con.started) {
        return;
    }
    // With interrupts off (a fault, a stop) no tick will come to finish the job.
    bool now = !(arch_read_flags() & ARCH_RFLAGS_IF);
    con.busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    draw(false, now);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    con.busy = false;
}

static void fb_tick(void) {
    if (con.started && !con.busy) {
        draw(true, false);
    }
}

static const struct kcon_output fbcon_console = { "screen", fb_write, fb_flush };

// ---- bring-up ---------------------------------------------------------------------------

void fbcon_early(const struct bootinfo_framebuffer *fb) {
    if (!fb->base) {
        return;
    }
    con.fb = *fb;
    con.registered = true;
    kcon_add_output(&fbcon_console);
}

static const char *check_fb(const struct bootinfo_framebuffer *fb) {
    if (fb->format > 1) {
        return "its pixel format is not RGBX or BGRX";
    }
    if (fb->stride < fb->width) {
        return "its stride is less than its width";
    }
    if (fb->size && fb->size < (uint64_t)fb->stride * fb->height * 4) {
        return "it is smaller than stride x height x 4 bytes";
    }
    return NULL;
}

void fbcon_start(void) {
    const struct bootinfo_framebuffer *fb = &con.fb;
    if (!con.registered) {
        kprintf("kernel: screen: none (the loader found no linear framebuffer); console "
                "on serial only\n");
        return;
    }
    const char *why = check_fb(fb);
    const struct kfont *font = kfont_choose(fb->width, fb->height, KFBCON_MIN_COLS);
    unsigned cols = fb->width / font->width, rows = fb->height / font->height;
    if (!why && (cols < KFBCON_MIN_GRID_COLS || rows < KFBCON_MIN_GRID_ROWS)) {
        why = "it holds too few text cells";
    }
    uint64_t cells = (uint64_t)cols * rows;
    uint64_t bytes = 2 * cells * sizeof(struct fbcell) + rows;
    uint64_t mem = why ? 0 : mm_alloc_frames((bytes + KPAGE_SIZE - 1) / KPAGE_SIZE);
    if (!why && !mem) {
        why = "there is no memory for its cells";
    }
    if (why) {
        con.registered = false;
        kprintf("kernel: screen: not used: the framebuffer %ux%u stride %u format %u at "
                "0x%lx: %s; console on serial only\n",
                fb->width, fb->height, fb->stride, fb->format, fb->base, why);
        return;
    }
    struct fbcell *term_cells = (struct fbcell *)(uintptr_t)mem;
    con.shown = term_cells + cells;
    uint8_t *dirty = (uint8_t *)(con.shown + cells);
    fbdraw_init(&con.draw, (uintptr_t)fb->base, fb->width, fb->height, fb->stride, fb->format,
                font);
    fbterm_init(&con.term, term_cells, dirty, cols, rows);
    // The firmware's text goes: the whole screen, margins too, to the background.
    fbdraw_fill(&con.draw, 0, 0, fb->width, fb->height, FBTERM_DEFAULT_BG);
    for (uint64_t i = 0; i < cells; i++) {
        con.shown[i] = *fbterm_cell(&con.term, 0, 0);  // blank, as fbterm_init left it
    }
    con.started = true;
    con.pending = true;
    fb_write(con.early, con.early_len);
    kdev_add_poll(fb_tick);
    kprintf("kernel: screen %ux%u (stride %u, %s) at 0x%lx, font %s, %ux%u cells\n", fb->width,
            fb->height, fb->stride, fb->format ? "BGRX" : "RGBX", fb->base, font->name, cols, rows);
}

bool kcon_screen_size(unsigned *cols, unsigned *rows) {
    if (!con.started) {
        return false;
    }
    *cols = con.term.cols;
    *rows = con.term.rows;
    return true;
}

// The measurement behind kernel.console_bench(): the grid filled with a pattern and
// drawn whole (every cell), then one more line written so the grid scrolls by one and
// drawn again (every cell changes). Cycles of each draw; the pattern stays on screen.
bool kcon_screen_bench(uint64_t *full_cycles, uint64_t *scroll_cycles) {
    if (!con.started) {
        return false;
    }
    struct fbterm *t = &con.term;
    con.busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fbterm_write(t, (const uint8_t *)"\x1b[0m\x1b[H\x1b[2J", 11);
    for (unsigned r = 0; r < t->rows; r++) {
        for (unsigned c = 0; c < t->cols; c++) {
            uint8_t ch = (uint8_t)('!' + (r + c) % 94);
            fbterm_write(t, &ch, 1);
        }
    }
    uint64_t cells = (uint64_t)t->cols * t->rows;
    for (uint64_t i = 0; i < cells; i++) {
        con.shown[i].ch = 0xffffffffu;  // matches no cell: all are drawn
    }
    uint64_t t0 = arch_rdtsc();
    draw_dirty(UINT64_MAX);
    uint64_t t1 = arch_rdtsc();
    fbterm_write(t, (const uint8_t *)"\n", 1);
    for (unsigned c = 0; c < t->cols; c++) {
        uint8_t ch = (uint8_t)('!' + (t->rows + c) % 94);
        fbterm_write(t, &ch, 1);
    }
    uint64_t t2 = arch_rdtsc();
    draw_dirty(UINT64_MAX);
    uint64_t t3 = arch_rdtsc();
    con.pending = false;
    con.next_draw = t3;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    con.busy = false;
    *full_cycles = t1 - t0;
    *scroll_cycles = t3 - t2;
    return true;
}
