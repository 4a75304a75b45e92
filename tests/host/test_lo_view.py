# SPDX-License-Identifier: MIT
"""loci/python/lo_view.py, the heat-map drawing behind lo.show(), on the host: its
colour lines drawn through the screen console's own terminal (kernel/dev/fbcon_term.c)
paint every cell the colour of its level — over an old picture too, with clear=True —
while writing a colour escape only where the colour changes; the ASCII ramp keeps the
shades lo.show always had; fit() keeps a grid's shape. The console-size question
(lo_page.ASK) leaves the screen console as it was, and its answer parses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.host.test_fbcon_term import Term, m  # noqa: F401 - the fixture, shared

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "loci" / "python"))
import lo_page  # noqa: E402
import lo_view  # noqa: E402

COLS = 40
LEVELS = st.lists(st.integers(0, len(lo_view.RAMP) - 1), min_size=1, max_size=COLS)


PALETTES = pytest.mark.parametrize("palette", [16, 256])


def painted(t, row, n):
    return [t.cell(row, c).bg for c in range(n)]


def screen_colour(sgr):
    # The screen console's colour index of a 16-colour SGR background (40-47, 100-107).
    return sgr - 40 if sgr < 100 else sgr - 100 + 8


def expected(levels, palette):
    # Level 0 is the terminal's background: black (0) on the screen console.
    if palette == 256:
        return [0 if v == 0 else lo_view.RAMP[v] for v in levels]
    return [0 if v == 0 else screen_colour(lo_view.RAMP16[v]) for v in levels]


@PALETTES
@settings(max_examples=100, deadline=None)
@given(rows=st.lists(LEVELS, min_size=1, max_size=5))
def test_colour_lines_paint_each_cell_its_level(m, palette, rows):  # noqa: F811
    t = Term(m, cols=COLS + 1, rows=8)
    t.write("\r\n".join(lo_view.colour_line(r, palette=palette) for r in rows))
    for i, r in enumerate(rows):
        assert painted(t, i, len(r)) == expected(r, palette)
    # The line leaves the terminal at its default colours.
    assert (t.t.fg, t.t.bg) == (7, 0)


@PALETTES
@settings(max_examples=50, deadline=None)
@given(old=LEVELS, new=LEVELS)
def test_clear_draws_over_an_old_picture(m, palette, old, new):  # noqa: F811
    t = Term(m, cols=COLS + 1, rows=4)
    t.write(lo_view.colour_line([v or 1 for v in old], palette=palette) + "\r")
    t.write(lo_view.colour_line(new, clear=True, palette=palette))
    assert painted(t, 0, COLS) == expected(new + [0] * (COLS - len(new)), palette)


@PALETTES
@given(levels=LEVELS)
def test_an_escape_only_where_the_colour_changes(palette, levels):
    line = lo_view.colour_line(levels, palette=palette)
    runs = [v for i, v in enumerate(levels) if v and (i == 0 or levels[i - 1] != v)]
    escapes = {lo_view.escape(v, palette) for v in range(1, len(lo_view.RAMP))}
    assert sum(line.count(e) for e in escapes) == len(runs)
    # Blank stretches of four or more cost one cursor move, trailing ones nothing.
    per = 11 if palette == 256 else 6
    assert len(line) <= sum(1 for v in levels if v) + per * len(runs) + 5 * (len(runs) + 1)


def test_a_blank_row_is_empty_and_a_full_one_costs_one_escape():
    assert lo_view.colour_line([0] * 30) == ""
    assert lo_view.colour_line([7] * 30) == "\x1b[107m" + " " * 30 + "\x1b[0m"
    assert lo_view.colour_line([0] * 6 + [1]) == "\x1b[6C\x1b[44m \x1b[0m"
    assert lo_view.colour_line([7] * 3, palette=256) == "\x1b[48;5;231m   \x1b[0m"


def test_the_ascii_ramp_is_the_old_one():
    means = [[float(x) for x in range(20)]]
    lines, lo, hi = lo_view.picture(means, colour=False)
    assert (lo, hi) == (0.0, 19.0)
    assert lines == ["".join(" .:-=+*#%@"[int(x / 19 * 9 + 0.5)] for x in range(20))]


def test_fit_keeps_the_shape_and_the_console():
    assert lo_view.fit(20, 5, 79, 21) == (20, 5)          # fits: a cell per character
    assert lo_view.fit(71, 71, 79, 21) == (42, 21)        # twice as wide as tall
    assert lo_view.fit(10, 4, 79, 21, zoomed=True) == (79, 16)
    assert lo_view.fit(71, 71, 79, 21, fill=True) == (79, 21)
    for w, h in ((300, 7), (7, 300), (128, 128), (1, 1)):
        c, n = lo_view.fit(w, h, 79, 21)
        assert 1 <= c <= 79 and 1 <= n <= 21


def test_sample_covers_every_cell_once():
    grid = [[x + 100 * y for x in range(7)] for y in range(5)]

    def region(x, y, w, h):
        return (sum(grid[j][i] for j in range(y, y + h) for i in range(x, x + w)),)

    for cols, lines in ((7, 5), (3, 2), (14, 10), (1, 1)):
        means = lo_view.sample(region, 0, 0, 7, 5, cols, lines)
        assert len(means) == lines and all(len(r) == cols for r in means)
    assert lo_view.sample(region, 0, 0, 7, 5, 1, 1) == [[sum(map(sum, grid)) / 35]]


def test_the_size_question_leaves_the_screen_console_alone(m):  # noqa: F811
    t = Term(m).write("ab\r\ncd")
    before = (t.cursor, t.lines())
    t.write(lo_page.ASK)
    assert (t.cursor, t.lines()) == before


def test_the_terminal_answer_parses():
    assert lo_page.parse_report("\x1b[24;80R") == (80, 24)
    assert lo_page.parse_report("\x1b[50;160R") == (160, 50)
    for bad in ("", "\x1b[24R", "\x1b[;80R", "\x1b[0;80R", "24;80R", "\x1b[a;bR"):
        assert lo_page.parse_report(bad) is None, bad
