# SPDX-License-Identifier: MIT
"""tools/build/psf2c.py: PSF1 and PSF2 fonts (with their unicode tables) to the kernel's
C, and kernel/dev/fbcon_font.c's lookup over that C. Good fonts parse to what they hold,
the generated C finds the same glyph as the parser for every code point, and broken
files stop with a message naming the fault (never another exception, under hypothesis)."""

from __future__ import annotations

import gzip
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build import cffihost
from tools.build.psf2c import FontError, c_source, load, parse

ROOT = Path(__file__).resolve().parents[2]
FONTS = Path("/usr/share/consolefonts")
SPLEEN = ["spleen-8x16.psfu.gz", "spleen-12x24.psfu.gz", "spleen-16x32.psfu.gz"]
ASCII = range(0x20, 0x7F)


def glyph(i: int, w: int, h: int) -> bytes:
    rb = (w + 7) // 8
    return bytes((i * 7 + y * 13) & 0xFF for y in range(h * rb))


def psf2(w: int, h: int, table: list[list[int]] | None, count: int | None = None,
         version: int = 0, charsize: int | None = None) -> bytes:
    count = len(table) if table is not None and count is None else (count or 128)
    rb = (w + 7) // 8
    charsize = h * rb if charsize is None else charsize
    head = struct.pack("<4sIIIIIII", b"\x72\xb5\x4a\x86", version, 32,
                       1 if table is not None else 0, count, charsize, h, w)
    body = b"".join(glyph(i, w, h) for i in range(count))
    tab = b""
    for cps in table or []:
        tab += "".join(chr(c) for c in cps).encode() + b"\xff"
    return head + body + tab


def psf1(h: int, table: list[list[int]] | None, count: int = 256) -> bytes:
    mode = (0x01 if count == 512 else 0) | (0x02 if table is not None else 0)
    body = b"".join(glyph(i, 8, h) for i in range(count))
    tab = b""
    for cps in table or []:
        tab += b"".join(struct.pack("<H", c) for c in cps) + b"\xff\xff"
    return bytes([0x36, 0x04, mode, h]) + body + tab


def ascii_table(count: int = 128, extra: dict[int, list[int]] | None = None) -> list[list[int]]:
    table = [[i] if 0x20 <= i < 0x7F else [] for i in range(count)]
    for g, cps in (extra or {}).items():
        table[g] = table[g] + cps
    return table


# ---- real fonts ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", SPLEEN)
def test_spleen_fonts_parse(name):
    f = load(FONTS / name)
    w, h = (int(x) for x in name.split("-")[1].split(".")[0].split("x"))
    assert (f.width, f.height) == (w, h)
    assert all(cp in f.unicode for cp in ASCII)
    assert f.replacement == f.unicode[0xFFFD]
    assert len(f.glyphs) == 512 and all(len(g) == f.row_bytes * h for g in f.glyphs)
    # A glyph is drawn from its rows: 'A' has pixels, ' ' none.
    assert any(f.rows(f.unicode[ord("A")])) and not any(f.rows(f.unicode[ord(" ")]))


def test_spleen_8x16_is_psf1_and_others_psf2():
    assert gzip.decompress((FONTS / SPLEEN[0]).read_bytes())[:2] == b"\x36\x04"
    assert gzip.decompress((FONTS / SPLEEN[1]).read_bytes())[:4] == b"\x72\xb5\x4a\x86"


@pytest.fixture(scope="module")
def fontlib(tmp_path_factory):
    """The kernel's font lookup (fbcon_font.c) over the C that psf2c makes of Spleen."""
    out = tmp_path_factory.mktemp("psf2c") / "fbcon_font_data.c"
    subprocess.run([sys.executable, str(ROOT / "tools/build/psf2c.py"), "-o", str(out),
                    *[str(FONTS / n) for n in SPLEEN]], check=True)
    return cffihost.build("fbcon_font", [ROOT / "kernel/dev/fbcon_font.c", out],
                          [ROOT / "kernel/dev/fbcon_font.h"],
                          include_dirs=[ROOT / "kernel/dev", ROOT / "kernel"])


def test_generated_c_finds_the_parsers_glyph_for_every_code_point(fontlib):
    lib = fontlib.lib
    assert lib.kfont_count == 3
    for i, name in enumerate(SPLEEN):
        f, k = load(FONTS / name), lib.kfonts[i]
        assert (k.width, k.height, k.row_bytes) == (f.width, f.height, f.row_bytes)
        for cp in [*range(0x300), *f.unicode, 0x4E00, 0x10FFFF, 0x1F600]:
            assert lib.kfont_glyph(k, cp) == f.glyph_for(cp), (name, hex(cp))
        bits = fontlib.ffi.buffer(k.bits, len(f.glyphs) * f.row_bytes * f.height)
        assert bytes(bits) == b"".join(f.glyphs)


def test_dashes_and_quotes_the_font_lacks_are_drawn_as_their_ascii_lookalikes(fontlib):
    lib = fontlib.lib
    for i, name in enumerate(SPLEEN):
        f, k = load(FONTS / name), lib.kfonts[i]
        for cp, ascii_ in {0x2014: "-", 0x2013: "-", 0x2212: "-", 0x2019: "'",
                           0x201C: '"', 0x2022: "*"}.items():
            want = f.glyph_for(cp) if cp in f.unicode else f.glyph_for(ord(ascii_))
            assert lib.kfont_glyph(k, cp) == want, (name, hex(cp))
        # Anything else the font lacks still shows the replacement glyph.
        assert lib.kfont_glyph(k, 0x2603) == f.glyph_for(0x2603) == k.replacement


