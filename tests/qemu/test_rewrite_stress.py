# SPDX-License-Identifier: MIT
"""Stress of in-place rewriting in the guest (issue 7's correctness bar): thousands of
seeded random `_rw.apply`/`_rw.undo` cycles made from inside the running code — under
suspended generators, exceptions unwinding through rewritten loops, deep recursion
rewriting the function its outer frames run, try/finally/with in rewritten loops — give
the results of an unrewritten twin (the same source compiled again), never crash, and the
final undo restores every function's original bytes (SHA-256). A budget stop in the middle
of a rewritten loop, then undo, then re-running, works too. The same rounds flipping
native promotion (vm/opt/mod/rw_promote.c) instead of rewrites match too."""

from __future__ import annotations

from guestprog import prog

SETUP = prog("xorshift32") + prog("rewrite_stress")


def ok(guest, line: str, timeout: float = 60) -> str:
    out = guest.run(line, timeout)
    assert "Error" not in out and "Traceback" not in out, (line, out)
    return out


def stress(guest, rounds: int, flips: int, applied: int, undone: int, raised: int) -> None:
    """`rounds` rounds: none may differ from the twin's; at least `flips` flips, of which
    1/applied applied, 1/undone undone, and at least `raised` exceptions thrown."""
    bad = guest.ask(f"[repr(x)[:600] for x in stress({rounds})][:3]", timeout=600)
    assert bad == [], bad
    st = guest.ask("ST")
    assert st["flips"] >= flips and st["applied"] >= st["flips"] // applied, st
    assert st["undone"] >= st["flips"] // undone and st["raised"] >= raised, st


def test_random_rewrites_under_running_code_match_the_twin(guest):
    guest.paste(SETUP)
    assert guest.eval("[digest(f) for f in fns(T)] == D0") == "True"
    assert guest.ask("all(_rw.plan(f) for f in fns(R))") is True
    # Thousands of cycles, most of them writing or restoring bytes, and exceptions thrown
    # through the running code on both sides.
    stress(guest, 100, flips=3000, applied=4, undone=10, raised=100)
    ok(guest, "[_rw.undo(f) for f in fns(R)]")
    assert guest.eval("[digest(f) for f in fns(R)] == D0") == "True"
    assert guest.ask("[_rw.undo(f) for f in fns(R)]") == [0] * 9


def test_budget_stop_in_a_rewritten_loop_then_undo_and_rerun(guest):
    ok(guest, "spin = R['spin']; n = _rw.apply(spin, _rw.plan(spin)); out = [-1]")
    assert guest.ask("n") >= 3   # incr_fast, cmpj, store_subscr at least
    ok(guest, "r = _budget.run(lambda o: spin(o, 10**9), out, 20000, 0, 0)")
    status, stopped = guest.ask("r[0], out[0]")
    assert status == 2, status                         # stopped by the ops budget
    assert 0 < stopped < 10**9, stopped
    # The twin stopped by the same budget gets as far: the fused ops poll the same way.
    ok(guest, "tout = [-1]; tr = _budget.run(lambda o: T['spin'](o, 10**9), tout, 20000, 0, 0)")
    assert guest.ask("tr[0], tout[0]") == (2, stopped)
    assert guest.ask("_rw.undo(spin) == n") is True
    assert guest.eval("digest(spin) == digest(T['spin'])") == "True"
    assert guest.ask("spin(out, 5000), out[0]") == (5000, 4999)
    ok(guest, "_rw.apply(spin, _rw.plan(spin))")
    assert guest.ask("spin(out, 7000), out[0]") == (7000, 6999)
    assert guest.ask("_budget.run(lambda o: spin(o, 10**9), out, 20000, 0, 0)[0]") == 2
    ok(guest, "_rw.undo(spin)")
    assert guest.eval("digest(spin) == D0[NAMES.index('spin')]") == "True"


def test_random_promotions_to_native_twins_under_running_code_match_the_twin(guest):
    # The same rounds with native promotion flipped instead: calls switch between the
    # bytecode and its native twin (generators made before a flip keep their code),
    # exceptions unwind through both, recursion's outer frames run one while inner calls
    # run the other; the final demotion leaves every function's bytes as they were.
    ok(guest, "FLIP[0] = pflip; ST.update(flips=0, applied=0, undone=0, raised=0)")
    assert guest.eval("all(TWIN[id(f)] is not None for f in fns(R))") == "True"
    stress(guest, 60, flips=2000, applied=10, undone=20, raised=60)
    ok(guest, "[_rw.demote(f) for f in fns(R)]")
    assert guest.eval("[_rw.twin(f) for f in fns(R)] == [None] * 9") == "True"
    assert guest.eval("[digest(f) for f in fns(R)] == D0") == "True"
