#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads the text on a LociOS screen from an exact picture of it (QMP's screendump): each
cell is matched against the glyphs of the same PSF font the kernel draws with, read by
tools/build/psf2c.py, so the result is the text, not a guess. Standard library only.

    s = read(width, height, rgb)        # or read_qmp(q) with a tools/guest/qmp.Qmp
    s.lines()                           # the rows as strings, trailing blanks dropped
    s.cells[row][col]                   # (char, fg, bg), colours as (r, g, b)
    wait_text(q, r">>> $", timeout=30)  # poll the screen until the pattern shows

The font is the kernel's choice for the resolution (kernel/dev/fbcon_font.c: the
largest that still gives KFBCON_MIN_COLS columns, read from kernel/config.h). A cell
that matches no glyph reads as U+FFFD. A glyph and its inverse (such as a half block
and the other half block) look alike; such a cell reads as the one whose background is
the screen's most common colour. As a command: `screen.py FILE.ppm` prints the text.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a file: `tools` importable

from tools.build.psf2c import Font, load  # noqa: E402

FONT_DIR = Path("/usr/share/consolefonts")
# What kernel/kernel.mk converts (KFONT_FILES), smallest first.
FONT_FILES = ["spleen-8x16.psfu.gz", "spleen-12x24.psfu.gz", "spleen-16x32.psfu.gz"]
UNKNOWN = "\ufffd"

_fonts: dict[str, Font] = {}
_glyph_keys: dict[str, dict[tuple[int, ...], str]] = {}


def min_cols() -> int:
    text = (ROOT / "kernel" / "config.h").read_text()
    return int(re.search(r"#define KFBCON_MIN_COLS\s+(\d+)", text).group(1))


def fonts() -> list[Font]:
    for name in FONT_FILES:
        if name not in _fonts:
            _fonts[name] = load(FONT_DIR / name)
    return [_fonts[n] for n in FONT_FILES]


def choose_font(width: int, height: int) -> Font:
    """The kernel's choice (kfont_choose) for a screen of width x height pixels."""
    fs = fonts()
    best = fs[0]
    for f in fs[1:]:
        if width // f.width >= min_cols() and height // f.height >= 1:
            best = f
    return best


def glyph_keys(font: Font) -> dict[tuple[int, ...], str]:
    """Each distinct glyph bitmap (its rows) to the lowest code point drawn with it."""
    if font.name not in _glyph_keys:
        keys: dict[tuple[int, ...], str] = {}
        for cp, g in sorted(font.unicode.items()):
            keys.setdefault(tuple(font.rows(g)), chr(cp))
        _glyph_keys[font.name] = keys
    return _glyph_keys[font.name]


Colour = tuple[int, int, int]


@dataclass
class Screen:
    cols: int
    rows: int
    font: Font
    cells: list[list[tuple[str, Colour, Colour]]]

    def lines(self) -> list[str]:
        return ["".join(c[0] for c in row).rstrip() for row in self.cells]

    def text(self) -> str:
        return "\n".join(self.lines()).rstrip("\n")


def _bits(pixels: bytes, w: int, h: int, fg: bytes) -> tuple[int, ...]:
    rows = []
    for y in range(h):
        v = 0
        base = y * w * 3
        for x in range(w):
            v = v << 1 | (pixels[base + 3 * x:base + 3 * x + 3] == fg)
        rows.append(v)
    return tuple(rows)


def read(width: int, height: int, rgb: bytes, font: Font | None = None) -> Screen:
    font = font or choose_font(width, height)
    fw, fh = font.width, font.height
    cols, rows = width // fw, height // fh
    keys = glyph_keys(font)
    seen: dict[bytes, tuple[str, Colour, Colour]] = {}
    grid: list[list[bytes]] = []
    for r in range(rows):
        lines = [rgb[(r * fh + y) * width * 3:(r * fh + y + 1) * width * 3] for y in range(fh)]
        grid.append([b"".join(line[c * fw * 3:(c + 1) * fw * 3] for line in lines)
                     for c in range(cols)])
    # The most common colour of the top-left pixels: the screen's background.
    common = Counter(cell[:3] for row in grid for cell in row).most_common(1)[0][0]
    out = []
    for row in grid:
        decoded = []
        for px in row:
            hit = seen.get(px)
            if hit is None:
                hit = _decode(px, fw, fh, keys, common)
                seen[px] = hit
            decoded.append(hit)
        out.append(decoded)
    return Screen(cols, rows, font, out)


def _decode(px: bytes, fw: int, fh: int, keys, common: bytes):
    colours = list(dict.fromkeys(px[i:i + 3] for i in range(0, len(px), 3)))
    rgb = [tuple(c) for c in colours]
    if len(colours) == 1:
        return (" ", rgb[0], rgb[0])
    if len(colours) != 2:
        return (UNKNOWN, rgb[0], rgb[1])
    found = []
    for fg, bg in ((0, 1), (1, 0)):
        ch = keys.get(_bits(px, fw, fh, colours[fg]))
        if ch is not None:
            found.append((colours[bg] == common, ch, rgb[fg], rgb[bg]))
    if not found:
        return (UNKNOWN, rgb[0], rgb[1])
    found.sort(key=lambda f: not f[0])
    return found[0][1:]


def read_qmp(q) -> Screen:
    w, h, rgb = q.screen()
    return read(w, h, rgb)


def wait_text(q, pattern: str, timeout: float = 30, flags: int = re.M) -> Screen:
    """Screendumps until `pattern` (a regex over Screen.text()) matches; the screen then.
    Raises TimeoutError with the last text seen."""
    deadline = time.monotonic() + timeout
    while True:
        s = read_qmp(q)
        if re.search(pattern, s.text(), flags):
            return s
        if time.monotonic() > deadline:
            raise TimeoutError(f"{pattern!r} not on the screen within {timeout} s; it "
                               f"shows:\n{s.text()}")
        time.sleep(0.3)


def main(argv: list[str]) -> int:
    from tools.guest.qmp import read_ppm
    for path in argv:
        w, h, rgb = read_ppm(Path(path).read_bytes())
        print(read(w, h, rgb).text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
