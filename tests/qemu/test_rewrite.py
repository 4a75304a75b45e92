# SPDX-License-Identifier: MIT
"""The rewriter in the guest (`_rw`; vm/rewrite): planned rewrites keep results equal over
many inputs and undo to the original's SHA-256, frozen code and unplanned edits are
refused, aggressive mode rewrites at the first call (frozen code on a copy) and counts
it, and rewriting a function while a generator of it is suspended or while it recurses
keeps both working."""

from __future__ import annotations

import ast

from guestprog import prog

CODE = prog("rewrite")


def ok(guest, line: str, timeout: float = 30) -> None:
    out = guest.run(line, timeout)
    assert "Error" not in out and "Traceback" not in out, (line, out)


def test_rewrites_keep_results_and_undo_to_the_original(guest):
    guest.paste(CODE)
    ok(guest, "before = run_all(); d0 = [digest(f) for f in FNS]")
    kinds = ast.literal_eval(guest.eval("sorted(set(e[3] for f in FNS for e in _rw.plan(f)))"))
    assert kinds == ["arith_si", "cache", "cmpj", "forrange", "incr_fast", "return_none",
                     "subscr_si"]
    assert guest.eval("[_rw.apply(f, _rw.plan(f)) > 0 for f in FNS]") == "[True, True, True, True]"
    assert guest.eval("[d != digest(f) for d, f in zip(d0, FNS)]") == "[True, True, True, True]"
    assert guest.eval("[_rw.plan(f) for f in FNS]") == "[[], [], [], []]"  # idempotent
    assert guest.eval("run_all() == before") == "True"
    # Fast paths and guard misses both ran: small ints, big ints, floats, strings, errors.
    assert guest.eval("'TypeError' in before and '0' in before and len(set(before)) > 10") \
        == "True"
    changed = ast.literal_eval(guest.eval("[_rw.undo(f) for f in FNS]"))
    assert all(n > 0 for n in changed), changed
    assert guest.eval("[digest(f) for f in FNS] == d0") == "True"
    assert guest.eval("run_all() == before") == "True"


def test_guard_misses_are_counted(guest):
    ok(guest, "_rw.misses_reset(); _rw.apply(arith, _rw.plan(arith))")
    ok(guest, "arith(3, 9)")
    assert guest.eval("_rw.misses(arith)") == "0"
    ok(guest, "arith(2**40, 2**40 + 3)")
    assert int(guest.eval("_rw.misses(arith)")) > 0
    ok(guest, "_rw.undo(arith)")


def test_frozen_code_and_unplanned_edits_are_refused(guest):
    ok(guest, "import asyncio.core as core")
    assert guest.eval("type(core.sleep_ms).__name__") == "'function'"
    for call in ("_rw.apply(core.sleep_ms, [])", "_rw.plan(core.sleep_ms)",
                 "_rw.undo(core.sleep_ms)"):
        out = guest.run(call)
        assert "ValueError" in out and "not in the GC heap" in out, out
    e = ast.literal_eval(guest.eval("_rw.plan(ret)[0]"))
    for bad in ([(e[0], e[1] ^ 1, e[2])], [(e[0] + 1, e[1], e[2])], [(e[0], e[1], 0x63)],
                [(e[0], e[1], 0x0e if e[2] != 0x0e else 0x0f)]):
        out = guest.run(f"_rw.apply(ret, {bad!r})")
        assert "ValueError" in out, (bad, out)
    assert guest.eval("_rw.plan(ret)[0]") == repr(e)   # nothing was written
    out = guest.run("_rw.plan(ret, ['nope'])")
    assert "unknown kind" in out, out
    assert guest.eval("[e[3] for e in _rw.plan(arith, ['cmpj'])]").count("cmpj") >= 2


