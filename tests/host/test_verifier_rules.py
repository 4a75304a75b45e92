# SPDX-License-Identifier: MIT
"""Each rule group of the bytecode verifier refuses a targeted corruption of real
compiler output; the verifier never crashes or reads out of bounds on any bytes
(hypothesis under UBSan here, and the AddressSanitizer fuzz driver); replacements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build import cffihost

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

RULE = {name: i for i, name in enumerate(H.RULES)}


def compile_fn(src: str, index: int = 0):
    """The .mpy and one child function of the module compiled from src."""
    mpy = H.parse_mpy(H.mpy_cross(src))
    return mpy, mpy.root.children[index]


def find(code: bytes, opcode: int) -> int:
    """First offset holding opcode, scanning instruction by instruction."""
    p = H.opcodes_start(code)
    while p < len(code):
        if code[p] == opcode:
            return p
        p += H.insn_size(code, p)
    raise AssertionError(f"opcode {opcode:#x} not found")


def verdict(mpy, rc, code: bytes, n_free: int = 0, prof: str = "trusted"):
    v, _ = H.verify_code(code, mpy.qstrs, mpy.n_obj, len(rc.children), n_free, prof)
    return v


ADD = "def f(a, b):\n    return a + b\n"
TRY = "def f(a):\n    try:\n        a()\n    except Exception:\n        return 1\n    return 2\n"
LOOP = "def f(n):\n    while n:\n        n -= 1\n    return n\n"


def test_valid_originals_pass():
    for src in (ADD, TRY, LOOP):
        mpy, rc = compile_fn(src)
        assert verdict(mpy, rc, rc.code).ok


def test_decode_unknown_opcode():
    mpy, rc = compile_fn(ADD)
    code = bytearray(rc.code)
    code[find(code, 0x63)] = 0x02  # RETURN_VALUE -> a byte the VM lacks
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["decode"] and "not implemented" in v.msg


def test_decode_operand_past_end():
    mpy, rc = compile_fn("def f():\n    return g\n")
    at = find(rc.code, 0x12)  # LOAD_GLOBAL
    v = verdict(mpy, rc, rc.code[:at + 1])
    assert v.rule == RULE["decode"] and "past the end" in v.msg


def test_decode_qstr_out_of_range():
    mpy, rc = compile_fn("def f():\n    return g\n")
    code = bytearray(rc.code)
    code[find(code, 0x12) + 1] = 0x7F
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["decode"] and "qstr index out of range" in v.msg


def test_prelude_n_state_below_arguments():
    mpy, rc = compile_fn(ADD)
    code = bytearray(rc.code)
    code[0] &= 0x87  # S = 0: n_state 1 for two arguments
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["prelude"] and "arguments" in v.msg


def test_stack_n_state_below_locals_plus_depth():
    mpy, rc = compile_fn(ADD)
    code = bytearray(rc.code)
    s = (code[0] >> 3) & 0xF
    code[0] = (code[0] & 0x87) | ((s - 1) << 3)
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["stack"] and "n_state" in v.msg


def test_block_n_exc_stack_too_small():
    mpy, rc = compile_fn(TRY)
    code = bytearray(rc.code)
    assert code[0] & 0x04
    code[0] &= ~0x04
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["block"] and "n_exc_stack" in v.msg


def test_flow_jump_into_an_operand():
    mpy, rc = compile_fn(LOOP)
    code = bytearray(rc.code)
    at = find(code, 0x42)  # JUMP (signed, one byte: value - 0x40)
    code[at + 1] = 0x40 + 1 + 1  # lands inside the next instruction's operand
    v = verdict(mpy, rc, bytes(code))
    assert v.rule in (RULE["flow"], RULE["stack"]), v.msg


def test_flow_fall_off_the_end():
    mpy, rc = compile_fn(ADD)
    code = bytearray(rc.code)
    code[find(code, 0x63)] = 0x59  # RETURN_VALUE -> POP_TOP: runs off the end
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["flow"] and "falls through past the end" in v.msg


def test_stack_underflow():
    mpy, rc = compile_fn(ADD)
    code = bytearray(rc.code)
    start = H.opcodes_start(code)
    code[start] = 0x59  # first LOAD_FAST -> POP_TOP on an empty stack
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["stack"] and "pops below the stack" in v.msg


def test_stack_raw_iterator_slot_consumed():
    mpy, rc = compile_fn("def f(x):\n    for i in x:\n        pass\n")
    code = bytearray(rc.code)
    at = find(code, 0x4B)
    code[at:at + 2] = b"\x63\x51"  # FOR_ITER -> RETURN_VALUE of an iterator word
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["stack"] and "raw" in v.msg


def test_block_pop_except_jump_becomes_plain_jump():
    mpy, rc = compile_fn(TRY)
    code = bytearray(rc.code)
    code[find(code, 0x4A)] = 0x45  # POP_EXCEPT_JUMP -> JUMP_IF_TRUE_OR_POP keeps block
    v = verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule in (RULE["block"], RULE["stack"]), v.msg


def test_end_finally_needs_the_vm_cause():
    src = "def f(a):\n    try:\n        a()\n    finally:\n        a = 1\n"
    mpy, rc = compile_fn(src)
    code = bytearray(rc.code)
    at = find(code, 0x5D)  # END_FINALLY: make the cause a user small int
    assert code[at - 2:at] == b"\x81\xc0"  # LOAD_CONST_SMALL_INT 1, STORE_FAST 0
    code[at - 2:at] = b"\x59\x81"  # POP_TOP (the cause), LOAD_CONST_SMALL_INT 1
    v = verdict(mpy, rc, bytes(code))
    assert v.rule == RULE["block"] and "cause" in v.msg, v.msg


def test_yield_outside_generator():
    mpy, rc = compile_fn("def f():\n    return 1\n")
    plain = bytearray(rc.code)
    at = find(plain, 0x63)
    plain[at] = 0x67  # RETURN_VALUE -> YIELD_VALUE in a non-generator
    v = verdict(mpy, rc, bytes(plain))
    assert v.rule == RULE["prelude"] and "generator" in v.msg


def test_limit_code_size():
    mpy, rc = compile_fn(ADD)
    v = verdict(mpy, rc, rc.code + b"\x59" * 20000)
    assert v.rule == RULE["limit"]


# ---- Robustness ----------------------------------------------------------------------

@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 40), st.integers(0, 5), st.integers(0, 3),
       st.sampled_from(["trusted", "locus"]))
def test_any_bytes_never_crash(data, n_qstr, n_obj, n_children, prof):
    qstrs = [f"q{i}" for i in range(n_qstr)]
    v, _ = H.verify_code(data, qstrs, n_obj, n_children, 0, prof)
    assert v.steps <= 8 * len(data) + 16
    assert v.ok == (v.msg == "")
    if not v.ok:
        assert v.msg.startswith("verify: offset 0x")


@pytest.fixture(scope="module")
def seeds():
    out = []
    for f in sorted((H.MPY_DIR / "tests" / "basics").glob("*.py"))[:120]:
        mpy = H.parse_mpy(H.mpy_cross(f, f.name))
        stack = [mpy.root]
        while stack:
            rc = stack.pop()
            out.append((mpy, rc))
            stack.extend(rc.children)
    return out


@settings(max_examples=1500, deadline=None)
@given(st.data())
def test_mutants_never_crash(seeds, data):
    mpy, rc = data.draw(st.sampled_from(seeds))
    code = bytearray(rc.code)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(code) - 1))
        code[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        code = code[:data.draw(st.integers(0, len(code)))]
    v = verdict(mpy, rc, bytes(code))
    assert v.ok or v.msg.startswith("verify: offset 0x")


def test_asan_fuzz_driver(tmp_path, seeds):
    """The AddressSanitizer build of the verifier over 50 000 mutants of real code."""
    corpus = tmp_path / "corpus.bin"
    with corpus.open("wb") as f:
        for mpy in {id(m): m for m, _ in seeds}.values():
            f.write(H.corpus_records(mpy))
    exe = cffihost.executable("vrf_fuzz", [*sorted(H.VRF.glob("*.c")),
                                           H.VRF / "host" / "vrf_fuzz.c"], [H.VRF])
    out = subprocess.run([str(exe), str(corpus), "50000", "11"], check=True,
                         capture_output=True, text=True).stdout
    cases, acc, rej = (int(x) for x in out.split()[1:6:2])
    assert cases == 50000 and acc + rej == cases and acc > 0 and rej > 0


# ---- Replacements ---------------------------------------------------------------------

def test_replacement_identical_passes():
    mpy, rc = compile_fn(ADD)
    assert H.replace(rc.code, rc.code, mpy, 0).ok


def test_replacement_with_a_new_name_is_refused():
    src = "def f():\n    return g\ndef h():\n    return machine\n"
    mpy = H.parse_mpy(H.mpy_cross(src))
    f, h = mpy.root.children
    # h's code in f's place: same prelude shape, but a name f never uses.
    new = bytearray(f.code)
    at_f, at_h = find(f.code, 0x12), find(h.code, 0x12)
    new[at_f + 1] = h.code[at_h + 1]
    v = H.replace(bytes(new), f.code, mpy, 0)
    assert v.rule == RULE["profile"] and "'machine'" in v.msg


def test_replacement_changing_the_signature_is_refused():
    mpy = H.parse_mpy(H.mpy_cross("def f(a):\n    return a\ndef g(a, b):\n    return a\n"))
    f, g = mpy.root.children
    v = H.replace(g.code, f.code, mpy, 0)
    assert v.rule == RULE["prelude"]


def _size_field(n_info: int, n_cell: int = 0) -> bytes:
    out = bytearray()
    while True:
        z = (n_info & 0x3F) << 1 | (n_cell & 1)
        n_info >>= 6
        n_cell >>= 1
        if n_info or n_cell:
            out.append(z | 0x80)
        else:
            out.append(z)
            return bytes(out)


def test_bound_mode_prelude_filling_the_whole_limit():
    """A prelude whose sections end exactly at the largest length: no opcode to start at
    (this once wrote one flag byte past the verifier's tables)."""
    limit = int((H.VRF / "vrf_config.h").read_text().split("#define VRF_MAX_CODE (")[1]
                .split(")")[0])
    size = _size_field(limit - 4)
    assert len(size) == 3
    code = b"\x00" + size + b"\x00" * (limit - 4)
    v, _ = H.verify_code(code, ["n"], bound=True)
    assert v.rule == RULE["flow"] and "no opcodes" in v.msg


# ---- Contracts the VM trusts without checking (found by the soundness oracle) --------

def test_class_body_may_return_only_none_or_a_cell():
    mpy = H.parse_mpy(H.mpy_cross("class A:\n    x = 1\n"))
    assert all(v.ok for v in H.verify_mpy(mpy))
    body = mpy.root.children[0]
    code = bytearray(body.code)
    at = len(code) - 2
    assert code[at:] == b"\x51\x63"  # LOAD_CONST_NONE, RETURN_VALUE
    code[at] = 0x81                  # return 1: __build_class__ would treat 1 as a cell
    body.code = bytes(code)
    bad = [v for v in H.verify_mpy(mpy) if not v.ok]
    assert len(bad) == 1 and "class body" in bad[0].msg, [v.msg for v in bad]
    # The same function is fine when not made as a class body.
    v, _ = H.verify_code(body.code, mpy.qstrs, mpy.n_obj, 0)
    assert v.ok


def test_build_class_needs_a_class_body():
    mpy = H.parse_mpy(H.mpy_cross("class A:\n    pass\n"))
    code = bytearray(mpy.root.code)
    at = find(code, 0x32)              # MAKE_FUNCTION 0 on top of LOAD_BUILD_CLASS
    code[at:at + 2] = bytes([0x11, code[find(code, 0x10) + 1]])  # LOAD_NAME instead
    v, _ = H.verify_code(bytes(code), mpy.qstrs, mpy.n_obj, 1)
    assert v.rule == RULE["stack"] and "__build_class__" in v.msg, v.msg


def test_keyword_names_must_be_interned_strings():
    mpy = H.parse_mpy(H.mpy_cross("f(a=1)\n"))
    code = bytearray(mpy.root.code)
    at = find(code, 0x10)              # LOAD_CONST_STRING 'a' -> LOAD_CONST_SMALL_INT 5
    code[at:at + 2] = b"\x22\x05"
    v, _ = H.verify_code(bytes(code), mpy.qstrs, mpy.n_obj, 0)
    assert v.rule == RULE["stack"] and "keyword" in v.msg, v.msg


def test_child_default_counts_match_what_the_parent_passes():
    src = "def f(a, b=1, *, c=2):\n    return a\n"
    mpy = H.parse_mpy(H.mpy_cross(src))
    assert all(v.ok for v in H.verify_mpy(mpy))
    child = mpy.root.children[0]
    code = bytearray(child.code)
    # n_def_pos_args 1 -> 0 (bit 0 of the first extension byte): the VM would then read
    # the keyword-defaults dict from the slot of the positional default.
    assert code[0] & 0x80 and code[1] & 0x01
    code[1] &= ~0x01
    child.code = bytes(code)
    bad = [v for v in H.verify_mpy(mpy) if not v.ok]
    assert len(bad) == 1 and "default-argument counts" in bad[0].msg, [v.msg for v in bad]


def test_return_from_finally_needs_its_cause():
    src = "def f():\n    try:\n        pass\n    finally:\n        return 2\n"
    mpy, rc = compile_fn(src)
    assert verdict(mpy, rc, rc.code).ok
    code = bytearray(rc.code)
    at = find(code, 0x49)       # SETUP_FINALLY ...; the None pushed before the handler
    at = code.index(0x51, at)   # LOAD_CONST_NONE -> LOAD_NULL: no cause in the handler
    code[at] = 0x53
    v = verdict(mpy, rc, bytes(code))
    assert not v.ok and v.rule in (RULE["block"], RULE["stack"]), v.msg


def test_import_star_needs_a_module():
    mpy = H.parse_mpy(H.mpy_cross("from m import *\n"))
    assert all(v.ok for v in H.verify_mpy(mpy))
    code = bytearray(mpy.root.code)
    at = find(code, 0x1B)                    # IMPORT_NAME 'm' (2 bytes)
    code[at:at + 2] = b"\x59\x59"            # POP_TOP twice: the level stays on top
    v, _ = H.verify_code(bytes(code), mpy.qstrs, mpy.n_obj, 0)
    assert v.rule == RULE["stack"] and "IMPORT_NAME" in v.msg, v.msg
