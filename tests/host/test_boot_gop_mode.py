# SPDX-License-Identifier: MIT
"""boot/gop_mode.c: which graphics mode the loader sets for the screen console (the asked
size, the display's EDID size, the firmware's mode, the largest that fits, within the
4K pixel limit), the EDID's preferred resolution, and the loader_screen=WxH parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.build import cffihost

BOOT = Path(__file__).resolve().parents[2] / "boot"
OVMF_LIKE = [(640, 480), (800, 600), (1024, 768), (1280, 800), (1920, 1080), (2560, 1600),
             (3840, 2160), (5120, 2880)]


@pytest.fixture(scope="module")
def m():
    return cffihost.build("gop_mode", [BOOT / "gop_mode.c"], [BOOT / "gop_mode.h"])


def choose(m, modes, current=0, want=(0, 0), native=(0, 0), linear=None):
    arr = m.ffi.new("struct gop_mode_info[]", max(len(modes), 1))
    for i, (w, h) in enumerate(modes):
        arr[i].width, arr[i].height = w, h
        arr[i].linear = 1 if linear is None else linear[i]
    c = m.lib.gop_mode_choose(arr, len(modes), current, *want, *native, m.lib.GOP_MAX_PIXELS)
    return c.index, c.why, c.asked_missing


def test_the_asked_size_wins(m):
    idx, why, _ = choose(m, OVMF_LIKE, current=3, want=(800, 600), native=(1920, 1080))
    assert (OVMF_LIKE[idx], why) == ((800, 600), m.lib.GOP_ASKED)


def test_an_asked_size_not_offered_is_reported_and_the_rest_decides(m):
    idx, why, missing = choose(m, OVMF_LIKE, current=3, want=(1234, 567))
    assert missing and (OVMF_LIKE[idx], why) == ((1280, 800), m.lib.GOP_CURRENT)


def test_native_then_current(m):
    assert choose(m, OVMF_LIKE, current=3, native=(1920, 1080))[:2] == (4, m.lib.GOP_NATIVE)
    assert choose(m, OVMF_LIKE, current=3)[:2] == (3, m.lib.GOP_CURRENT)


def test_not_the_largest_and_never_above_4k(m):
    # A 5K panel: the largest mode within the pixel limit that fits the panel.
    idx, why, _ = choose(m, OVMF_LIKE, current=7, native=(5120, 2880))
    assert (OVMF_LIKE[idx], why) == ((3840, 2160), m.lib.GOP_FITS)
    idx, why, _ = choose(m, OVMF_LIKE, current=7)
    assert (OVMF_LIKE[idx], why) == ((3840, 2160), m.lib.GOP_FITS)
    # A native size the firmware does not offer: the largest mode inside it.
    idx, _, _ = choose(m, OVMF_LIKE, current=0, native=(1366, 768))
    assert OVMF_LIKE[idx] == (1024, 768)


def test_blt_only_modes_are_never_chosen(m):
    modes = [(800, 600), (1280, 800)]
    assert choose(m, modes, current=1, linear=[1, 0])[:2] == (0, m.lib.GOP_FITS)
    assert choose(m, modes, current=1, linear=[0, 0])[:2] == (-1, m.lib.GOP_NONE)
    assert choose(m, [], current=0)[:2] == (-1, m.lib.GOP_NONE)


def test_nothing_fits_gives_the_smallest(m):
    modes = [(7680, 4320), (5120, 2880)]
    assert choose(m, modes, current=0)[:2] == (1, m.lib.GOP_SMALLEST)


def edid(w, h, clock=0x1234):
    b = bytearray(128)
    b[0:8] = b"\x00\xff\xff\xff\xff\xff\xff\x00"
    b[54:56] = clock.to_bytes(2, "little")
    b[56], b[58] = w & 0xFF, (w >> 8) << 4
    b[59], b[61] = h & 0xFF, (h >> 8) << 4
    b[127] = (-sum(b[:127])) & 0xFF
    return bytes(b)


def preferred(m, data):
    w, h = m.ffi.new("uint32_t *"), m.ffi.new("uint32_t *")
    ok = m.lib.gop_edid_preferred(data, len(data), w, h)
    return (w[0], h[0]) if ok else None


def test_edid_preferred_resolution(m):
    assert preferred(m, edid(3840, 2160)) == (3840, 2160)
    assert preferred(m, edid(1280, 800)) == (1280, 800)
    bad = bytearray(edid(1920, 1080))
    bad[100] ^= 1
    assert preferred(m, bytes(bad)) is None                  # checksum
    assert preferred(m, edid(1920, 1080, clock=0)) is None   # a display descriptor
    assert preferred(m, edid(1920, 1080)[:127]) is None
    assert preferred(m, b"\x01" + edid(1920, 1080)[1:]) is None


@given(st.binary(min_size=0, max_size=200))
def test_edid_any_bytes(m, data):
    r = preferred(m, data)
    assert r is None or (0 < r[0] < 4096 and 0 < r[1] < 4096)


def size(m, s: str):
    w, h = m.ffi.new("uint32_t *"), m.ffi.new("uint32_t *")
    b = s.encode()
    return (w[0], h[0]) if m.lib.gop_parse_size(b, len(b), w, h) else None


def test_parse_size(m):
    assert size(m, "1280x800") == (1280, 800)
    assert size(m, "3840x2160") == (3840, 2160)
    for bad in ["", "x", "1280", "1280x", "x800", "0x600", "65536x1", "12a0x800", "1280x800x",
                "123456x1", "-1x5"]:
        assert size(m, bad) is None, bad


@given(st.text(alphabet="0123456789x-", max_size=14))
def test_parse_size_matches_a_reference(m, s):
    parts = s.split("x", 1)
    want = None
    if len(parts) == 2 and all(p.isdigit() and 1 <= len(p) <= 5 for p in parts):
        w, h = int(parts[0]), int(parts[1])
        if 1 <= w <= 65535 and 1 <= h <= 65535:
            want = (w, h)
    assert size(m, s) == want
