# SPDX-License-Identifier: MIT
"""kernel/dev/fbcon_term.c on the host (cffi, under ubsan): the screen console's cells
after the bytes MicroPython's REPL writes — text and wrapping, CR/LF/BS/TAB, cursor
moves, erasing, SGR colours (16, 256, 24-bit), UTF-8 with U+FFFD for broken sequences,
scrolling through the ring of rows — and, under hypothesis, any bytes keep the cursor on
the grid and every cell a valid code point."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build import cffihost

DEV = Path(__file__).resolve().parents[2] / "kernel" / "dev"
COLS, ROWS = 20, 6


@pytest.fixture(scope="module")
def m():
    return cffihost.build("fbcon_term", [DEV / "fbcon_term.c"], [DEV / "fbcon_term.h"])


class Term:
    def __init__(self, m, cols=COLS, rows=ROWS):
        self.ffi, self.lib = m.ffi, m.lib
        self.cells = self.ffi.new("struct fbcell[]", cols * rows)
        self.dirty = self.ffi.new("uint8_t[]", rows)
        self.t = self.ffi.new("struct fbterm *")
        self.lib.fbterm_init(self.t, self.cells, self.dirty, cols, rows)

    def write(self, data: bytes | str) -> Term:
        if isinstance(data, str):
            data = data.encode()
        self.lib.fbterm_write(self.t, data, len(data))
        return self

    def cell(self, r: int, c: int):
        t = self.t
        phys = (t.top + r) % t.rows
        return self.cells[phys * t.cols + c]

    def line(self, r: int) -> str:
        return "".join(chr(self.cell(r, c).ch) for c in range(self.t.cols)).rstrip()

    def lines(self) -> list[str]:
        return [self.line(r) for r in range(self.t.rows)]

    @property
    def cursor(self):
        return self.t.row, self.t.col


def test_text_crlf_and_wrapping(m):
    t = Term(m).write("hello\r\nworld\n")
    assert t.lines()[:3] == ["hello", "world", ""]
    assert t.cursor == (2, 0)
    t = Term(m).write("x" * COLS)
    assert t.cursor == (0, COLS - 1) and t.t.wrap_pending   # waits at the last column
    t.write("y")
    assert t.lines()[:2] == ["x" * COLS, "y"]


def test_backspace_tab_and_cursor_moves(m):
    t = Term(m).write("abc\b\bX")
    assert t.line(0) == "aXc"
    t = Term(m).write("a\tb")
    assert t.cell(0, 8).ch == ord("b")
    t = Term(m).write("123456\x1b[3DX\x1b[2CY")
    assert t.line(0) == "123X56Y"
    t = Term(m).write("\x1b[3;5Hq\x1b[Hp")
    assert t.cell(2, 4).ch == ord("q") and t.cell(0, 0).ch == ord("p")
    assert Term(m).write("\x1b[99;99H").cursor == (ROWS - 1, COLS - 1)
    assert Term(m).write("ab\x1b[10D").cursor == (0, 0)


def test_the_repl_line_editing_sequences(m):
    # What readline writes for: type "12", cursor left, type "3" (insert, redraw, back).
    t = Term(m).write(">>> 12\b3\x1b[K2\b")
    assert t.line(0) == ">>> 132" and t.cursor == (0, 6)
    # Backspace at the end of a line: BS, redraw of the tail (nothing), erase to the end.
    t = Term(m).write(">>> 1+2\b\x1b[K3")
    assert t.line(0) == ">>> 1+3"


def test_erasing(m):
    t = Term(m).write("abcdef\x1b[3D\x1b[K")
    assert t.line(0) == "abc"
    t = Term(m).write("abcdef\x1b[3D\x1b[1K")
    assert t.line(0) == "    ef"
    t = Term(m).write("abcdef\x1b[2K")
    assert t.line(0) == ""
    t = Term(m).write("1\r\n2\r\n3\x1b[2;1H\x1b[J")
    assert t.lines()[:3] == ["1", "", ""]
    t = Term(m).write("1\r\n2\r\n3\x1b[2J")
    assert t.lines() == [""] * ROWS
    t = Term(m).write("abcdef\x1b[4D\x1b[2P")
    assert t.line(0) == "abef"
    t = Term(m).write("abcdef\x1b[4D\x1b[2@")
    assert t.line(0) == "ab  cdef"


def test_sgr_colours(m):
    t = Term(m).write("\x1b[31ma\x1b[1mb\x1b[0mc\x1b[44;97md\x1b[7me\x1b[m")
    cells = [t.cell(0, i) for i in range(5)]
    assert [(c.fg, c.bg) for c in cells] == [(1, 0), (9, 0), (7, 0), (15, 4), (4, 15)]
    t = Term(m).write("\x1b[38;5;208;48;5;21mx\x1b[39;49my")
    assert (t.cell(0, 0).fg, t.cell(0, 0).bg) == (208, 21)
    assert (t.cell(0, 1).fg, t.cell(0, 1).bg) == (7, 0)
    t = Term(m).write("\x1b[38;2;255;0;0mr\x1b[38;2;128;128;128mg\x1b[38;2;0;0;0mk")
    assert [t.cell(0, i).fg for i in range(3)] == [196, 244, 16]
    # The erase takes the current background.
    t = Term(m).write("\x1b[41m\x1b[2J")
    assert t.cell(3, 3).bg == 1


def test_utf8_and_broken_sequences(m):
    t = Term(m).write("é∑😀")
    assert [t.cell(0, i).ch for i in range(3)] == [0xE9, 0x2211, 0x1F600]
    bad = [b"\xc3(", b"\x80", b"\xe2\x88", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf5\x80\x80\x80",
           b"\xf4\x90\x80\x80", b"\xff"]
    for seq in bad:
        t = Term(m).write(seq + b"Z")
        chars = [t.cell(0, i).ch for i in range(6)]
        assert 0xFFFD in chars and ord("Z") in chars, (seq, chars)
        assert all(c in (0xFFFD, ord("Z"), ord("("), ord(" ")) for c in chars), (seq, chars)
    # A sequence split over two writes still decodes.
    t = Term(m).write(b"\xe2\x88").write(b"\x91")
    assert t.cell(0, 0).ch == 0x2211


def test_scrolling_keeps_the_last_rows_and_dirties_all(m):
    t = Term(m)
    for i in range(1000):
        t.write(f"line {i}\r\n")
    assert t.lines() == [f"line {i}" for i in range(1000 - ROWS + 1, 1000)] + [""]
    assert t.t.scrolled == 1000 - ROWS + 1
    assert all(t.dirty[r] for r in range(ROWS))


def test_escape_sequences_split_and_unknown_are_consumed(m):
    t = Term(m).write("\x1b[").write("3").write("1mR\x1b[?25lQ\x1b]0;title\x07")
    assert t.cell(0, 0).fg == 1 and t.line(0).startswith("RQ")
    assert not t.t.cursor_on
    t = Term(m).write("\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18mX")
    assert t.line(0) == "X"
    t = Term(m).write("\x1b(BA\x1bcB")
    assert t.line(0) == "B"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b"\x1b[", b"\x1b[5D", b"\x1b[K", b"\x1b[2J", b"\x1b[9999;9999H", b"\r\n",
                     b"\b", b"\t", b"\x1b[38;5;", b"\xe2\x88", b"\x1b[?25h", b"\x1b[3S",
                     b"\x1b[99P", b"\x1b[99@", b"\x1b[99X", b"\x1b8", b"\x1bM"]),
    st.text(max_size=20).map(str.encode)), max_size=30),
    st.integers(1, 12), st.integers(1, 5))
def test_any_bytes_keep_the_grid_sound(m, chunks, cols, rows):
    t = Term(m, cols, rows)
    for c in chunks:
        t.write(c)
    assert 0 <= t.t.row < rows and 0 <= t.t.col < cols and 0 <= t.t.top < rows
    for r in range(rows):
        for c in range(cols):
            ch = t.cell(r, c).ch
            assert 0x20 <= ch <= 0x10FFFF and not 0xD800 <= ch <= 0xDFFF, hex(ch)
