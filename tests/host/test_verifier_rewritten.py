# SPDX-License-Identifier: MIT
"""The verifier on rewritten code (issue 7; vm/rewrite/rw_opcodes.h): every tests/basics function
with rewrite heads substituted at the pattern sites found by this file's own finder
(independent of vm/rewrite's C) passes the replacement check and is refused as ordinary
code; broken patterns, heads elsewhere and changed bytes are refused under the right rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

RULE = {name: i for i, name in enumerate(H.RULES)}
BASICS = H.MPY_DIR / "tests" / "basics"

# ---- An independent decoder and pattern finder (py/bc0.h formats, the spec's table) ----

BINOP = 0xD7
LESS, MORE, INPLACE_ADD, INPLACE_SUB = 0, 1, 14, 15
POP_JUMP_IF_TRUE, POP_JUMP_IF_FALSE = 0x43, 0x44
LOAD_NULL, ROT_THREE, ROT_TWO, DUP_TOP_TWO = 0x53, 0x5B, 0x5A, 0x58
LOAD_CONST_NONE, RETURN_VALUE, LOAD_SUBSCR, STORE_SUBSCR = 0x51, 0x63, 0x55, 0x56
ARITH_LO = [27, 28, 29, 31, 33, 24, 22, 23]   # -> 0x08 + index
ARITH_HI = [14, 15, 26, 25]                   # -> 0x6a + index
NEW = set(range(0x02, 0x10)) | set(range(0x6A, 0x70)) | {0xD4, 0xD5, 0xD6, 0x1D, 0x1E, 0x1F}


def insn_size(code: bytes, off: int) -> int:
    op, p = code[off], off + 1
    row = op >> 4
    if row in (1, 2, 3):            # qstr or var-uint (small ints are signed, same shape)
        while code[p] & 0x80:
            p += 1
        p += 1
    elif row == 4:                  # jump offset: one byte, or two with the top bit set
        p += 2 if code[p] & 0x80 else 1
    if op & 0x9E == 0:              # MAKE_CLOSURE*, UNWIND_JUMP: one extra byte
        p += 1
    return p - off


def code_end(code: bytes) -> int:
    end = len(code)
    while end > H.opcodes_start(code) and code[end - 1] == 0:
        end -= 1
    return end


def insns(code: bytes) -> list[tuple[int, int]]:
    """(offset, size) of every instruction, from the first opcode to the last."""
    out, off, end = [], H.opcodes_start(code), code_end(code)
    while off < end:
        n = insn_size(code, off)
        out.append((off, n))
        off += n
    return out


def sites(code: bytes) -> list[tuple[int, int, str]]:
    """(offset, new byte, family) of every pattern head, left to right; a pattern's tail
    instructions are covered and never heads. STORE_SUBSCR that deletes (LOAD_NULL;
    ROT_THREE; STORE_SUBSCR) is left alone: its value is NULL."""
    ins = insns(code)
    ops = [code[o] for o, _ in ins]
    out, covered = [], set()

    def at(i: int, k: int) -> int:
        return ops[i + k] if i + k < len(ops) else -1

    for i, (off, _) in enumerate(ins):
        if i in covered:
            continue
        op, tail = ops[i], 0
        if op == DUP_TOP_TWO and at(i, 1) == ROT_TWO and at(i, 2) in (BINOP + LESS, BINOP + MORE) \
                and at(i, 3) == POP_JUMP_IF_TRUE:
            out.append((off, 0xD4, "forrange"))
            tail = 3
        elif 0xB0 <= op < 0xC0 and 0x70 <= at(i, 1) < 0xB0 and at(i, 3) == op + 0x10 \
                and at(i, 2) in (BINOP + INPLACE_ADD, BINOP + INPLACE_SUB):
            out.append((off, 0xD5, "incr_fast"))
            tail = 3
        elif op == LOAD_CONST_NONE and at(i, 1) == RETURN_VALUE:
            out.append((off, 0xD6, "return_none"))
            tail = 1
        elif BINOP <= op <= BINOP + 5 and at(i, 1) in (POP_JUMP_IF_TRUE, POP_JUMP_IF_FALSE):
            out.append((off, 0x02 + op - BINOP, "cmpj"))
            tail = 1
        elif op >= BINOP and op - BINOP in ARITH_LO:
            out.append((off, 0x08 + ARITH_LO.index(op - BINOP), "arith_si"))
        elif op >= BINOP and op - BINOP in ARITH_HI:
            out.append((off, 0x6A + ARITH_HI.index(op - BINOP), "arith_si"))
        elif op == LOAD_SUBSCR:
            out.append((off, 0x6E, "subscr_si"))
        elif op == STORE_SUBSCR and not (at(i, -2) == LOAD_NULL and at(i, -1) == ROT_THREE):
            out.append((off, 0x6F, "subscr_si"))
        covered.update(range(i + 1, i + 1 + tail))
    return out


def substitute(code: bytes, chosen: list[tuple[int, int, str]]) -> bytes:
    out = bytearray(code)
    for off, new, _ in chosen:
        out[off] = new
    return bytes(out)


# ---- Corpus ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus():
    """(file, mpy, path, raw code, made, sites) for every function of tests/basics."""
    out = []
    for f in sorted(BASICS.glob("*.py")):
        mpy = H.parse_mpy(H.mpy_cross(f, f.name))
        for path, rc, made in H.functions(mpy):
            out.append((f.name, mpy, path, rc, made, sites(rc.code)))
    return out


def check(mpy, rc, made, new: bytes, prof: str = "trusted", orig: bytes | None = None):
    return H.replace(new, rc.code if orig is None else orig, mpy, len(rc.children), prof,
                     made=made)


def plain(mpy, rc, made, code: bytes):
    return H.verify_code(code, mpy.qstrs, mpy.n_obj, len(rc.children), made=made)[0]


def test_every_site_of_every_basics_function(corpus):
    """All heads at once: accepted as a replacement, refused as ordinary code (rule 1)."""
    families: dict[str, int] = {}
    functions = rewritten = 0
    bad = []
    for name, mpy, path, rc, made, found in corpus:
        functions += 1
        if not found:
            continue
        rewritten += 1
        for _, _, fam in found:
            families[fam] = families.get(fam, 0) + 1
        new = substitute(rc.code, found)
        v = check(mpy, rc, made, new)
        if not v.ok:
            bad.append(f"{name}:{path}: {v.msg}")
        p = plain(mpy, rc, made, new)
        assert p.rule == RULE["decode"] and "not implemented by the VM" in p.msg, p.msg
    assert bad == []
    assert functions > 1500 and rewritten > 500, (functions, rewritten)
    assert set(families) == {"cmpj", "arith_si", "subscr_si", "forrange", "incr_fast",
                             "return_none"}, families


def test_rewritten_code_keeps_its_profile(corpus):
    """Under 'locus' a rewritten function passes exactly when its original does."""
    n = 0
    for _, mpy, _, rc, made, found in corpus[::7]:
        if found:
            orig_ok = plain(mpy, rc, made, rc.code).ok and H.verify_code(
                rc.code, mpy.qstrs, mpy.n_obj, len(rc.children), prof="locus", made=made)[0].ok
            v = check(mpy, rc, made, substitute(rc.code, found), "locus")
            assert v.ok == orig_ok, v.msg
            n += 1
    assert n > 50


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_subset_of_sites_verifies(corpus, data):
    """Any subset of heads, also on top of an earlier partial rewrite (the original may
    itself be rewritten: both are undone before they are compared)."""
    cands = [c for c in corpus if c[5]]
    _, mpy, _, rc, made, found = data.draw(st.sampled_from(cands))
    pick = data.draw(st.lists(st.booleans(), min_size=len(found), max_size=len(found)))
    first = data.draw(st.lists(st.booleans(), min_size=len(found), max_size=len(found)))
    chosen = [s for s, b in zip(found, pick, strict=True) if b]
    new = substitute(rc.code, chosen)
    v = check(mpy, rc, made, new)
    assert v.ok, v.msg
    earlier = substitute(rc.code, [s for s, b in zip(found, first, strict=True) if b])
    assert check(mpy, rc, made, new, orig=earlier).ok
    if chosen:
        assert plain(mpy, rc, made, new).rule == RULE["decode"]


# ---- Refusals -------------------------------------------------------------------------

def _with(corpus, fam: str):
    for _, mpy, _, rc, made, found in corpus:
        for s in found:
            if s[2] == fam:
                yield mpy, rc, made, s


@pytest.mark.parametrize("fam", ["cmpj", "forrange", "incr_fast", "return_none"])
def test_a_broken_tail_is_refused(corpus, fam):
    """A tail instruction the contract does not allow there: rule 1, before anything."""
    n = 0
    for mpy, rc, made, (off, new, _) in _with(corpus, fam):
        code = bytearray(substitute(rc.code, [(off, new, fam)]))
        code[off + 1] = 0x59  # POP_TOP: no pattern has it as its first tail instruction
        v = check(mpy, rc, made, bytes(code))
        assert v.rule == RULE["decode"] and "not followed by" in v.msg, v.msg
        n += 1
    assert n > 0


def test_a_head_on_a_tail_byte_is_refused(corpus):
    """FORRANGE's BINARY_OP LESS and INCR_FAST's INPLACE_ADD are heads of other patterns
    on their own; inside a pattern they must stay original bytes."""
    n = 0
    for fam in ("forrange", "incr_fast"):
        for mpy, rc, made, (off, new, _) in _with(corpus, fam):
            inner = rc.code[off + 2]
            head = (0x02 + inner - BINOP if fam == "forrange"
                    else 0x6A + ARITH_HI.index(inner - BINOP))
            code = substitute(rc.code, [(off, new, fam), (off + 2, head, "inner")])
            v = check(mpy, rc, made, code)
            assert v.rule == RULE["decode"] and "tail holds a rewrite opcode" in v.msg, v.msg
            # Without the outer head the inner one is a valid site of its own.
            assert check(mpy, rc, made, substitute(rc.code, [(off + 2, head, "x")])).ok
            n += 1
    assert n > 10


def test_a_compare_not_followed_by_a_jump_is_refused():
    mpy = H.parse_mpy(H.mpy_cross("def f(a, b):\n    x = a < b\n    return x\n"))
    rc = mpy.root.children[0]
    off = rc.code.index(bytes([BINOP + LESS]), H.opcodes_start(rc.code))
    assert not sites(rc.code) or all(s[0] != off for s in sites(rc.code))
    v = check(mpy, rc, H.ROOT_MADE, substitute(rc.code, [(off, 0x02, "cmpj")]))
    assert v.rule == RULE["decode"] and "CMPJ_LT not followed by POP_JUMP" in v.msg, v.msg


def test_a_head_for_another_operation_is_refused(corpus):
    """ADD_SI where the original subtracts: the verifier accepts the shape, but it does
    not undo to the original byte (rule 7), with both bytes in the message."""
    n = 0
    for mpy, rc, made, (off, _, _) in _with(corpus, "arith_si"):
        if rc.code[off] == BINOP + 28:  # SUBTRACT
            v = check(mpy, rc, made, substitute(rc.code, [(off, 0x08, "wrong")]))
            assert v.rule == RULE["profile"] and "undoes to 0xf2, the original has 0xf3" \
                in v.msg, v.msg
            n += 1
    assert n > 0


def test_incr_fast_with_another_local_is_refused():
    """LOAD_FAST a; 1; +=; STORE_FAST b: the head would write b, not read a."""
    mpy = H.parse_mpy(H.mpy_cross("def f(a, b):\n    a += 1\n    return a + b\n"))
    rc = mpy.root.children[0]
    (off, new, fam), = [s for s in sites(rc.code) if s[2] == "incr_fast"]
    orig = bytearray(rc.code)
    orig[off + 3] = 0xC1      # the pattern now stores b (local 1)
    assert plain(mpy, rc, H.ROOT_MADE, bytes(orig)).ok
    assert sites(bytes(orig)) == [s for s in sites(bytes(orig)) if s[2] != "incr_fast"]
    code = bytearray(orig)
    code[off] = new
    v = check(mpy, rc, H.ROOT_MADE, bytes(code), orig=bytes(orig))
    assert v.rule == RULE["profile"] and "INCR_FAST undoes to 0xb1, the original has 0xb0" \
        in v.msg, v.msg


def test_incr_fast_on_a_cell_is_refused():
    """A local that is a closure cell is loaded with LOAD_FAST (the cell itself): the
    compiler never makes the pattern there; forced, the fast path would overwrite it."""
    mpy = H.parse_mpy(H.mpy_cross("def f():\n    a = 1\n    a = 2\n    g = lambda: a\n"
                                  "    return g\n"))
    rc = mpy.root.children[0]
    start = H.opcodes_start(rc.code)
    cell = rc.code[start - 1]   # the one cell-section byte: its local number
    # `a = 1; a = 2` (1, STORE_DEREF a, 2, STORE_DEREF a: six bytes) becomes
    # LOAD_FAST a; 1; +=; STORE_FAST a; None; POP_TOP.
    assert rc.code[start:start + 6] == bytes([0x81, 0x27, cell, 0x82, 0x27, cell])
    orig = bytearray(rc.code)
    orig[start:start + 6] = bytes([0xB0 + cell, 0x81, BINOP + INPLACE_ADD, 0xC0 + cell,
                                   LOAD_CONST_NONE, 0x59])
    code = bytearray(orig)
    code[start] = 0xD5
    v = check(mpy, rc, H.ROOT_MADE, bytes(code), orig=bytes(orig))
    assert v.rule == RULE["stack"] and "adds to a closure cell" in v.msg, v.msg


def test_store_subscr_si_never_deletes():
    mpy = H.parse_mpy(H.mpy_cross("def f(x, i):\n    del x[i]\n    x[i] = 1\n"))
    rc = mpy.root.children[0]
    stores = [o for o, _ in insns(rc.code) if rc.code[o] == STORE_SUBSCR]
    assert len(stores) == 2 and [s[0] for s in sites(rc.code) if s[2] == "subscr_si"] == [stores[1]]
    v = check(mpy, rc, H.ROOT_MADE, substitute(rc.code, [(stores[0], 0x6F, "x")]))
    assert v.rule == RULE["stack"] and "may store NULL" in v.msg, v.msg
    assert check(mpy, rc, H.ROOT_MADE, substitute(rc.code, [(stores[1], 0x6F, "x")])).ok


def test_changed_bytes_are_refused():
    mpy = H.parse_mpy(H.mpy_cross("def f(a):\n    while a < 1000:\n        a += 3\n    return a\n"))
    rc = mpy.root.children[0]
    found = sites(rc.code)
    new = substitute(rc.code, found)
    assert check(mpy, rc, H.ROOT_MADE, new).ok
    # An operand byte (the small int 1000's).
    off = next(o for o, n in insns(new) if new[o] == 0x22 and n == 3)
    bad = bytearray(new)
    bad[off + 1] ^= 1
    v = check(mpy, rc, H.ROOT_MADE, bytes(bad))
    assert v.rule == RULE["profile"] and "operand byte" in v.msg, v.msg
    # A prelude byte (n_state one larger still verifies).
    bad = bytearray(new)
    bad[0] += 8
    v = check(mpy, rc, H.ROOT_MADE, bytes(bad))
    assert v.rule == RULE["prelude"], v.msg
    # Longer: one more (dead) instruction.
    end = code_end(new)
    v = check(mpy, rc, H.ROOT_MADE, new[:end] + b"\x51\x63" + new[end:])
    assert v.rule == RULE["profile"] and "not the original's length" in v.msg, v.msg


def test_loops_close_through_the_fused_tests():
    """while and for-range loops close their back edge through CMPJ / FORRANGE_SI (they
    poll pending exceptions, rule 6); and every head is refused as ordinary code."""
    src = ("def f(n):\n    i = 0\n    s = 0\n    while i < n:\n        s += i\n        i += 1\n"
           "    for j in range(2, n):\n        s -= j\n    return s\n")
    mpy = H.parse_mpy(H.mpy_cross(src))
    rc = mpy.root.children[0]
    found = sites(rc.code)
    fams = sorted(s[2] for s in found)
    assert fams.count("cmpj") == 1 and fams.count("forrange") == 1 and "incr_fast" in fams
    for off, new, fam in found:
        if fam in ("cmpj", "forrange"):
            j = off + (1 if fam == "cmpj" else 3)
            size = insn_size(rc.code, j)
            v = rc.code[j + 1] if size == 2 else (rc.code[j + 1] & 0x7F) | rc.code[j + 2] << 7
            bias = 0x40 if size == 2 else 0x4000
            assert j + size + v - bias < off  # a backward edge
        one = substitute(rc.code, [(off, new, fam)])
        p = plain(mpy, rc, H.ROOT_MADE, one)
        assert p.rule == RULE["decode"] and re.search(
            r"offset 0x[0-9a-f]+ [A-Z_]+ opcode not implemented by the VM outside a checked "
            r"replacement \(rule 1: decode\)", p.msg), p.msg
    assert check(mpy, rc, H.ROOT_MADE, substitute(rc.code, found)).ok


# ---- Phase 2 caches -------------------------------------------------------------------

CACHE_SRC = "def f(o):\n    o.m(o.a)\n    return g\n"


def test_caches_are_unknown_when_the_vm_lacks_them():
    """Built as if the VM did not implement 0x1d..0x1f (LOCIOS_BC_CACHE_IN_VM=0): they are
    refused everywhere (rule 1), even in a replacement check."""
    with H.variant("LOCIOS_BC_CACHE_IN_VM=0"):
        mpy = H.parse_mpy(H.mpy_cross(CACHE_SRC))
        rc = mpy.root.children[0]
        off = rc.code.index(b"\x12", H.opcodes_start(rc.code))
        v = check(mpy, rc, H.ROOT_MADE, substitute(rc.code, [(off, 0x1D, "cache")]))
        assert v.rule == RULE["decode"] and "not implemented by the VM" in v.msg, v.msg


def test_caches_when_the_vm_has_them():
    """Built as if the VM implemented them: stack effects of LOAD_GLOBAL/ATTR/METHOD and
    their names checked by the profile as the originals' are."""
    with H.variant("LOCIOS_BC_CACHE_IN_VM=1"):
        mpy = H.parse_mpy(H.mpy_cross(CACHE_SRC))
        rc = mpy.root.children[0]
        heads = [(o, rc.code[o] + 0x0B, "cache") for o, _ in insns(rc.code)
                 if rc.code[o] in (0x12, 0x13, 0x14)]
        assert sorted(rc.code[o] for o, _, _ in heads) == [0x12, 0x13, 0x14]
        new = substitute(rc.code, heads)
        assert check(mpy, rc, H.ROOT_MADE, new, "locus").ok
        assert plain(mpy, rc, H.ROOT_MADE, new).rule == RULE["decode"]
        for src, what in (("def f(o):\n    return o._a\n", "'_a'"),
                          ("def f():\n    return machine\n", "'machine'")):
            mpy = H.parse_mpy(H.mpy_cross(src))
            rc = mpy.root.children[0]
            o = next(o for o, _ in insns(rc.code) if rc.code[o] in (0x12, 0x13))
            new = substitute(rc.code, [(o, rc.code[o] + 0x0B, "cache")])
            assert check(mpy, rc, H.ROOT_MADE, new, "trusted").ok
            v = check(mpy, rc, H.ROOT_MADE, new, "locus")
            assert v.rule == RULE["profile"] and what in v.msg and "_C " in v.msg, v.msg
