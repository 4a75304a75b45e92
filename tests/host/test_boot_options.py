# SPDX-License-Identifier: MIT
"""boot/options.c: the loader's check of \\LOCIOS\\OPTIONS.TXT, an unsealed file read from
the ESP. Any bytes in; out comes printable words joined by single spaces, or a refusal
naming the offset, and never more than the bootinfo field holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st


def normalise(boot_pure, data: bytes):
    ffi, lib = boot_pure.ffi, boot_pure.lib
    out = ffi.new("char[]", lib.BOOTINFO_OPTIONS_MAX)
    bad = ffi.new("size_t *")
    rc = lib.options_normalise(data, len(data), out, bad)
    return rc, ffi.string(out).decode("ascii"), bad[0]


def reference(data: bytes, cap: int):
    """What the C must do, written independently."""
    if len(data) > cap - 1:
        return "too long", None
    for i, b in enumerate(data):
        if not (0x21 <= b <= 0x7E or b in b" \t\r\n"):
            return "byte", i
    return "ok", " ".join(data.decode("ascii").split())


def test_words_are_joined_by_single_spaces(boot_pure):
    rc, out, _ = normalise(boot_pure, b"  heap_percent=50\r\n\theap_floor_mib=16  \n")
    assert rc == boot_pure.lib.OPTIONS_OK
    assert out == "heap_percent=50 heap_floor_mib=16"


def test_empty_file_gives_empty_options(boot_pure):
    assert normalise(boot_pure, b"")[:2] == (boot_pure.lib.OPTIONS_OK, "")
    assert normalise(boot_pure, b" \n\n ")[:2] == (boot_pure.lib.OPTIONS_OK, "")


def test_control_and_high_bytes_are_refused_with_their_offset(boot_pure):
    rc, out, bad = normalise(boot_pure, b"heap_percent=5\x000")
    assert (rc, out, bad) == (boot_pure.lib.OPTIONS_ERR_BYTE, "", 14)
    rc, _, bad = normalise(boot_pure, "heap=\u00e9".encode())
    assert (rc, bad) == (boot_pure.lib.OPTIONS_ERR_BYTE, 5)


def test_too_long_is_refused(boot_pure):
    cap = boot_pure.lib.BOOTINFO_OPTIONS_MAX
    assert normalise(boot_pure, b"a" * (cap - 1))[0] == boot_pure.lib.OPTIONS_OK
    assert normalise(boot_pure, b"a" * cap)[0] == boot_pure.lib.OPTIONS_ERR_TOO_LONG


@given(st.one_of(st.binary(max_size=300),
                 st.text(alphabet=" \t\r\n=_abc019", max_size=300).map(str.encode)))
def test_any_bytes_match_the_reference(boot_pure, data):
    cap = boot_pure.lib.BOOTINFO_OPTIONS_MAX
    rc, out, bad = normalise(boot_pure, data)
    want, detail = reference(data, cap)
    codes = {"ok": boot_pure.lib.OPTIONS_OK, "too long": boot_pure.lib.OPTIONS_ERR_TOO_LONG,
             "byte": boot_pure.lib.OPTIONS_ERR_BYTE}
    assert rc == codes[want]
    if want == "ok":
        assert out == detail and len(out) < cap
    else:
        assert out == ""
        if want == "byte":
            assert bad == detail


def value(boot_pure, opts: str, key: str):
    ffi, lib = boot_pure.ffi, boot_pure.lib
    n = ffi.new("size_t *")
    buf = ffi.new("char[]", opts.encode())
    p = lib.options_value(buf, key.encode(), n)
    return None if p == ffi.NULL else ffi.unpack(p, n[0]).decode()


def value_reference(opts: str, key: str):
    found = None
    for word in opts.split(" "):
        k, eq, v = word.partition("=")
        if eq and k == key:
            found = v
    return found


def test_option_values_are_found_by_whole_key(boot_pure):
    opts = "loader_placement=x loader_place=random heap_percent=5 loader_place=0x40000000"
    assert value(boot_pure, opts, "loader_place") == "0x40000000"   # the last one wins
    assert value(boot_pure, opts, "loader_placement") == "x"
    assert value(boot_pure, opts, "heap_percent") == "5"
    assert value(boot_pure, opts, "heap") is None
    assert value(boot_pure, "loader_x2apic", "loader_x2apic") is None   # no '='
    assert value(boot_pure, "loader_x2apic=", "loader_x2apic") == ""
    assert value(boot_pure, "", "loader_place") is None


@given(st.lists(st.text(alphabet="ab=_1", min_size=1, max_size=8), max_size=8),
       st.text(alphabet="ab_1", min_size=1, max_size=4))
def test_option_values_match_the_reference(boot_pure, words, key):
    opts = " ".join(words)
    assert value(boot_pure, opts, key) == value_reference(opts, key)