def test_aggressive_mode_rewrites_at_first_call(guest):
    ok(guest, "s0 = _rw.stats(); _rw.aggressive(True)")
    guest.paste("""
def agg(n):
    t = 0
    for i in range(n):
        if i > 2:
            t += i * 3
    return t
def mk(x):
    def inner(y):
        return x + y if y < 10 else None
    return inner
""")
    assert guest.eval("agg(10), mk(4)(5), mk(4)(50)") == "(126, 9, None)"
    ok(guest, "s1 = _rw.stats(); was = _rw.aggressive(False)")
    assert guest.eval("was") == "True"
    assert guest.eval("_rw.plan(agg), _rw.plan(mk(1))") == "([], [])"
    assert guest.eval("s1['rewritten'] - s0['rewritten'] >= 3") == "True"
    assert guest.eval("s1['refused'] - s0['refused'], s1['last_refusal']") == "(0, '')"
    grew = ast.literal_eval(
        guest.eval("[k for k in s1['edits'] if s1['edits'][k] > s0['edits'][k]]"))
    assert set(grew) >= {"forrange", "cmpj", "arith_si", "return_none"}, grew
    # Off: a new function keeps its original bytes.
    guest.paste("def later(n):\n    return n < 3 and n + 1\n")
    ok(guest, "later(1)")
    assert guest.eval("len(_rw.plan(later)) > 0") == "True"
    assert guest.eval("_rw.stats()['seen'] == s1['seen']") == "True"
    # Frozen code met in aggressive mode is copied (a static pool, as the hook may not
    # allocate) and the copy rewritten; it runs as the image's code did. Coroutines of a
    # frozen function made before the copy (waiting) move onto it when they first run.
    guest.paste("""
import asyncio
async def w(n):
    await asyncio.sleep_ms(1)
    return n * 2
def tb():
    try:
        asyncio.run(asyncio.wait_for(asyncio.sleep(1), 'x'))
    except TypeError as e:
        return repr(e)
async def both(a, b):
    return await asyncio.gather(a, b)
""")
    ok(guest, "before = tb(); waiting = [asyncio.wait_for(w(i), 5) for i in (1, 2)]")
    ok(guest, "_rw.aggressive(True); r = asyncio.run(both(*waiting)); after = tb(); "
              "r2 = asyncio.run(both(w(3), asyncio.wait_for(w(4), 5))); "
              "s2 = _rw.stats(); _rw.aggressive(False)")
    assert guest.eval("r, r2, before == after, after") == \
        "([2, 4], [6, 8], True, \"TypeError('coroutine expected',)\")"
    assert guest.eval("s2['copied'] - s1['copied'] >= 5, s2['frozen'] == s1['frozen']") == \
        "(True, True)"
    assert guest.eval("s2['rewritten'] - s1['rewritten'] >= s2['copied'] - s1['copied']") \
        == "True"
    assert guest.eval("s2['refused'] - s1['refused'], s2['last_refusal']") == "(0, '')"


def test_rewrite_under_a_suspended_generator_and_recursion(guest):
    guest.paste("""
def gen(n):
    for i in range(n):
        if i % 2 == 0:
            yield i * 3
        else:
            yield None
def rec(n, flip):
    if n <= 0:
        return 0
    if n == flip:
        # rewrite, then undo, our own code while the frames above us run it
        _rw.apply(rec, _rw.plan(rec)) if not _rw.plan(rec) == [] else _rw.undo(rec)
    return n + rec(n - 1, flip) * 2 % 1000003
""")
    want = guest.eval("list(gen(9))")
    ok(guest, "g = gen(9); a = [next(g), next(g), next(g)]; _rw.apply(gen, _rw.plan(gen))")
    assert guest.eval("a + list(g)") == want
    ok(guest, "g = gen(9); a = [next(g), next(g)]; _rw.undo(gen)")
    assert guest.eval("a + list(g)") == want
    ok(guest, "g = gen(9); a = [next(g)]; _rw.apply(gen, _rw.plan(gen)); a.append(next(g)); "
              "_rw.undo(gen); a.append(next(g)); _rw.apply(gen, _rw.plan(gen))")
    assert guest.eval("a + list(g)") == want
    ok(guest, "_rw.undo(gen); _rw.undo(rec)")
    plain = guest.eval("[rec(40, 0), rec(40, 0)]")
    got = guest.eval("[rec(40, 20), rec(40, 20), rec(40, 39), rec(40, 1)]")
    assert got == "[" + ", ".join([ast.literal_eval(plain)[0].__repr__()] * 4) + "]"
