# SPDX-License-Identifier: MIT
"""The optimiser's second tier (issue 20): native twins make direct calls into viper,
native and promoted code and step iterators without the generic protocol
(vm/patches/0021), and @micropython.native defs are candidates too: their heat is their
loops' back edges (`_rw.native_heat`), their def the one in the text their machine code
was compiled from. Runs under -icount so the A/B gate is exact."""

from __future__ import annotations

import ast

from guestprog import prog

ICOUNT = True
SETUP = prog("opt_tier")


def entries(g, expr: str) -> list[dict]:
    return ast.literal_eval(g.eval(expr))


def test_direct_calls_give_what_the_generic_calls_give(g):
    stock, tier = ast.literal_eval(g.eval("both(calls, 5)"))
    assert stock == tier, (stock, tier)
    assert stock[:12] == [7, 25, 25, 5, 15, 10, 20, 1, 7, "AB", 0, "Box"], stock
    assert len(stock) == 36, stock
    # The twin's calls really are the direct ones: its machine code differs from the
    # stock emitter's (other fun-table entries) while the def is the same.
    assert g.eval("_rw.machine_code(tier_twin(calls)) != _rw.machine_code(calls)") == "True"


def test_direct_iteration_gives_what_mp_iternext_gives(g):
    stock, tier = ast.literal_eval(g.eval("both(loops, 7)"))
    assert stock == tier, (stock, tier)
    assert stock[:5] == [7, 4, 1, -2, -5] and ("b", 1) not in stock, stock


def test_deep_direct_recursion_raises_instead_of_overflowing(g):
    # The direct call checks the C stack as the generic one does.
    assert g.eval("both(deep, 50)") == "[50, 50]"
    assert g.eval("both(deep, 100000)") == "['RuntimeError', 'RuntimeError']"
    assert g.eval("deep(10)") == "10"


def test_a_second_tier_loop_still_stops_on_its_budget(g):
    g.run("tw = tier_twin(nat_forever)")
    status, _value, ops = ast.literal_eval(g.eval("_budget.run(tw, 0, 4000, 0, 0)[:3]"))
    assert (status, ops) == (2, 4000)  # OPS: stopped by the twin's back-edge poll


def test_native_loops_are_counted_where_they_spin(g):
    g.run("_rw.native_heat(True); nat_call(range(3000))")
    assert int(g.eval("opt._gates.activity(nat_call)")) >= 3000
    assert g.eval("any(fn is nat_call for _k, fn, _a in opt.hot())") == "True"
    # A twin's loops are not counted: its function is decided.
    g.run("_rw.native_heat(True); tier_twin(nat_call)(range(3000))")
    assert g.eval("sum(n for _a, n in _rw.native_heat())") == "0"


def test_the_def_of_a_native_function_is_the_one_its_code_came_from(g):
    # Two texts define `twin_me`, differently; each function gets its own text's def.
    g.run("na, nb = {}, {}")
    g.run("exec('@micropython.native\\ndef twin_me(x):\\n    return x + 1\\n', na)")
    g.run("exec('@micropython.native\\ndef twin_me(x):\\n    return x + 2\\n', nb)")
    assert "x + 1" in g.eval("opt._source.def_source(na['twin_me'])")
    assert "x + 2" in g.eval("opt._source.def_source(nb['twin_me'])")
    # A text defining the name twice: which def compiled to which function is unknown.
    g.run("nc = {}; exec('@micropython.native\\ndef dup(x):\\n    return 1\\n"
          "@micropython.native\\ndef dup(x):\\n    return 2\\n', nc); opt.trust(nc)")
    assert g.eval("opt._source.def_source(nc['dup']) is None") == "True"
    assert g.eval("opt._policy._eligible(nc['dup'])") == "False"
    g.run("opt.forget(nc)")


def test_a_hot_native_function_is_swapped_for_its_twin_and_rolled_back(g):
    want = g.eval("nat_call(range(500))")
    g.run("opt.stop_recording()")
    assert g.eval("repr(opt.attempt(nat_call))") == "'None'"
    # While recorded, it is still the same function to its callers.
    assert g.eval("nat_call.__name__, repr(nat_call).startswith('<function nat_call')") == \
        "('nat_call', True)"
    g.run("_ = [nat_call(range(200 + k)) for k in range(4)]")
    e = entries(g, "opt.attempt(nat_call)")
    assert e["verdict"] == "swapped" and e["kind"] == "native", e
    assert e["gain"] > 1.1, e
    assert g.eval("_rw.twin(nat_call) is not None") == "True"
    assert g.eval("nat_call(range(500))") == want
    assert g.eval("nat_call.__name__, repr(nat_call).startswith('<function nat_call')") == \
        "('nat_call', True)"
    sid = int(g.eval("opt.swaps()[-1][0]"))
    r = entries(g, f"opt.rollback({sid})")
    assert r["verdict"] == "rolled back" and r["new"] == e["old"], r
    assert g.eval("_rw.twin(nat_call) is None, nat_call(range(500))") == f"(True, {want})"
