# SPDX-License-Identifier: MIT
"""Every length and table index the VM and its line-number decoder read from a function's
prelude is bounded by the verifier (the list: vm/verifier/README.md, "Fields the VM
reads"). Here the fields it once missed: a line-number table whose last entry runs past
the source-info section."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

RULE = {name: i for i, name in enumerate(H.RULES)}

SOURCES = (
    "def f():\n    return 1\n",
    "def f(a, b=2, *c, d, **e):\n    x = a\n    y = d\n    return x + y\n",
    "def f(a):\n    def g():\n        return a\n    return g\n",
)


def _uint_len(code: bytes, p: int) -> int:
    n = 1
    while code[p + n - 1] & 0x80:
        n += 1
    return n


class Prelude:
    """A function's bytes cut at the prelude's fields (py/bc.h), to be put back together
    with another line-number table."""

    def __init__(self, code: bytes):
        p, z = 1, code[0]
        n_pos, n_kw = z & 3, 0
        n = 0
        while z & 0x80:
            z = code[p]
            p += 1
            n_pos |= (z & 0x4) << n
            n_kw |= ((z & 0x08) >> 3) << n
            n += 1
        self.sig = code[:p]
        n_info, n_cell, p = H.size_info(code, p)
        q = p
        for _ in range(1 + n_pos + n_kw):
            q += _uint_len(code, q)
        self.n_cell = n_cell
        self.names = code[p:q]
        self.lines = code[q:p + n_info]
        self.rest = code[p + n_info:]  # cells, then the opcodes

    def build(self, lines: bytes) -> bytes:
        n_info, n_cell = len(self.names) + len(lines), self.n_cell
        size = bytearray()
        while True:
            z = (n_info & 0x3F) << 1 | (n_cell & 1)
            n_info >>= 6
            n_cell >>= 1
            if n_info or n_cell:
                size.append(z | 0x80)
            else:
                size.append(z)
                break
        return self.sig + bytes(size) + self.names + lines + self.rest


def vm_line_reads(lines: bytes) -> int:
    """Highest offset into lines that the VM's line decoder reads when it walks the whole
    table (mp_bytecode_get_source_line with an offset past every entry), + 1."""
    p, top = 0, 0
    while p < len(lines):
        if lines[p] & 0x80:
            top = max(top, p + 2)
            p += 2
        else:
            top = max(top, p + 1)
            p += 1
    return top


def compiled(src: str):
    mpy = H.parse_mpy(H.mpy_cross(src))
    return mpy, mpy.root.children[0]


def verdict(mpy, rc, code: bytes):
    v, _ = H.verify_code(code, mpy.qstrs, mpy.n_obj, len(rc.children))
    return v


def test_compiled_line_tables_end_inside_the_section():
    for src in SOURCES:
        mpy, rc = compiled(src)
        pr = Prelude(rc.code)
        assert pr.build(pr.lines) == rc.code
        assert vm_line_reads(pr.lines) <= len(pr.lines)
        assert verdict(mpy, rc, rc.code).ok


def test_two_byte_line_entry_on_the_last_byte_is_refused():
    mpy, rc = compiled(SOURCES[0])
    pr = Prelude(rc.code)
    # The first byte of a two-byte entry (0b1LLLBBBB) alone: the VM's decoder would
    # read its second byte from the first opcode.
    v = verdict(mpy, rc, pr.build(pr.lines + b"\x81"))
    assert v.rule == RULE["prelude"] and "line-number table" in v.msg, v.msg
    assert verdict(mpy, rc, pr.build(pr.lines + b"\x81\x01")).ok


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(SOURCES), st.binary(max_size=24))
def test_line_table_accepted_iff_the_vm_stays_inside(src, lines):
    mpy, rc = compiled(src)
    v = verdict(mpy, rc, Prelude(rc.code).build(lines))
    inside = vm_line_reads(lines) <= len(lines)
    assert v.ok == inside, (lines.hex(), v.msg)
    if not inside:
        assert v.rule == RULE["prelude"] and "line-number table" in v.msg
