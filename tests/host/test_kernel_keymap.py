# SPDX-License-Identifier: MIT
"""kernel/dev/keymap.c on the host (cffi): scancode sets 1 and 2 agree on every key,
keys become the bytes the REPL expects on the US and German layouts, and no usage or
scancode, known or not, does anything but produce bytes or nothing."""
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build import cffihost
from tools.guest.qmp import qcodes_for

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL = ROOT / "kernel"

# QEMU qcodes (what tools/guest/qmp.py types) to HID usages, for the US text below.
LETTERS = {chr(ord("a") + i): 0x04 + i for i in range(26)}
DIGITS = {str((i + 1) % 10): 0x1e + i for i in range(10)}
NAMED = {"ret": 0x28, "esc": 0x29, "backspace": 0x2a, "tab": 0x2b, "spc": 0x2c,
         "minus": 0x2d, "equal": 0x2e, "bracket_left": 0x2f, "bracket_right": 0x30,
         "backslash": 0x31, "semicolon": 0x33, "apostrophe": 0x34, "grave_accent": 0x35,
         "comma": 0x36, "dot": 0x37, "slash": 0x38, "shift": 0xe1}
USAGE = {**LETTERS, **DIGITS, **NAMED}


@pytest.fixture(scope="module")
def km():
    m = cffihost.build("keymap", [KERNEL / "dev" / "keymap.c", ROOT / "tests/host/keymap_host.c"],
                       [KERNEL / "dev" / "keymap.h", ROOT / "tests/host/keymap_host.h"],
                       [KERNEL / "dev", KERNEL, ROOT / "tests/host"])
    return m.ffi, m.lib


class Keyboard:
    def __init__(self, km, layout="us"):
        self.ffi, self.c = km
        self.st = self.ffi.new("struct keymap_state *")
        assert self.c.keymap_select(layout.encode())
        self.take()

    def key(self, usage, down=True):
        self.c.keymap_key(self.st, usage, down)

    def press(self, *usages):
        for u in usages:
            self.key(u, True)
        for u in reversed(usages):
            self.key(u, False)
        return self

    def take(self) -> bytes:
        buf = self.ffi.new("uint8_t[]", 4096)
        return bytes(buf[0:self.c.keymap_host_take(buf, 4096)])

    def typed(self, text: str) -> bytes:
        for ch in text:
            self.press(*(USAGE[q] for q in qcodes_for(ch)))
        return self.take()


def test_set1_and_set2_name_the_same_keys(km):
    _, c = km
    for ext in (False, True):
        one = {c.keymap_set1_usage(code, ext) for code in range(128)} - {0}
        two = {c.keymap_set2_usage(code, ext) for code in range(256)} - {0}
        assert one == two, (ext, sorted(one ^ two))
    # A few by name: set 1 0x1e / set 2 0x1c is A, E0 48 / E0 75 is Up.
    assert c.keymap_set1_usage(0x1e, False) == c.keymap_set2_usage(0x1c, False) == 0x04
    assert c.keymap_set1_usage(0x48, True) == c.keymap_set2_usage(0x75, True) == 0x52


def test_us_text_and_control_bytes(km):
    k = Keyboard(km)
    text = "print('Hello, World!'); x = [1, 2] + {3: \"~`|\\\\\"}  # <>?_=-"
    assert k.typed(text) == text.encode()
    assert k.typed("\n\t\b\x1b") == b"\r\t\x7f\x1b"
    assert k.press(0xe0, 0x06).take() == b"\x03"  # Ctrl-C
    assert k.press(0xe4, 0x07).take() == b"\x04"  # right Ctrl-D
    arrows = [k.press(u).take() for u in (0x52, 0x51, 0x4f, 0x50, 0x4a, 0x4d, 0x4c)]
    assert arrows == [b"\x1b[A", b"\x1b[B", b"\x1b[C", b"\x1b[D", b"\x1b[H", b"\x1b[F",
                      b"\x1b[3~"]


def test_caps_lock_shifts_letters_only(km):
    k = Keyboard(km)
    k.press(0x39)
    assert k.typed("a1") == b"A1"
    assert k.press(0xe1, 0x04).take() == b"a"
    k.press(0x39)
    assert k.typed("a") == b"a"


def test_german_layout(km):
    k = Keyboard(km, "de")
    try:
        assert k.press(0x1c).take() == b"z" and k.press(0x1d).take() == b"y"
        assert k.press(0xe6, 0x14).take() == b"@"  # AltGr+Q
        assert k.press(0xe6, 0x25).take() == b"["  # AltGr+8
        assert k.press(0xe1, 0x24).take() == b"/"  # Shift+7
        assert k.press(0x34).take() == "ä".encode()
        k.press(0x39)
        assert k.press(0x34).take() == "Ä".encode()
        assert k.press(0x2d).take() == "ß".encode()  # no capital: unchanged
        assert k.press(0xe0, 0x1c).take() == b"\x1a"  # Ctrl + the key labelled Z
    finally:
        assert km[1].keymap_select(b"us")
    assert not km[1].keymap_select(b"xx")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 255), st.booleans()), max_size=40))
def test_any_usage_sequence_is_harmless(km, keys):
    k = Keyboard(km)
    for usage, down in keys:
        k.key(usage, down)
    out = k.take()
    assert all(b < 0x80 for b in out)  # US: ASCII only
    for u in list(range(0x00, 0x04)) + list(range(0x3a, 0x49)) + list(range(0x66, 0xe0)):
        k.st.mods = 0
        assert k.press(u).take() == b"", hex(u)  # unknown and function keys: nothing


@given(st.integers(0, 255), st.booleans())
def test_any_scancode_maps_to_a_usage_or_nothing(km, code, ext):
    _, c = km
    for u in (c.keymap_set1_usage(code, ext), c.keymap_set2_usage(code, ext)):
        assert u == 0 or 0x04 <= u <= 0x65 or 0xe0 <= u <= 0xe7
