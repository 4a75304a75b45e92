# SPDX-License-Identifier: MIT
# Heat maps of a grid flavour as console text, cheap on a 115200-baud line: a colour
# escape only where the colour changes, blank stretches skipped with one cursor move,
# nothing after a line's last coloured cell. No imports from the kernel, so the drawing
# can be checked on the host.

# The eight levels in two palettes. The 16-colour SGR backgrounds are the default: an
# escape is 5 or 6 bytes where xterm-256's is 11, so a busy gradient stays cheap on a
# serial line, and every colour terminal (the Linux console too) has them. Level 0 is
# left as the terminal's own background; the legend shows it as black.
RAMP = (16, 52, 124, 196, 208, 220, 228, 231)      # xterm-256: black, reds, orange, yellow, white
RAMP16 = (40, 44, 41, 101, 43, 103, 47, 107)       # SGR: black, blue, reds, yellows, whites
SHADES = " .:-=+*#%@"
_RESET = "\x1b[0m"


def fit(w, h, cols, rows, zoomed=False, fill=False):
    """(columns, lines) to draw a w x h grid in cols x rows character cells. A grid that
    fits is drawn a cell per character; a larger one (or a zoomed region) is scaled
    keeping its shape, a character being about twice as tall as it is wide. fill=True
    stretches to the whole area instead."""
    if fill:
        return cols, rows
    if not zoomed and w <= cols and h <= rows:
        return w, h
    s = min(cols / w, 2.0 * rows / h)
    if not zoomed:
        s = min(s, 1.0)
    return max(1, min(cols, int(w * s + 0.5))), max(1, min(rows, int(h * s / 2 + 0.5)))


def _cuts(n, parts):
    # Integer boundaries splitting n cells into `parts` spans of one cell or more (when
    # parts > n, cells repeat: a zoomed view).
    return [(i * n // parts, max((i + 1) * n // parts, i * n // parts + 1))
            for i in range(parts)]


def sample(region, x0, y0, w, h, cols, lines):
    """Block means: region(x, y, w, h) -> (sum, ...) over the w x h area at (x0, y0),
    cut into cols x lines blocks. Returns the rows of means."""
    xs = _cuts(w, cols)
    out = []
    for a, b in _cuts(h, lines):
        row = []
        for c, d in xs:
            row.append(region(x0 + c, y0 + a, d - c, b - a)[0] / ((d - c) * (b - a)))
        out.append(row)
    return out


def quantise(rows, n, lo, hi):
    """Each mean as a level 0..n-1, linear from lo (level 0) to hi (level n-1)."""
    span = hi - lo
    if span <= 0:
        return [[0] * len(r) for r in rows]
    k = (n - 1) / span
    return [[int((v - lo) * k + 0.5) for v in r] for r in rows]


def escape(level, palette=16):
    """The escape that sets a level's background in a palette (16 or 256)."""
    if palette == 256:
        return "\x1b[48;5;%dm" % RAMP[level]
    return "\x1b[%dm" % RAMP16[level]


def colour_line(levels, clear=False, palette=16):
    """One row of levels as colour cells. The line starts at the terminal's background
    (clear=True erases it first, for drawing over an old picture)."""
    out = ["\x1b[K"] if clear else []
    cur = 0
    i, n = 0, len(levels)
    while i < n:
        lv = levels[i]
        if lv == 0:
            j = i
            while j < n and levels[j] == 0:
                j += 1
            if j == n:
                break                       # nothing after it: leave the rest alone
            if cur:
                out.append(_RESET)
                cur = 0
            out.append(" " * (j - i) if j - i < 4 else "\x1b[%dC" % (j - i))
            i = j
            continue
        if lv != cur:
            out.append(escape(lv, palette))
            cur = lv
        out.append(" ")
        i += 1
    if cur:
        out.append(_RESET)
    return "".join(out)


def ascii_line(levels):
    return "".join(SHADES[v] for v in levels)


def _palette(colour):
    return 256 if colour == 256 else 16


def picture(means, colour, clear=False):
    """The rows of means as lines of text, and (lo, hi) of the scale. colour: 0 or False
    for ASCII shades, 256 for xterm-256 cells, anything else for 16-colour cells."""
    lo = min(min(r) for r in means)
    hi = max(max(r) for r in means)
    if colour:
        lv = quantise(means, len(RAMP), lo, hi)
        return [colour_line(r, clear, _palette(colour)) for r in lv], lo, hi
    lv = quantise(means, len(SHADES), lo, hi)
    return [ascii_line(r) for r in lv], lo, hi


def scale(lo, hi, colour, num):
    """The legend: the ramp from lo to hi, and what one step of it is worth."""
    n = len(RAMP) if colour else len(SHADES)
    step = (hi - lo) / (n - 1)
    if colour:
        ramp = "".join(escape(i, _palette(colour)) + "  " for i in range(len(RAMP))) + _RESET
    else:
        ramp = "'" + SHADES + "'"
    return "scale %s %s %s  (%d levels, step %s)" % (num(lo), ramp, num(hi), n, num(step))
