# SPDX-License-Identifier: MIT
"""The optimiser as Loci (issue 7, "the loop runs on itself"): the profiler's counters
become 'heat' traces, two optimiser Loci follow them, mark 'trying' and ask ctx.rewrite;
the runtime gates each hot function once, after the round, and deposits the outcome on
'opt'. A Locus without the rewrite right is stopped and audited. Under -icount, so the
'faster' gate's verdicts and the cycle counts are exact."""

from __future__ import annotations

import ast
import re

from guestprog import prog

# The module's guest runs under -icount; the `g` fixture (conftest.py) pastes SETUP.
ICOUNT = True
SETUP = prog("optimiser_mesh")


def val(g, expr: str, timeout: float = 30):
    return ast.literal_eval(g.eval(expr, timeout=timeout))


def test_two_optimiser_loci_get_every_hot_function_gated_once(g):
    assert val(g, "go(80)", timeout=600) > 0, g.run("opt_mesh.board(); ps()")
    log = val(g, "[(e[2], e[3], e[4], e[5]) for e in S.log if e[2] in WANT]")
    by_name = {}
    for name, lid, verdict, gate in log:
        by_name.setdefault(name, []).append((lid, verdict, gate))
    assert sorted(by_name) == sorted(("tri", "poly", "slow")), log
    assert all(len(v) == 1 for v in by_name.values()), log   # each served once
    assert by_name["tri"][0][1:] == ("swapped", None), log
    assert by_name["poly"][0][1:] == ("swapped", None), log
    assert by_name["slow"][0][1:] == ("rejected", "faster"), log
    # The journal has one entry per function and candidate kind (in-place rewrite,
    # native twin): nobody gated a function twice.
    names = val(g, "[(e['function'], e['kind']) for e in opt.journal(100)]")
    mine = [n for n in names if n[0] in ("tri", "poly", "slow")]
    assert len(mine) == len(set(mine)) and {n for n, _k in mine} == {"poly", "slow", "tri"}
    # Both optimiser Loci took work, and no key was asked for by both.
    ids = val(g, "OPT")
    assert {v[0][0] for v in by_name.values()} == set(ids), log
    a, b = val(g, "asked(OPT[0])"), val(g, "asked(OPT[1])")
    assert a and b and not set(a) & set(b), (a, b)
    # The functions still compute what they did.
    assert g.eval("tri(10, 3), poly(10), slow(5)") == "(135, 19, 6)"


def test_heat_and_outcomes_are_traces_the_console_shows(g):
    keys = val(g, "{f.__name__: opt.key(f).decode() for f in (tri, poly, slow)}")
    g.run("more(1)")             # the last outcome was deposited after the last tick
    out = g.run("top('opt')")
    ages = val(g, "{e[2]: M.rounds - e[0] for e in S.log if e[2] in WANT}")
    for name, amount in (("tri", 1.0), ("poly", 1.0), ("slow", 0.25)):
        row = re.search(rf"^\s*\d+\s+{keys[name]}\s+(\S+)\s+repl", out, re.M)
        # 'opt' evaporates 1 % a tick (a round here): what is left of the deposit made
        # at the decision, within 10 %.
        left = amount * 0.99 ** ages[name]
        assert row and 0.9 * left < float(row.group(1)) <= amount, (name, ages, out)
    heat = g.run("top('heat')")
    assert all(re.search(rf"^\s*\d+\s+{keys[n]}\s", heat, re.M) for n in keys), heat
    bars = g.run("show('heat')")   # a keyed flavour: its highest keys as bars
    assert all(re.search(rf"^{re.escape(keys[n])}\s+\S+ #+$", bars, re.M) for n in keys), bars
    assert re.search(r"^heat keyed t=\d+", bars, re.M), bars
    board = g.run("opt_mesh.board()")
    assert re.search(r"tri .* swapped by \d+", board) and "rejected (faster)" in board, board
    # The driver deletes a global, so the optimiser never offers it: it has no heat.
    assert val(g, "[opt.by_key(k).__name__ for k, v in M.field.topk('heat', 20)]").count(
        "work") == 0
    # A decided function gets no more heat: its trace only fades.
    h0 = val(g, f"M.field.sense('heat', {keys['tri']!r})")
    g.run("more(5)", timeout=120)
    assert val(g, f"M.field.sense('heat', {keys['tri']!r})") < h0


def test_a_locus_without_the_rewrite_right_is_stopped_and_audited(g):
    g.paste("""
ROGUE = '''
def step(ctx):
    try:
        ctx.rewrite(b'f1')
    except Exception:
        ctx.log('caught')
'''
R = M.spawn({'name': 'rogue', 'code': ROGUE,
             'caps': [{'flavours': ['heat'], 'ops': ['sense']}]})
M.round()
""")
    d = val(g, "(M.info(R)['strikes'], M.info(R)['error'], M.info(R)['log'])")
    assert d[0] == 1 and d[1] == "capability: rewrite not granted", d
    assert not any("caught" in x for x in d[2]), d       # the stop cannot be caught
    assert val(g, "[q for q in M.rewrites if q[1] == R]") == []
    rec = val(g, "[(r[1], r[4], r[8]) for r in M.caps.audit(10) if r[4] == R]")
    assert ("REFUSED", val(g, "R"), val(g, "_cap.REWRITE")) in rec, rec


def test_a_key_the_producer_never_heated_runs_nothing(g):
    g.paste("""
ASKER = '''
def step(ctx):
    ctx.log('got %s' % ctx.rewrite(b'nokey'))
    ctx.retire()
'''
A = M.spawn({'name': 'asker', 'code': ASKER, 'caps': [{'rewrite': True}]})
M.round()
""")
    assert any(x.endswith(": got True") for x in val(g, "M.info(A)['log']"))
    assert val(g, "[e[4] for e in S.log if e[1] == b'nokey']") == ["unknown key"]
    assert val(g, "M.rewrites") == []


def test_settled_optimiser_loci_sleep_until_something_is_hot(g):
    # Everything hot is decided: once the heat has faded (about 45 ticks), the optimiser
    # Loci step only every mesh.PATIENCE (50) rounds.
    g.paste("def rounds(n):\n    for i in range(n):\n        M.round()\n")
    g.run("rounds(60)")
    g.run("before = [M.loci[i].steps for i in OPT]")
    g.run("rounds(100)", timeout=300)
    slept = val(g, "[M.loci[i].steps - b for i, b in zip(OPT, before)]")
    assert all(1 <= n <= 3 for n in slept), slept
    # A function that gets hot wakes them, and is served.
    g.paste("""
def fresh(n):
    t = 0
    for i in range(n):
        t += i & 5
    return t
def served_fresh(limit):
    for i in range(limit):
        fresh(300)
        M.round()
        if any(e[2] == 'fresh' for e in S.log):
            return i
    return -1
""")
    assert val(g, "served_fresh(120)", timeout=600) >= 0, g.run("opt_mesh.board(); ps()")
    assert val(g, "fresh(10)") == 21


def test_measured_costs(g):
    # Not asserted against a target: printed for the report (-icount, guest cycles).
    first, cost, passes = val(g, "(S.first_swap, S.cost(), S.produced)")
    print(f"first swap at round {first}; producer {cost} cycles a pass over {passes} passes")
    assert first is not None and cost > 0
