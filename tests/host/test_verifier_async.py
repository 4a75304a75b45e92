# SPDX-License-Identifier: MIT
"""`async with` in the bytecode verifier: its handler is entered in two stack layouts
(an exception, or an unwind's data and sentinel) that the verifier follows apart;
corruptions of either path are refused, and the handler is trusted only in the exact
shape the compiler emits."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

RULE = {name: i for i, name in enumerate(H.RULES)}

SRC = """
class CM:
    async def __aenter__(self): return self
    async def __aexit__(self, *a): return False
async def f(items):
    for x in items:
        async with CM() as c:
            if x:
                return c
            if x is None:
                break
    return 0
"""

DUP_TOP, ROT_TWO, ROT_THREE, LOAD_GLOBAL, POP_JUMP_IF_FALSE = 0x57, 0x5A, 0x5B, 0x12, 0x44
EXCEPTION_MATCH = 0xD7 + 8


def _insns(code: bytes) -> list[int]:
    out, p = [], H.opcodes_start(code)
    while p < len(code) and any(code[p:]):
        out.append(p)
        p += H.insn_size(code, p)
    return out


def _head(code: bytes) -> tuple[int, int]:
    """(offset of the handler head's LOAD_GLOBAL, offset of its jump target L3)."""
    offs = _insns(code)
    for i, p in enumerate(offs[:-3]):
        if (code[p] == DUP_TOP and code[offs[i + 1]] == LOAD_GLOBAL
                and code[offs[i + 2]] == EXCEPTION_MATCH
                and code[offs[i + 3]] == POP_JUMP_IF_FALSE):
            j = offs[i + 3]  # a signed offset from the end of the instruction
            if code[j + 1] & 0x80:
                rel = ((code[j + 1] & 0x7F) | (code[j + 2] << 7)) - 0x4000
            else:
                rel = code[j + 1] - 0x40
            return offs[i + 1], j + H.insn_size(code, j) + rel
    raise AssertionError("no async-with handler head")


def _fn():
    mpy = H.parse_mpy(H.mpy_cross(SRC))
    return mpy, mpy.root.children[1]


def _verdict(mpy, rc, code: bytes):
    v, _ = H.verify_code(code, mpy.qstrs, mpy.n_obj, len(rc.children), 0, "trusted")
    return v


def test_async_with_verifies_within_the_compilers_bounds():
    mpy, rc = _fn()
    v = _verdict(mpy, rc, rc.code)
    assert v.ok, v.msg
    assert v.n_locals + v.max_depth <= v.n_state
    # the unwind layout is deeper than the exception one: (ctx, data, sentinel) plus the
    # head's two scratch slots, above the four-word iterator buffer
    assert v.max_depth >= 4 + 1 + 2 + 2


def test_head_must_name_base_exception():
    """Another global in the head is an arbitrary test: both layouts could take either
    branch, and the handler is then refused."""
    mpy, rc = _fn()
    code = bytearray(rc.code)
    lg, _ = _head(code)
    other = mpy.qstrs.index("CM")
    assert code[lg + 1] < 0x80 and other < 0x80
    code[lg + 1] = other
    v = _verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule in (RULE["stack"], RULE["block"]), v.msg


def test_unwind_path_must_keep_data_and_sentinel():
    """ROT_THREE -> ROT_TWO at the unwind path's start leaves the context manager where
    END_FINALLY expects the sentinel: the VM would raise a non-exception."""
    mpy, rc = _fn()
    code = bytearray(rc.code)
    _, l3 = _head(code)
    assert code[l3] == ROT_THREE and code[l3 + 1] == ROT_THREE
    code[l3] = ROT_TWO
    v = _verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule in (RULE["stack"], RULE["block"]), v.msg


def test_unwind_data_is_never_consumed():
    """ROT_THREE; ROT_THREE -> ROT_THREE; ROT_TWO at the unwind path's start leaves
    (sentinel, data, ctx): __aexit__ is looked up on the context manager as before, but
    END_FINALLY would then find the raw data where it expects the sentinel."""
    mpy, rc = _fn()
    code = bytearray(rc.code)
    _, l3 = _head(code)
    code[l3 + 1] = ROT_TWO
    v = _verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule in (RULE["stack"], RULE["block"]), v.msg


def test_body_end_may_swap_only_an_object_into_the_base():
    """The ROT_TWO ending the body may move the context manager out of the block's base
    slot (the VM's code does); anywhere else a rotation through the base is refused."""
    mpy, rc = _fn()
    code = bytearray(rc.code)
    offs = _insns(code)
    rots = [p for p in offs if code[p] == ROT_TWO]
    assert rots
    # turn the body's LOAD_CONST_NONE (before the marked ROT_TWO) into LOAD_NULL: the VM
    # would hand a NULL to the handler as the context manager
    tail = [p for p in rots if code[p - 1] == 0x51 and code[p + 1] == 0x42]
    assert tail
    code[tail[0] - 1] = 0x53
    v = _verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule == RULE["stack"], v.msg
