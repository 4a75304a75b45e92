# SPDX-License-Identifier: MIT
"""The rewritten opcodes of vm/patches/0007 (vm/rewrite/rw_ops.h) in the guest, without the
rewriter: each test compiles one source twice, patches the head byte of one pattern in one
twin by hand (`_rwops.poke`) and requires both twins to give the same value, exception
type and traceback text (so the same line numbers) over many arguments: small-int
boundaries (small ints are 63-bit here: -2**62 .. 2**62-1), big ints, floats, strings,
lists, user classes, unbound locals, zero divisors, negative shifts, bad indices. Guard
misses are counted too, which proves the new opcode ran."""

from __future__ import annotations

import ast
import time

from guestprog import prog

from tools.guest.rwguest import DECODE_FIND

# `_rwops` is in the test image only.
TEST_MODULES = True

# Guest-side harness: decode()/find() from tools/guest/rwguest.py, then twins and helpers
# (tests/qemu/progs/rewrite_ops.py).
HARNESS = DECODE_FIND + prog("rewrite_ops")

# (name, binary-op number, new byte, source operator)
ARITH = [
    ("add", 27, 0x08, "a + b"), ("sub", 28, 0x09, "a - b"), ("mul", 29, 0x0a, "a * b"),
    ("floordiv", 31, 0x0b, "a // b"), ("mod", 33, 0x0c, "a % b"), ("and", 24, 0x0d, "a & b"),
    ("or", 22, 0x0e, "a | b"), ("xor", 23, 0x0f, "a ^ b"),
]
INPLACE = [("iadd", 14, 0x6a, "a += b"), ("isub", 15, 0x6b, "a -= b")]
SHIFT = [("rshift", 26, 0x6c, "a >> b"), ("lshift", 25, 0x6d, "a << b")]
CMPJ = [("<", 0, 0x02), (">", 1, 0x03), ("==", 2, 0x04), ("<=", 3, 0x05), (">=", 4, 0x06),
        ("!=", 5, 0x07)]


def _check(guest, src: str, name: str, pat: str, new: int, args: str, misses=None):
    guest.run(f"SRC = {src!r}")
    out = guest.eval(f"compare(SRC, {name!r}, {pat}, {new}, {args})", timeout=300)
    n, got_misses, undo_ok, bad = ast.literal_eval(out)
    assert bad == [], f"{name} {new:#x}: first mismatches {bad}"
    assert undo_ok, "locios_bc_undo does not give back the byte the patch replaced"
    assert n > 0
    if misses is not None:
        assert got_misses == misses, (got_misses, misses)
    return n, got_misses


def test_setup(guest):
    out = guest.paste(HARNESS, timeout=60)
    assert "Traceback" not in out, out
    assert guest.ask("len(PAIRS), len(SPAIRS)")[0] > 800


def test_small_int_arithmetic(guest):
    for name, op, new, expr in ARITH:
        src = f"def f(a, b):\n    return {expr}\n"
        n, misses = _check(guest, src, "f", f"(binop({op}),)", new, "PAIRS")
        # Only pairs of small ints whose result is a small int take the fast path.
        assert 0 < misses < n, (name, misses, n)
    for _name, op, new, expr in INPLACE:
        src = f"def f(a, b):\n    {expr}\n    return a\n"
        _check(guest, src, "f", f"(binop({op}),)", new, "PAIRS")
    for _name, op, new, expr in SHIFT:
        src = f"def f(a, b):\n    return {expr}\n"
        _check(guest, src, "f", f"(binop({op}),)", new, "SPAIRS")


def test_fast_paths_count_no_miss(guest):
    src = "def f(a, b):\n    return a * b\n"
    _check(guest, src, "f", "(binop(29),)", 0x0a, "[(3, 4), (-M, 1), (2**31, 2**30)]",
           misses=0)
    _check(guest, src, "f", "(binop(29),)", 0x0a, "[(2**31, 2**31), (M, 2), (1.0, 2)]",
           misses=3)


def test_compare_and_branch(guest):
    for sym, op, new in CMPJ:
        src = f"def f(a, b):\n    if a {sym} b:\n        return 1\n    return 0\n"
        _check(guest, src, "f", f"(binop({op}), (0x44,))", new, "PAIRS")
        # A while loop tests with POP_JUMP_IF_TRUE (the condition sits after the body).
        src = (f"def w(a, b):\n    n = 0\n    while a {sym} b:\n        n += 1\n"
               f"        if n == 4:\n            break\n        a = a + 1\n    return (n, a)\n")
        _check(guest, src, "w", f"(binop({op}), (0x43,))", new, "PAIRS")


