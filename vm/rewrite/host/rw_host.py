# SPDX-License-Identifier: MIT
"""The rewriter's planner (vm/rewrite/rw_plan.c) built for the host through cffi
(tools/build/cffihost.py: declarations from rw_plan.h), with Python views of its results;
.mpy reading and mpy-cross come from vm/verifier/host."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # run as a file: `tools` importable
from tools.build import cffihost  # noqa: E402

RW = ROOT / "vm" / "rewrite"

_lib = None


def lib():
    """The cffi module (.ffi, .lib), compiled once per source hash under build/host."""
    global _lib
    if _lib is None:
        _lib = cffihost.build("rewrite", [RW / "rw_plan.c"], [RW / "rw_plan.h"])
    return _lib


@dataclass(frozen=True)
class Edit:
    offset: int
    old: int
    new: int
    kind: str


def kind_names() -> list[str]:
    m = lib()
    out = []
    k = 0
    while (p := m.lib.rw_kind_name(k)) != m.ffi.NULL:
        out.append(m.ffi.string(p).decode())
        k += 1
    return out


def kinds_mask(names: list[str] | None = None) -> int:
    """The kinds bit mask for names (None: the default set, rw_kinds_all)."""
    if names is None:
        return lib().lib.rw_kinds_all
    all_names = kind_names()
    return sum(1 << all_names.index(n) for n in names)


def vm_kinds() -> list[str]:
    """Names of every kind the VM implements (rw_kinds_vm), default or not."""
    m = lib().lib.rw_kinds_vm
    return [n for i, n in enumerate(kind_names()) if m >> i & 1]


def default_kinds() -> list[str]:
    """Names of the kinds in the default set (rw_kinds_all)."""
    m = lib().lib.rw_kinds_all
    return [n for i, n in enumerate(kind_names()) if m >> i & 1]


def plan(code: bytes, kinds: int | None = None) -> list[Edit]:
    m = lib()
    k = m.lib.rw_kinds_all if kinds is None else kinds
    buf = m.ffi.from_buffer(code) if code else m.ffi.new("uint8_t[1]")
    n = m.lib.rw_plan(buf, len(code), m.ffi.NULL, 0, k)
    out = m.ffi.new("rw_edit_t[]", max(n, 1))
    got = m.lib.rw_plan(buf, len(code), out, n, k)
    assert got == n
    names = kind_names()
    return [Edit(e.offset, e.old_byte, e.new_byte, names[e.kind]) for e in out[0:n]]


def apply(code: bytes, edits: list[Edit]) -> bytes:
    """The bytes after rw_apply; ValueError naming the first refused edit."""
    m = lib()
    buf = m.ffi.new("uint8_t[]", code or b"\0")
    arr = m.ffi.new("rw_edit_t[]", [(e.offset, e.old, e.new, 0) for e in edits] or [(0, 0, 0, 0)])
    bad = m.lib.rw_apply(buf, len(code), arr, len(edits))
    if bad:
        raise ValueError(f"edit {bad - 1} refused")
    return bytes(m.ffi.buffer(buf, len(code)))


def undo(code: bytes) -> bytes:
    m = lib()
    out = m.ffi.new("uint8_t[]", max(len(code), 1))
    n = m.lib.rw_undo(m.ffi.from_buffer(code) if code else out, len(code), out)
    if n < 0:
        raise ValueError("a new opcode's tail is missing")
    return bytes(m.ffi.buffer(out, len(code)))


def insn_starts(code: bytes) -> list[int]:
    """Instruction starts from 0 to the end of the opcodes, as the planner decodes."""
    m = lib()
    buf = m.ffi.from_buffer(code) if code else m.ffi.new("uint8_t[1]")
    out, off = [], 0
    while (n := m.lib.rw_insn_size(buf, len(code), off)) != 0:
        out.append(off)
        off += n
    return out


def kind_of(op: int) -> int:
    return lib().lib.rw_kind_of(op)


def tail_insns(op: int) -> int:
    return lib().lib.rw_tail_insns(op)