def test_font_choice_by_resolution(fontlib):
    lib = fontlib.lib
    for (w, h), want in {(800, 600): 8, (1280, 800): 8, (1920, 1080): 12, (2560, 1440): 16,
                         (3840, 2160): 16, (640, 480): 8}.items():
        assert lib.kfont_choose(w, h, 160).width == want, (w, h)


# ---- synthetic fonts --------------------------------------------------------------------------

def test_psf2_with_unicode_table_round_trips():
    table = ascii_table(extra={1: [0xFFFD], 2: [0xE9, 0x2500]})
    f = parse(psf2(12, 24, table), "t")
    assert (f.width, f.height, f.row_bytes) == (12, 24, 2)
    assert f.unicode[0xE9] == 2 and f.unicode[0x2500] == 2 and f.replacement == 1
    assert f.glyphs[5] == glyph(5, 12, 24)


def test_psf1_512_with_table_and_sequences():
    table = ascii_table(512, {3: [0xFFFD]})
    data = bytearray(psf1(16, table, 512))
    f = parse(bytes(data), "t")
    assert len(f.glyphs) == 512 and f.width == 8 and f.replacement == 3
    # A combining sequence after 0xFFFE belongs to no single code point.
    seq = psf1(16, None, 256)[:4 + 256 * 16]
    seq = bytes([0x36, 0x04, 0x02, 16]) + seq[4:]
    tab = b""
    for i in range(256):
        cps = [i] if 0x20 <= i < 0x7F else []
        tab += b"".join(struct.pack("<H", c) for c in cps)
        if i == 0x41:
            tab += b"\xfe\xff" + struct.pack("<HH", 0x41, 0x301)
        tab += b"\xff\xff"
    f = parse(seq + tab, "t")
    assert f.unicode[0x41] == 0x41 and 0x301 not in f.unicode


def test_no_table_means_ascii_identity_and_question_mark_replacement():
    f = parse(psf2(8, 8, None, count=128), "t")
    assert f.unicode[ord("A")] == ord("A") and f.replacement == ord("?")
    assert 0xE9 not in f.unicode


def test_gzip_is_unpacked():
    assert parse(gzip.compress(psf2(8, 16, ascii_table())), "t").height == 16


@pytest.mark.parametrize("data, message", [
    (b"", "not a PSF font"),
    (b"hello world", "not a PSF font"),
    (b"\x36\x04\x02", "PSF1 header cut short"),
    (b"\x36\x04\x08\x10", "unknown bits"),
    (psf2(8, 16, ascii_table())[:20], "PSF2 header cut short"),
    (psf2(8, 16, ascii_table(), version=1), "PSF2 version 1"),
    (psf2(8, 16, ascii_table(), charsize=15), "glyph size 15 bytes, but 8x16 needs 16"),
    (psf2(8, 16, ascii_table())[:32 + 100], "file cut short"),
    (psf2(8, 16, ascii_table())[:-1], "unicode table ends after 127 of 128"),
    (psf2(8, 16, None, count=64), "lacks"),
    (psf2(80, 16, None), "glyphs of 80x16 pixels"),
    (psf1(16, ascii_table(256))[:-2], "PSF1 unicode table ends after 255 of 256"),
    (b"\x1f\x8b\x08\x00garbage", "gzip data is damaged"),
])
def test_broken_fonts_are_refused_with_a_reason(data, message):
    with pytest.raises(FontError, match=message):
        parse(data, "bad.psf")


def test_bad_utf8_in_the_table_is_refused():
    data = psf2(8, 16, ascii_table())
    head = 32 + 128 * 16
    broken = data[:head] + b"\xc3\xff" + data[head + 1:]   # 0xc3 then the separator
    with pytest.raises(FontError, match="not UTF-8"):
        parse(broken, "bad.psf")


def test_command_line_stops_the_build_with_a_message(tmp_path):
    bad = tmp_path / "bad.psf"
    bad.write_bytes(b"\x72\xb5\x4a\x86" + b"\0" * 10)
    out = tmp_path / "out.c"
    r = subprocess.run([sys.executable, str(ROOT / "tools/build/psf2c.py"), "-o", str(out),
                        str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and not out.exists()
    assert r.stderr.startswith("psf2c: error: ") and "bad.psf" in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "tools/build/psf2c.py"), "-o", str(out),
                        str(tmp_path / "missing.psf")], capture_output=True, text=True)
    assert r.returncode == 1 and "cannot read it" in r.stderr


def test_c_source_lists_fonts_smallest_first():
    big = parse(psf2(16, 32, ascii_table()), "big")
    small = parse(psf2(8, 16, ascii_table()), "small")
    text = c_source([big, small], ["big", "small"])
    assert "kfonts[] = { &kfont_8x16, &kfont_16x32 }" in text


GOOD = psf2(8, 8, ascii_table(extra={0: [0xFFFD]}))


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.binary(max_size=600),
    st.builds(lambda pos, val: GOOD[:pos] + bytes([val]) + GOOD[pos + 1:],
              st.integers(0, len(GOOD) - 1), st.integers(0, 255)),
    st.builds(lambda cut: GOOD[:cut], st.integers(0, len(GOOD)))))
def test_any_bytes_parse_or_raise_font_error(data):
    try:
        f = parse(data, "fuzz")
    except FontError as e:
        assert str(e).startswith("fuzz: ")
        return
    assert all(len(g) == f.row_bytes * f.height for g in f.glyphs)
    assert 0 <= f.replacement < len(f.glyphs)
    assert all(0 <= g < len(f.glyphs) for g in f.unicode.values())
