# SPDX-License-Identifier: MIT
"""The optimiser's four gates in the guest (`opt`, vm/opt): a hot function is
recorded, verified, replayed, measured and swapped with a journal entry carrying both
SHA-256 digests; each gate can refuse; rollback restores the original bytes; guards that
keep failing roll a swap back on their own. The guest runs under -icount so the A/B
measurement is exact and the 'faster' verdicts cannot flip between runs."""

from __future__ import annotations

import ast
import time

from guestprog import prog

# The module's guest runs under -icount; the `g` fixture (conftest.py) pastes SETUP.
ICOUNT = True
SETUP = prog("opt")


def entry(g, expr: str) -> dict:
    return ast.literal_eval(g.eval(expr))


def test_a_hot_function_is_recorded_gated_and_swapped(g):
    g.run("drive()")
    hot = g.eval("[(k, f.__name__) for k, f, a in opt.hot(4)]")
    assert "'tri'" in hot, hot
    d0 = g.eval("hexd(tri)")
    tb0 = g.run("tri(3, 'x')")
    assert "TypeError" in tb0 and "in tri" in tb0, tb0
    assert g.eval("repr(opt.attempt(tri))") == "'None'"  # starts recording calls
    g.run("drive()")
    assert g.eval("len(_rw.recorded(tri))") == "8"
    e = entry(g, "opt.attempt(tri)")
    assert e["verdict"] == "swapped" and e["gate"] is None, e
    assert e["old"] == d0.strip("'") and len(e["new"]) == 64 and e["new"] != e["old"]
    assert e["new"] == g.eval("hexd(tri)").strip("'")    # the journal names what runs now
    kinds = {k for _o, k in e["rewrites"]}
    assert {"cmpj", "incr_fast", "arith_si"} <= kinds, kinds
    assert e["gain"] > 1.2, e                            # exact under -icount
    assert g.eval("tri(10, 3), tri(10, 2.5)") == "(135, 112.5)"
    assert g.run("tri(3, 'x')") == tb0                   # same traceback, same line
    assert entry(g, "opt.attempt(tri)") == e             # decided once
    assert g.eval("[s[0] for s in opt.swaps()]") == f"[{e['id']}]"


def test_rollback_restores_the_original_bytes(g):
    sid = ast.literal_eval(g.eval("opt.swaps()"))[0][0]
    r = entry(g, f"opt.rollback({sid})")
    assert r["verdict"] == "rolled back", r
    assert r["new"] == entry(g, f"opt.journal()[{sid - 1}]")["old"]
    assert g.eval("hexd(tri)").strip("'") == r["new"]
    assert g.eval("opt.swaps()") == "[]"
    assert "no live swap" in g.run(f"opt.rollback({sid})")


def test_output_is_compared_and_printing_code_can_pass(g):
    e = entry(g, "opt.consider(talk, inputs=[(3,), (0,)])")
    # talk's rewrite is only its loop test and an add: it verifies and replays the same
    # output; whether it is 2 % faster decides the verdict.
    assert e["gate"] in (None, "faster"), e
    assert "line" not in g.run("opt.consider(talk, inputs=[(2,)])")  # output was captured


def test_the_equivalence_gate_refuses_code_with_outside_effects(g):
    e = entry(g, "opt.consider(leaky, inputs=[(1,), (2,)])")
    assert e["verdict"] == "rejected" and e["gate"] == "equivalent", e
    assert "old returned" in e["detail"], e
    assert g.eval("hexd(leaky) == opt.journal(1)[0]['old']") == "True"  # nothing swapped


def test_the_faster_gate_refuses_a_rewrite_that_saves_nothing(g):
    e = entry(g, "opt.consider(slow, inputs=[(100000,)])")
    assert e["verdict"] == "rejected" and e["gate"] == "faster", e
    assert e["gain"] < 1.02, e


def test_nothing_to_rewrite_and_unreplayable_inputs_are_journaled(g):
    g.paste("def plain(x):\n    return x\n")
    assert entry(g, "opt.consider(plain, inputs=[(1,)])")["gate"] == "plan"
    e = entry(g, "opt.consider(first, inputs=[(open, 2)])")
    assert e["gate"] == "equivalent" and "no replayable inputs" in e["detail"], e


def test_guards_that_keep_missing_roll_the_swap_back(g):
    e = entry(g, "opt.consider(first, inputs=[([1, 2, 3], 3), ([5] * 50, 50)])")
    assert e["verdict"] == "swapped", e
    g.run("_ = [first([1.5] * 20, 20) for k in range(200)]")  # floats: guards miss
    out = ast.literal_eval(g.eval("[(x['verdict'], x['detail']) for x in opt.check()]"))
    assert len(out) == 1 and out[0][0] == "rolled back" and "guards missed" in out[0][1], out
    assert g.eval("hexd(first) == opt.journal(1)[0]['new']") == "True"


def test_log_prints_one_line_per_entry(g):
    lines = [x for x in g.run("opt.log(50)").splitlines() if x.strip()]
    assert len(lines) == int(g.eval("len(opt.journal(1000))")), lines
    assert any("swapped" in x and "tri" in x for x in lines), lines


def test_auto_runs_the_optimiser_while_the_console_waits(g):
    g.run("spin_more()")                       # spin is now the hottest undecided function
    g.run("opt.auto(True)")
    deadline = time.monotonic() + 120
    while "spin" not in g.eval("[e['function'] for e in opt.journal(3)]"):
        assert time.monotonic() < deadline, g.run("opt.log(5)")
        time.sleep(2)                          # idle: a pass every AUTO_PERIOD_MS
        g.run("spin_more()")                   # the calls the recording waits for
    e = entry(g, "[e for e in opt.journal(5) if e['function'] == 'spin'][0]")
    assert e["verdict"] == "swapped" and e["gain"] > 1.05, e
    assert g.eval("opt.auto(False)") == "False"
    assert g.eval("spin(10)") == "29"