def test_subscripts(guest):
    conts = "[[10, 20, 30], (1, 2, 3), [], (), 'abc', {0: 'z', -1: 'm'}, L([5, 6]), range(4)]"
    idx = "[0, 1, 2, 3, -1, -3, -4, M, -M - 1, M + 1, True, 1.0, 'x', None]"
    args = f"[(c, i) for c in {conts} for i in {idx}]"
    _check(guest, "def f(a, i):\n    return a[i]\n", "f", "((0x55,),)", 0x6e, args)
    sargs = f"[(c, i, v) for c in {conts} for i in {idx} for v in (7, None)]"
    _check(guest, "def f(a, i, v):\n    a[i] = v\n    return a\n", "f", "((0x56,),)", 0x6f,
           sargs)
    # del a[i] stores NULL through STORE_SUBSCR: never the fast path.
    _check(guest, "def f(a, i):\n    del a[i]\n    return a\n", "f", "((0x56,),)", 0x6f, args)


def test_for_range(guest):
    for step, cmp in (("", 0), (", -3", 1)):
        src = (f"def f(a, b):\n    s = []\n    for i in range(a, b{step}):\n"
               f"        s.append(i)\n        if len(s) > 9:\n            break\n    return s\n")
        pat = f"((0x58,), (0x5a,), binop({cmp}), (0x43,))"
        args = ("[(a, b) for a in (0, 5, -5, M - 4, -M + 3, M + 1, 1.5) "
                "for b in (0, 5, -5, M, -M - 1, M + 3, 2.5, 'x', None)]")
        _check(guest, src, "f", pat, 0xd4, args)


def test_incr_fast(guest):
    pat = "(range(0xb0, 0xc0), range(0x70, 0xb0), (0xe5, 0xe6), range(0xc0, 0xd0))"
    for stmt in ("x += 3", "x -= 16", "x += 47", "x += -16", "x -= 1"):
        src = f"def f(y, x):\n    {stmt}\n    return x\n"
        args = "[(0, v) for v in INTS + OTHERS]"
        _check(guest, src, "f", pat, 0xd5, args)
    # An unbound local: the slow path is LOAD_FAST's own error, from the same line.
    src = "def g(c):\n    if c:\n        x = 1\n    x += 1\n    return x\n"
    _check(guest, src, "g", pat, 0xd5, "[(0,), (1,)]", misses=1)


def test_return_none(guest):
    pat = "((0x51,), (0x63,))"
    src = ("def f(l):\n    try:\n        l.append(1)\n        return\n"
           "    finally:\n        l.append(2)\n")
    _check(guest, src, "f", pat, 0xd6, "[([],), ([0],), (None,)]", misses=0)
    src = "def g(n):\n    for i in range(n):\n        yield i\n    return\n"
    guest.run("src = " + repr(src))
    assert guest.ask("[list(fn(4)) for fn in twin(src, 'g')]") == [[0, 1, 2, 3]] * 2


def test_load_global_cache(guest):
    # Rebinding, deleting, rehashing the globals dict and shadowing a builtin, in both
    # twins' own globals between calls.
    for src, arg in (("def f(x):\n    return G + x\n", "1"),
                     ("def f(x):\n    return len(x)\n", "[1, 2]")):
        misses, bad = guest.ask(f"gscript({src!r}, 'f', ((0x12,),), 0x1d, {arg})", timeout=120)
        assert bad == [], bad
        assert misses > 0
    # A builtin is cached in the builtins table, and stops hitting as soon as a global
    # or an override in `builtins` (MICROPY_CAN_OVERRIDE_BUILTINS) takes its name.
    misses, bad = guest.ask("bscript('def f(x):\\n    return len(x)\\n', 'f', ((0x12,),), "
                            "0x1d, [1, 2])", timeout=120)
    assert bad == [], bad
    assert 0 < misses < 120, misses
    _check(guest, "def f(x):\n    return len(x)\n", "f", "((0x12,),)", 0x1d,
           "[([0] * i,) for i in range(30)]", misses=1)
    # A stable global hits after its first load.
    src = "def f(x):\n    return G\n"
    _check(guest, "G = 7\n" + src, "f", "((0x12,),)", 0x1d, "[(i,) for i in range(50)]",
           misses=1)


def test_load_attr_cache(guest):
    src = "def f(o):\n    return o.v\n"
    args = "[(o,) for k in range(3) for o in objs()]"
    _check(guest, src, "f", "((0x13,),)", 0x1e, args)
    # The same instance again and again: one miss (the fill), then hits.
    _check(guest, src, "f", "((0x13,),)", 0x1e, "[(o,) for o in [Q(4)] * 20]", misses=1)


