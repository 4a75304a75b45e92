#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PC screen fonts (PSF1 and PSF2, gzipped or not) to C for the kernel's screen console.

  psf2c.py -o OUT.c FONT.psfu.gz...   one C file with every font, smallest first

Each font becomes a `struct kfont` (kernel/dev/fbcon_font.h): its glyph bitmaps as PSF
stores them (rows top to bottom, `(width + 7) / 8` bytes a row, most significant bit
leftmost), a table from Unicode code points to glyphs sorted by code point, a direct
table for U+0000..U+00FF, and the glyph drawn for any code point the font lacks (its
U+FFFD, else its '?'). `kfonts[]` lists them by cell size, smallest first.

A file that is not a well-formed PSF, or a font that lacks printable ASCII or a
replacement glyph, stops the conversion with a message naming the file and the fault
(exit status 1). `parse()` is also what tools/guest/screen.py reads fonts with.
"""

from __future__ import annotations

import argparse
import gzip
import struct
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

PSF1_MAGIC = b"\x36\x04"
PSF1_MODE512 = 0x01
PSF1_MODEHASTAB = 0x02
PSF1_MODESEQ = 0x04
PSF1_SEPARATOR = 0xFFFF
PSF1_STARTSEQ = 0xFFFE

PSF2_MAGIC = b"\x72\xb5\x4a\x86"
PSF2_HEADER = struct.Struct("<4sIIIIIII")
PSF2_HAS_UNICODE_TABLE = 0x01
PSF2_SEPARATOR = 0xFF
PSF2_STARTSEQ = 0xFE

MAX_DIM = 64            # cell width and height the kernel draws (and a sane bound)
MAX_GLYPHS = 65536
REPLACEMENT = 0xFFFD
ASCII_PRINTABLE = range(0x20, 0x7F)


class FontError(Exception):
    """A font that cannot be used; the message says what is wrong with it."""


@dataclass
class Font:
    name: str
    width: int
    height: int
    glyphs: list[bytes]                                    # row_bytes * height bytes each
    unicode: dict[int, int] = field(default_factory=dict)  # code point -> glyph index
    replacement: int = 0                                   # glyph for missing code points

    @property
    def row_bytes(self) -> int:
        return (self.width + 7) // 8

    def glyph_for(self, cp: int) -> int:
        return self.unicode.get(cp, self.replacement)

    def rows(self, glyph: int) -> list[int]:
        """The glyph's rows as integers, bit (width - 1 - x) set where pixel x is lit."""
        g, rb = self.glyphs[glyph], self.row_bytes
        shift = 8 * rb - self.width
        return [int.from_bytes(g[y * rb:(y + 1) * rb], "big") >> shift
                for y in range(self.height)]


def _unpack(data: bytes, what: str) -> bytes:
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise FontError(f"{what}: gzip data is damaged ({e})") from None


def _psf1_table(table: bytes, count: int, what: str) -> list[list[int]]:
    if len(table) % 2:
        raise FontError(f"{what}: PSF1 unicode table has an odd length ({len(table)} bytes)")
    words = struct.unpack(f"<{len(table) // 2}H", table)
    out: list[list[int]] = []
    cur: list[int] = []
    in_seq = False
    for w in words:
        if len(out) == count:
            break
        if w == PSF1_SEPARATOR:
            out.append(cur)
            cur, in_seq = [], False
        elif w == PSF1_STARTSEQ:
            in_seq = True
        elif not in_seq:
            if 0xD800 <= w <= 0xDFFF:
                raise FontError(f"{what}: PSF1 unicode table entry {len(out)} holds the "
                                f"surrogate U+{w:04X}")
            cur.append(w)
    if len(out) < count:
        raise FontError(f"{what}: PSF1 unicode table ends after {len(out)} of {count} "
                        "glyph entries (each must end with 0xFFFF)")
    return out


