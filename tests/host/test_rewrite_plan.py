# SPDX-License-Identifier: MIT
"""The rewriter's planner (vm/rewrite/rw_plan.c) on MicroPython's own compiled tests/basics
and on generated programs: instruction boundaries as MicroPython decodes them, edits only
at instruction starts with original tails, undo(apply(plan)) == code, idempotence, and
every rewritten function verifying as a replacement of its original."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "vm" / "verifier" / "host"))
sys.path.insert(0, str(ROOT / "vm" / "rewrite" / "host"))
import rw_host as R  # noqa: E402
import vrf_host as H  # noqa: E402

BASICS = H.MPY_DIR / "tests" / "basics"

# The opcode table (vm/README.md, "The rewriter"; the numbers in vm/rewrite/rw_opcodes.h),
# restated here independently of the C: original head -> new byte, and the opcodes its
# tail must be.
BINOP = 0xD7
CMPJ = {BINOP + op: 0x02 + op for op in range(6)}
ARITH = {BINOP + op: new for op, new in zip(
    [27, 28, 29, 31, 33, 24, 22, 23, 14, 15, 26, 25],
    [0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x6A, 0x6B, 0x6C, 0x6D], strict=True)}
SUBSCR = {0x55: 0x6E, 0x56: 0x6F}
CACHE = {0x12: 0x1D, 0x13: 0x1E, 0x14: 0x1F}  # LOAD_GLOBAL/ATTR/METHOD -> *_C
POP_JUMPS = (0x43, 0x44)


def reference_plan(code: bytes, starts: list[int],
                   kinds: set[str]) -> list[tuple[int, int, int, str]]:
    """The spec's patterns, matched greedily from the first instruction on original
    opcodes only; tails (of new and of already rewritten patterns) are skipped."""
    ops = [code[s] for s in starts]
    out, i = [], 0
    tails = {**{v: 1 for v in CMPJ.values()}, 0xD4: 3, 0xD5: 3, 0xD6: 1}
    while i < len(ops):
        op, nxt = ops[i], ops[i + 1:i + 4]
        if R.kind_of(op) >= 0:
            i += 1 + tails.get(op, 0)
            continue
        hit = None
        if op in CMPJ and nxt[:1] and nxt[0] in POP_JUMPS:
            hit = (CMPJ[op], "cmpj", 1)
        elif op in ARITH:
            hit = (ARITH[op], "arith_si", 0)
        elif op in SUBSCR and not (op == 0x56 and ops[max(i - 2, 0):i] == [0x53, 0x5B]):
            # not the STORE_SUBSCR of `del x[i]` (LOAD_NULL; ROT_THREE; STORE_SUBSCR)
            hit = (SUBSCR[op], "subscr_si", 0)
        elif op == 0x58 and nxt[:3] and len(nxt) == 3 and nxt[0] == 0x5A \
                and nxt[1] in (BINOP, BINOP + 1) and nxt[2] == 0x43:
            hit = (0xD4, "forrange", 3)
        elif 0xB0 <= op < 0xC0 and len(nxt) == 3 and 0x70 <= nxt[0] <= 0xAF \
                and nxt[1] in (BINOP + 14, BINOP + 15) and nxt[2] == 0xC0 + op - 0xB0:
            hit = (0xD5, "incr_fast", 3)
        elif op == 0x51 and nxt[:1] == [0x63]:
            hit = (0xD6, "return_none", 1)
        elif op in CACHE:
            hit = (CACHE[op], "cache", 0)
        if hit and hit[1] in kinds:
            out.append((starts[i], op, hit[0], hit[1]))
            i += 1 + hit[2]
        else:
            i += 1
    return out


def functions(mpy: H.Mpy):
    """(path, whole fun_data, opcode offset, how its parent makes it) of every function
    (n_free from the verifier's walk of the original; None: its parent never makes it)."""
    def walk(rc: H.RawCode, path: str, made: H.Made | None):
        yield path, rc.code, H.opcodes_start(rc.code), made
        frees: list[H.Made] = []
        if made is not None:
            v, frees = H.verify_code(rc.code, mpy.qstrs, mpy.n_obj, len(rc.children),
                                     made=made)
            assert v.ok, f"{path}: {v.msg}"
        for i, ch in enumerate(rc.children):
            ok = frees and frees[i].status == 0
            yield from walk(ch, f"{path}/{i}", frees[i] if ok else None)
    yield from walk(mpy.root, "<module>", H.ROOT_MADE)


def verifies(mpy: H.Mpy, data: bytes, start: int, made: H.Made | None, new: bytes) -> str:
    """"" when the rewritten opcodes verify as a replacement of the original function
    (the verifier's rewrite mode, profile 'trusted'), else its message."""
    if made is None:
        return ""  # never made by its parent: it cannot run, nothing to prove
    n_children = len(_children_of(mpy, data))
    v = H.replace(data[:start] + new, data, mpy, n_children, "trusted", made.n_free)
    return "" if v.ok else v.msg


def _children_of(mpy: H.Mpy, data: bytes) -> list[H.RawCode]:
    def find(rc: H.RawCode):
        if rc.code is data:
            return rc
        for ch in rc.children:
            if (hit := find(ch)) is not None:
                return hit
        return None
    return find(mpy.root).children


@pytest.fixture(scope="module")
def basics():
    return [(f, H.parse_mpy(H.mpy_cross(f, f.name))) for f in sorted(BASICS.glob("*.py"))]


@pytest.fixture(scope="module")
def mpy_tool():
    return H.load_tool("mpy-tool.py")


def test_decoding_matches_micropython(basics, mpy_tool):
    """Instruction starts are those of MicroPython's own decoder (tools/mpy-tool.py's
    mp_opcode_decode), and decoding ends exactly at the end of each function."""
    n = 0
    for f, mpy in basics:
        for path, data, start, _ in functions(mpy):
            code = data[start:]
            ref, ip = [], 0
            while ip < len(code):
                ref.append(ip)
                ip += mpy_tool.mp_opcode_decode(code, ip)[1]
            assert R.insn_starts(code) == ref, f"{f.name}:{path}"
            assert R.lib().lib.rw_code_end(code, len(code)) == len(code)
            n += 1
    assert n > 1500


def check_rewrite(code: bytes, kinds: int | None = None) -> tuple[bytes, list[R.Edit]]:
    """The planner's properties on one function's opcodes; returns (rewritten, edits)."""
    edits = R.plan(code, kinds)
    starts = R.insn_starts(code)
    index = {s: i for i, s in enumerate(starts)}
    heads = {e.offset for e in edits}
    for e in edits:
        assert e.offset in index and code[e.offset] == e.old
        assert R.kind_of(e.new) >= 0 and R.kind_of(e.old) < 0
        # The tail: the next instructions, all present, none of them a head.
        i = index[e.offset]
        tail = starts[i + 1:i + 1 + R.tail_insns(e.new)]
        assert len(tail) == R.tail_insns(e.new)
        assert not heads & set(tail)
    new = R.apply(code, edits)
    assert sum(a != b for a, b in zip(code, new, strict=True)) == len(edits)
    assert R.undo(new) == R.undo(code)
    assert R.plan(new, kinds) == []
    assert R.insn_starts(new) == starts
    return new, edits


def test_basics_corpus_properties(basics):
    counts: dict[str, int] = {}
    refused = []
    for f, mpy in basics:
        for path, data, start, made in functions(mpy):
            code = data[start:]
            new, edits = check_rewrite(code)
            assert R.undo(new) == code, f"{f.name}:{path}"
            if edits and (msg := verifies(mpy, data, start, made, new)):
                refused.append(f"{f.name}:{path}: {msg}")
            ref = reference_plan(code, R.insn_starts(code), set(R.default_kinds()))
            assert [(e.offset, e.old, e.new, e.kind) for e in edits] == ref, f"{f.name}:{path}"
            for e in edits:
                counts[e.kind] = counts.get(e.kind, 0) + 1
    # Every family the VM implements occurs in MicroPython's own tests.
    assert set(counts) == set(R.default_kinds()), counts
    assert refused == []


KIND_SETS = st.sets(st.sampled_from(["cmpj", "arith_si", "subscr_si", "forrange",
                                     "incr_fast", "return_none", "cache"]), min_size=1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(KIND_SETS, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_passes_with_some_kinds_compose(basics, passes, rnd):
    """Rewriting in several passes of different kinds keeps every property, matches the
    reference on partly rewritten code, and undoes to the original."""
    f, mpy = basics[rnd.randrange(len(basics))]
    for path, data, start, made in functions(mpy):
        code = cur = data[start:]
        for kinds in passes:
            ref = reference_plan(cur, R.insn_starts(cur), kinds)
            new, edits = check_rewrite(cur, R.kinds_mask(sorted(kinds)))
            assert [(e.offset, e.old, e.new, e.kind) for e in edits] == ref, f"{f.name}:{path}"
            cur = new
        assert R.undo(cur) == code
        assert verifies(mpy, data, start, made, cur) == "", f"{f.name}:{path}"


def test_cache_kind_is_selectable_alone():
    """The VM implements the cache opcodes (rw_opcodes.h LOCIOS_BC_CACHE_IN_VM), so the
    cache kind can be asked for alone or left out, and what it plans verifies."""
    assert "cache" in R.vm_kinds()
    assert set(R.default_kinds()) <= set(R.vm_kinds())
    src = "def f(o, L):\n    o.m(o.a)\n    return len(L) + G\n"
    mpy = H.parse_mpy(H.mpy_cross(src))
    (_, data, start, made), = [t for t in functions(mpy) if t[0] == "<module>/0"]
    code = data[start:]
    new, edits = check_rewrite(code, R.kinds_mask(["cache"]))
    assert sorted((code[e.offset], e.new) for e in edits) == [
        (0x12, 0x1D), (0x12, 0x1D), (0x13, 0x1E), (0x14, 0x1F)]
    assert verifies(mpy, data, start, made, new) == ""
    others = [k for k in R.vm_kinds() if k != "cache"]
    assert all(e.kind != "cache" for e in R.plan(code, R.kinds_mask(others)))


def test_verifier_refuses_what_the_planner_never_emits():
    """The replacement check the tests rely on is not vacuous: a compare rewritten
    without its POP_JUMP tail, or a pattern's tail rewritten, is refused."""
    src = ("def f(a, L):\n    x = a < 3\n    for i in range(3, a):\n        if i > a:\n"
           "            L[i] = i\n    return x\n")
    mpy = H.parse_mpy(H.mpy_cross(src))
    (_, data, start, made), = [t for t in functions(mpy) if t[0] == "<module>/0"]
    code = data[start:]
    good, edits = check_rewrite(code)
    assert {e.kind for e in edits} >= {"forrange", "cmpj", "subscr_si", "arith_si"}
    assert verifies(mpy, data, start, made, good) == ""
    starts = R.insn_starts(code)
    lone_lt = next(s for s, n in zip(starts, starts[1:] + [len(code)], strict=True)
                   if code[s] == BINOP and code[n] not in POP_JUMPS)
    bad = bytearray(good)
    bad[lone_lt] = CMPJ[BINOP]
    assert "POP_JUMP" in verifies(mpy, data, start, made, bytes(bad))
    head = next(e.offset for e in edits if e.kind == "forrange")
    tail_lt = starts[starts.index(head) + 2]
    bad = bytearray(good)
    bad[tail_lt] = CMPJ[code[tail_lt]]
    assert verifies(mpy, data, start, made, bytes(bad)) != ""


def test_apply_checks_every_old_byte_first():
    # LOAD_CONST_NONE; RETURN_VALUE; BINARY_OP <; POP_JUMP_IF_TRUE +0
    code = bytes([0x51, 0x63, 0xD7, 0x43, 0x40])
    edits = R.plan(code)
    assert [(e.offset, e.kind) for e in edits] == [(0, "return_none"), (2, "cmpj")]
    bad = [edits[0], R.Edit(2, 0xD8, 0x03, "cmpj")]
    with pytest.raises(ValueError, match="edit 1"):
        R.apply(code, bad)
    with pytest.raises(ValueError, match="edit 0"):
        R.apply(code, [R.Edit(5, 0, 1, "cmpj")])


def test_decoding_stops_at_truncation_and_zero():
    # LOAD_GLOBAL with an unfinished var-uint; a jump with half its label; 0x00 ends.
    for code in (bytes([0x12, 0x80]), bytes([0x42, 0x80]), bytes([0x20, 0x01])):
        assert R.insn_starts(code) == []
        assert R.plan(code) == []
    assert R.insn_starts(bytes([0x51, 0x00, 0x63])) == [0]
    # MAKE_CLOSURE (0x20) and UNWIND_JUMP (0x40) take one extra byte.
    assert R.insn_starts(bytes([0x20, 0x81, 0x01, 0x02, 0x40, 0x05, 0x01, 0x51])) == [0, 4, 7]


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_are_safe(data):
    """On any bytes (UBSan build): nothing out of bounds, and planning then undoing
    never changes what undo sees."""
    try:
        base = R.undo(data)
    except ValueError:
        return  # an INCR_FAST byte without its tail: nothing canonical to compare
    new = R.apply(data, R.plan(data))
    assert R.undo(new) == base
    assert R.plan(new) == []


# ---- Generated programs -------------------------------------------------------------

LOCALS = st.sampled_from(["a", "b", "i", "n", "s"])
OPS = st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>", "<", ">",
                       "==", "<=", ">=", "!="])
ATOMS = st.one_of(LOCALS, st.integers(-20, 60).map(str), st.just("L[i]"), st.just("g"))
EXPRS = st.recursive(ATOMS, lambda e: st.tuples(e, OPS, e).map(
    lambda t: f"({t[0]} {t[1]} {t[2]})"), max_leaves=4)


def _body(depth: int):
    simple = [
        st.tuples(LOCALS, st.sampled_from(["+=", "-=", "*=", ">>=", "="]), EXPRS)
        .map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(LOCALS, st.integers(-16, 47)).map(lambda t: f"{t[0]} += {t[1]}"),
        st.tuples(LOCALS, st.integers(-16, 47)).map(lambda t: f"{t[0]} -= {t[1]}"),
        EXPRS.map(lambda e: f"L[i] = {e}"),
        st.just("return"),
        EXPRS.map(lambda e: f"return {e}"),
    ]
    if depth <= 0:
        return st.one_of(simple)
    inner = st.lists(_body(depth - 1), min_size=1, max_size=3).map(
        lambda ss: "".join("    " + ln + "\n" for s in ss for ln in s.split("\n")).rstrip("\n"))
    return st.one_of(simple + [
        st.tuples(EXPRS, inner).map(lambda t: f"if {t[0]}:\n{t[1]}"),
        st.tuples(EXPRS, inner).map(lambda t: f"while {t[0]}:\n{t[1]}"),
        st.tuples(LOCALS, EXPRS, inner).map(lambda t: f"for {t[0]} in range({t[1]}):\n{t[2]}"),
        st.tuples(LOCALS, EXPRS, EXPRS, inner).map(
            lambda t: f"for {t[0]} in range({t[1]}, {t[2]}, -2):\n{t[3]}"),
        st.tuples(LOCALS, inner).map(lambda t: f"for {t[0]} in range(1, 9):\n{t[1]}"),
    ])


PROGRAMS = st.lists(_body(2), min_size=1, max_size=5).map(
    lambda ss: "def f(a, b, L, g):\n    i = n = s = 0\n"
               + "".join("    " + ln + "\n" for s in ss for ln in s.split("\n")))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_generated_programs(src):
    mpy = H.generated_mpy(src)
    if mpy is None:
        return
    for _, fun, start, made in functions(mpy):
        code = fun[start:]
        new, edits = check_rewrite(code)
        assert R.undo(new) == code
        assert verifies(mpy, fun, start, made, new) == "", src
        ref = reference_plan(code, R.insn_starts(code), set(R.default_kinds()))
        assert [(e.offset, e.old, e.new, e.kind) for e in edits] == ref, src