METHOD_NAMES = ["m", "r", "st", "cm", "pr", "gen", "nat", "__dict__", "__next__",
                "__class__", "append", "missing"]


def _msrc(name: str) -> str:
    """`o.name(7)`; results that are new objects (generators, instances) compare by type
    name, the rest by value."""
    return (f"def f(o):\n    r = o.{name}(7)\n"
            "    if type(r) in (int, str, tuple, list, bool, float, type(None)):\n"
            "        return r\n    return type(r).__name__\n")


def test_load_method_cache(guest):
    # Every kind of attribute a call site can meet, on user classes (own, inherited and
    # overriding methods, __getattr__, a list base, a closure's class), instances with
    # a member shadowing the method, classes themselves and builtin objects. Each name
    # once with twin objects cycled three times, so the cache fills, hits and misses.
    args = "[(o,) for k in range(3) for o in mobjs()]"
    for name in METHOD_NAMES:
        _check(guest, _msrc(name), "f", "((0x14,),)", 0x1f, args)
    # The same instance again and again: one miss (the fill), then hits.
    src = "def f(o):\n    return o.m(7)\n"
    for cls in ("MA", "MG", "ML", "MH"):
        _check(guest, src, "f", "((0x14,),)", 0x1f, f"[({cls}(),)] * 20", misses=1)
    # An overriding subclass is another type: a miss each time the type changes.
    _check(guest, src, "f", "((0x14,),)", 0x1f, "[(MA(),), (MB(),)] * 5", misses=10)
    # Inherited (not in the type's own dict), staticmethod, classmethod, property,
    # __getattr__, generator, closure (MK.m closes over k), builtin and special names
    # never hit.
    for name, cls in (("m", "MC"), ("m", "MK"), ("st", "MA"), ("cm", "MA"), ("pr", "MA"),
                      ("zz", "MG"), ("gen", "MA"), ("nat", "MA"), ("__dict__", "MA")):
        _check(guest, _msrc(name), "f", "((0x14,),)", 0x1f, f"[({cls}(),)] * 6", misses=6)
    # Bound-method identity: the pushed self is the very instance.
    src = "def f(o):\n    x = o.r()\n    return x is o, id(x) == id(o)\n"
    _check(guest, src, "f", "((0x14,),)", 0x1f, "[(o,) for o in [MA(), MB(), MH()] * 4]")


def test_load_method_cache_class_changes(guest):
    # The method replaced on the class (another function, a staticmethod, classmethod,
    # builtin, property), deleted, shadowed by an instance member and un-shadowed, the
    # class dict rehashed, __getattr__ added, a second instance: every call in both
    # twins gives the same outcome.
    src = "def f(o):\n    return o.m(5)\n"
    misses, bad = guest.ask(f"mscript({src!r}, 'f', ((0x14,),), 0x1f)", timeout=120)
    assert bad == [], bad
    assert 0 < misses < 270, misses


def test_loops_stay_interruptible_and_budgeted(guest):
    # A patched `while i < n: i += 1` (CMPJ_LT + INCR_FAST) spends the same step budget
    # as the original and stops at the same point.
    src = "def k(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    guest.run(f"a, b = twin({src!r}, 'k')")
    guest.run("_rwops.poke(b, find(b, (binop(0), (0x43,))), 0x02)")
    guest.run("_rwops.poke(b, find(b, (range(0xb0, 0xc0), range(0x70, 0xb0), (0xe5,), "
              "range(0xc0, 0xd0))), 0xd5)")
    ra = guest.ask("(lambda r: (r[0], r[2]))(_budget.run(a, 10**6, 5000, 0, 0))")
    rb = guest.ask("(lambda r: (r[0], r[2]))(_budget.run(b, 10**6, 5000, 0, 0))")
    assert ra == rb, (ra, rb)
    assert guest.ask("b(1000), _rwops.misses(b)") == (1000, 0)
    # Ctrl-C reaches a patched endless loop.
    guest.run("_rwops.poke(spin, find(spin, (binop(4), (0x43,))), 0x06)")
    guest.send("spin()\r")
    guest.expect("spin\\(\\)\r\n", timeout=10)
    time.sleep(1.0)
    guest.send(b"\x03")
    out = guest.expect(">>> ", timeout=30).decode()
    assert "KeyboardInterrupt" in out, out
    assert guest.eval("1 + 1") == "2"