def _psf2_table(table: bytes, count: int, what: str) -> list[list[int]]:
    out: list[list[int]] = []
    pos = 0
    while len(out) < count:
        end = table.find(bytes([PSF2_SEPARATOR]), pos)
        if end < 0:
            raise FontError(f"{what}: PSF2 unicode table ends after {len(out)} of {count} "
                            "glyph entries (each must end with 0xFF)")
        entry = table[pos:end]
        singles = entry.split(bytes([PSF2_STARTSEQ]), 1)[0]
        try:
            text = singles.decode("utf-8")
        except UnicodeDecodeError as e:
            raise FontError(f"{what}: PSF2 unicode table entry {len(out)} is not UTF-8 "
                            f"({e.reason} at byte {pos + e.start} of the table)") from None
        out.append([ord(c) for c in text])
        pos = end + 1
    return out


def parse(data: bytes, name: str = "font") -> Font:
    """A PSF1 or PSF2 font (gzipped or not); raises FontError naming what is wrong."""
    data = _unpack(data, name)
    if data[:2] == PSF1_MAGIC:
        if len(data) < 4:
            raise FontError(f"{name}: PSF1 header cut short ({len(data)} of 4 bytes)")
        mode, charsize = data[2], data[3]
        if mode & ~(PSF1_MODE512 | PSF1_MODEHASTAB | PSF1_MODESEQ):
            raise FontError(f"{name}: PSF1 mode byte 0x{mode:02x} has unknown bits")
        count = 512 if mode & PSF1_MODE512 else 256
        width, height, charsize_want, hdr = 8, charsize, charsize, 4
        has_table = bool(mode & (PSF1_MODEHASTAB | PSF1_MODESEQ))
        kind = "PSF1"
    elif data[:4] == PSF2_MAGIC:
        if len(data) < PSF2_HEADER.size:
            raise FontError(f"{name}: PSF2 header cut short ({len(data)} of "
                            f"{PSF2_HEADER.size} bytes)")
        _, version, hdr, flags, count, charsize, height, width = PSF2_HEADER.unpack_from(data)
        if version != 0:
            raise FontError(f"{name}: PSF2 version {version}; only version 0 exists")
        if hdr < PSF2_HEADER.size or hdr > len(data):
            raise FontError(f"{name}: PSF2 header size {hdr} is outside [32, {len(data)}]")
        charsize_want = height * ((width + 7) // 8)
        has_table = bool(flags & PSF2_HAS_UNICODE_TABLE)
        kind = "PSF2"
    else:
        raise FontError(f"{name}: not a PSF font (starts {data[:4].hex()}; PSF1 starts 3604, "
                        "PSF2 72b54a86)")
    if not (1 <= width <= MAX_DIM and 1 <= height <= MAX_DIM):
        raise FontError(f"{name}: {kind} glyphs of {width}x{height} pixels; the console "
                        f"draws 1x1 to {MAX_DIM}x{MAX_DIM}")
    if charsize != charsize_want:
        raise FontError(f"{name}: {kind} glyph size {charsize} bytes, but {width}x{height} "
                        f"needs {charsize_want}")
    if not 1 <= count <= MAX_GLYPHS:
        raise FontError(f"{name}: {kind} glyph count {count} outside [1, {MAX_GLYPHS}]")
    end = hdr + count * charsize
    if end > len(data):
        raise FontError(f"{name}: {kind} file cut short: {count} glyphs of {charsize} bytes "
                        f"need {end} bytes, the file has {len(data)}")
    glyphs = [bytes(data[hdr + i * charsize:hdr + (i + 1) * charsize]) for i in range(count)]
    if has_table:
        entries = (_psf1_table if kind == "PSF1" else _psf2_table)(data[end:], count, name)
    else:
        # No table: glyph i shows character i; only ASCII means the same in every encoding.
        entries = [[i] if i < 0x80 else [] for i in range(count)]
    unicode: dict[int, int] = {}
    for glyph, cps in enumerate(entries):
        for cp in cps:
            unicode.setdefault(cp, glyph)   # a code point listed twice keeps its first glyph
    missing = [cp for cp in ASCII_PRINTABLE if cp not in unicode]
    if missing:
        shown = "".join(chr(c) for c in missing[:20])
        raise FontError(f"{name}: the font lacks {len(missing)} printable ASCII characters "
                        f"({shown!r}...); the console needs all of U+0020..U+007E")
    replacement = unicode.get(REPLACEMENT, unicode[ord("?")])
    return Font(name, width, height, glyphs, unicode, replacement)


def load(path: Path) -> Font:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FontError(f"{path}: cannot read it ({e.strerror})") from None
    return parse(data, str(path))


# ---- C output --------------------------------------------------------------------------


def _c_bytes(data: bytes, indent: str = "    ", per_line: int = 16) -> str:
    lines = []
    for i in range(0, len(data), per_line):
        lines.append(indent + ", ".join(f"0x{b:02x}" for b in data[i:i + per_line]) + ",")
    return "\n".join(lines)


def c_source(fonts: list[Font], sources: list[str]) -> str:
    fonts = sorted(fonts, key=lambda f: (f.width * f.height, f.width))
    out = ["// Generated by tools/build/psf2c.py from " + ", ".join(sources) + ".",
           "// Do not edit: the build makes it again from the font files.",
           '#include "dev/fbcon_font.h"', ""]
    names = []
    for f in fonts:
        tag = f"{f.width}x{f.height}"
        names.append(f"kfont_{tag}")
        ascii_tab = [f.glyph_for(cp) for cp in range(256)]
        pairs = sorted((cp, g) for cp, g in f.unicode.items() if cp >= 256)
        out.append(f"static const uint8_t bits_{tag}[] = {{")
        out.append(_c_bytes(b"".join(f.glyphs)))
        out.append("};")
        out.append(f"static const uint16_t latin_{tag}[256] = {{")
        for i in range(0, 256, 16):
            out.append("    " + ", ".join(str(g) for g in ascii_tab[i:i + 16]) + ",")
        out.append("};")
        out.append(f"static const struct kfont_map map_{tag}[] = {{")
        for i in range(0, len(pairs), 6):
            out.append("    " + " ".join(f"{{ 0x{cp:x}, {g} }}," for cp, g in pairs[i:i + 6]))
        if not pairs:
            out.append("    { 0, 0 },")
        out.append("};")
        out.append(f"const struct kfont kfont_{tag} = {{")
        out.append(f'    .name = "{Path(f.name).name}",')
        out.append(f"    .width = {f.width},")
        out.append(f"    .height = {f.height},")
        out.append(f"    .row_bytes = {f.row_bytes},")
        out.append(f"    .glyph_count = {len(f.glyphs)},")
        out.append(f"    .replacement = {f.replacement},")
        out.append(f"    .bits = bits_{tag},")
        out.append(f"    .latin = latin_{tag},")
        out.append(f"    .map = map_{tag},")
        out.append(f"    .map_count = {len(pairs)},")
        out.append("};")
        out.append("")
    out.append("const struct kfont *const kfonts[] = { "
               + ", ".join("&" + n for n in names) + " };")
    out.append(f"const unsigned kfont_count = {len(fonts)};")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fonts", nargs="+", type=Path, help="PSF1/PSF2 files (.psf, .psfu, .gz)")
    ap.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        fonts = [load(p) for p in args.fonts]
    except FontError as e:
        print(f"psf2c: error: {e}", file=sys.stderr)
        return 1
    sizes = [(f.width, f.height) for f in fonts]
    if len(set(sizes)) != len(sizes):
        print(f"psf2c: error: two fonts have the same cell size ({sizes})", file=sys.stderr)
        return 1
    text = c_source(fonts, [p.name for p in args.fonts])
    tmp = args.output.with_suffix(args.output.suffix + ".tmp")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(text)
    tmp.replace(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
