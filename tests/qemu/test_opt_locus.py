# SPDX-License-Identifier: MIT
"""Locus code through the optimiser's gates (issue 20, item 1): a hot step and its helper
are gated in a copy of a Locus's namespace, on a stand-in ctx that records every call,
under the Locus's own budget, and swapped in place for every Locus running the code; a
run that swaps and rolls back while the Loci keep running deposits exactly what the same
run deposits with no optimiser. Under -icount, so the 'faster' gate's verdicts are exact."""

from __future__ import annotations

import ast

from guestprog import prog

ICOUNT = True
SETUP = prog("opt_locus")


def val(g, expr: str, timeout: float = 60):
    return ast.literal_eval(g.eval(expr, timeout=timeout))


def test_a_hot_helper_is_rewritten_in_place_for_every_locus(g):
    g.paste("""
M1 = colony(SRC, 3)
M1.run(40)
H1 = opt_locus.hot(M1)
HOT = [fn.__name__ for k, fn, a in H1]
E1 = {}
for k, fn, a in H1:
    E1[fn.__name__] = opt_locus.attempt(M1, fn)
""", timeout=600)
    assert "spread" in val(g, "HOT"), g.run("HOT")
    e = val(g, "E1['spread']")
    assert (e["verdict"], e["kind"], e["gate"]) == ("swapped", "rewrite", None), e
    assert e["gain"] > 1.05, e
    # Only a step gets a twin; a helper's is refused, and the journal says why.
    refused = val(g, "[(x['kind'], x['gate'], x['detail']) for x in opt.journal(20)"
                     " if x['function'] == 'spread' and x['verdict'] == 'rejected']")
    assert any(k == "native" and gate == "budget" and "only a Locus's step" in why
               for k, gate, why in refused), refused
    # One code for all twelve Loci, and it is the swapped one: the rewrite is theirs.
    ids = val(g, "sorted({_rw.code_id(r.ns['spread']) for r in M1.loci.values() if r.ns})")
    assert len(ids) == 1
    digests = val(g, "sorted({opt._journal.code_digest(r.ns['spread'])"
                     " for r in M1.loci.values() if r.ns})")
    assert digests == [e["new"]], (digests, e)
    # Decided once: no more heat-driven attempts for it.
    assert "spread" not in val(g, "[fn.__name__ for k, fn, a in opt_locus.hot(M1)]")
    # The Loci keep running the swapped code.
    before = val(g, "sum(d['steps'] for d in M1.ps())")
    g.run("M1.run(10)", timeout=300)
    assert val(g, "sum(d['steps'] for d in M1.ps())") >= before + 10 * 9


def test_a_step_twin_counts_ops_as_the_vm_and_runs_in_every_locus(g):
    # The step's twin counts ops as the VM does (gate 2 compared them on every replayed
    # call, the tight Loci's steps that run out of ops included) and measured faster.
    e = val(g, "E1['step']")
    assert (e["verdict"], e["kind"]) == ("swapped", "native"), e
    kinds = val(g, "sorted({type(r.step_fn).__name__ for r in M1.loci.values() if r.ns})")
    assert kinds == ["function"] and val(g, "all(r.step_fn is not r.ns['step']"
                                            " for r in M1.loci.values() if r.ns)")
    # Rolled back: every Locus steps its bytecode again, and the digest is the original's.
    sid = val(g, "[s[0] for s in opt.swaps() if s[1] == 'step'][0]")
    assert val(g, f"opt.rollback({sid})['verdict']") == "rolled back"
    assert val(g, "all(r.step_fn is r.ns['step'] for r in M1.loci.values() if r.ns)")


def test_a_step_twin_that_raises_a_new_type_live_is_rolled_back(g):
    g.paste("""
M3 = colony(BOOM, 5, n=4, tight=0)
M3.run(25)
E3 = [opt_locus.attempt(M3, fn) for k, fn, a in opt_locus.hot(M3) if fn.__name__ == 'step']
M3.run(20)
R3 = opt_locus.check(M3)
""", timeout=600)
    e = val(g, "E3[0]")
    assert (e["verdict"], e["kind"]) == ("swapped", "native"), e
    r = val(g, "[(x['verdict'], x['detail']) for x in R3]")
    assert r == [("rolled back", "raised KeyError, a type its gates never saw")], r
    assert val(g, "all(x.step_fn is x.ns['step'] for x in M3.loci.values() if x.ns)")


def test_a_budget_still_stops_a_locus_in_rewritten_code(g):
    # A new Locus of the same source runs the swapped code at once; its steps loop far
    # past its ops budget, and the budget stops every one of them.
    sid = val(g, "[s[0] for s in opt.swaps() if s[1] == 'spread']")
    assert sid, g.run("opt.swaps()")
    g.paste("""
LONG = M1.spawn(dict(man(40, SRC), args={'most': 100000}, budget={'ops': 2000}))
M1.run(6)
LI = M1.info(LONG)
""", timeout=300)
    info = val(g, "{'state': LI['state'], 'log': LI['log']}")
    assert any("ops budget exhausted (2000 ops)" in x for x in info["log"]), info


def test_loci_deposit_the_same_while_their_code_is_swapped_and_rolled_back(g):
    g.paste("OFF, ON = stress()", timeout=1500)
    off, on = val(g, "OFF"), val(g, "ON")
    did = val(g, "DID")
    # The optimiser did swap and roll back, several times, while the Loci ran.
    assert did["swapped"] >= 2 and did["rolled back"] >= 2, did
    # Some steps ran out of their ops budget: the rewritten code must count ops the way
    # the original does for those to land on the same steps.
    assert off["strikes"] > 0, off
    # Field digest chain, step orders, ps rows (with ops), depositors and audit head.
    assert on == off, (on, off, did)


def test_the_optimiser_loci_gate_locus_code_from_the_heat_it_makes(g):
    g.paste("""
import opt_mesh
M2 = colony(SRC + "# served\\n", 11, flavours=opt_mesh.flavours())
S2 = opt_mesh.start(M2, n=2, console=False)
def served():
    return [e for e in S2.log if e[2] in ('spread', 'step')]
for i in range(150):
    M2.round()
    if any(e[4] == 'swapped' for e in served()):
        break
""", timeout=1500)
    log = val(g, "[(e[2], e[4], e[5]) for e in served()]")
    assert ("spread", "swapped", None) in log, g.run("opt_mesh.board(); S2.log[-8:]")
    heat = val(g, "[opt.by_key(k).__name__ for k, v in M2.field.topk('heat', 20)]")
    assert "spread" in heat or "step" in heat, heat
