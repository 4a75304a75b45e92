# SPDX-License-Identifier: MIT
"""The Loci mesh in the guest: manifests, spawn-time refusals, capabilities, budgets
and containment, strikes and retirement, the scheduler's order, determinism, the
console and the background mesh."""

from __future__ import annotations

import re
import time

import manifests
import pytest
from guestprog import prog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.guest.guestconsole import Guest

# Pasted into the module's guest by the `g` fixture (conftest.py).
SETUP = prog("mesh")


# The value of an expression in the guest (AssertionError if it is not a literal).
ask = Guest.ask


@pytest.mark.parametrize("bad, field", [
    ("{'name': 'x y', 'code': 'def step(c): pass'}", "name"),
    ("{'name': 'a', 'code': 'def step(c): pass', 'budget': {'ops': 0}}", "budget.ops"),
    ("{'name': 'a', 'code': 'def step(c): pass', 'budget': {'wall': 3}}", "budget.wall"),
    ("{'name': 'a', 'code': 'def step(c): pass', 'caps': [{'flavours': ['nope'], "
     "'ops': ['sense']}]}", "caps[0].flavours"),
    ("{'name': 'a', 'code': 'def step(c): pass', 'attend': {'flavour': 'trail', "
     "'at': (99, 0)}}", "attend.at"),
    ("{'name': 'a', 'code': 'def step(c): pass', 'restart': 'always'}", "restart"),
    ("{'name': 'a'}", "code"),
])
def test_a_bad_manifest_is_refused_naming_the_field(g, bad, field):
    msg = ask(g, f"why(lambda: M.spawn({bad}))")
    assert msg.startswith(f"manifest: field '{field}'"), msg


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(batch=st.lists(manifests.manifest(), min_size=25, max_size=25))
def test_the_manifest_fast_path_builds_what_python_builds(g, batch):
    # loci/mod/mesh_manifest.c either builds exactly the dict locus_manifest.py's
    # definition builds (the same reprs: values, types and order) or leaves the manifest
    # to it; and it does take most of the manifests Python accepts.
    g.paste("B = [\n" + "".join(manifests.lit(m) + ",\n" for m in batch) + "]\n",
            timeout=120)
    res = ask(g, "fast_vs_python(B)", timeout=120)
    wrong = [r for r in res if not isinstance(r, int)]
    assert not wrong, wrong[0]
    accepted = res.count(1) + res.count(2)
    if accepted >= 5:
        assert res.count(2) >= 0.6 * accepted, (res.count(2), accepted)


@pytest.mark.parametrize("code, expect", [
    ("import machine\ndef step(ctx): pass", r"IMPORT_NAME 'machine' not permitted"),
    ("def step(ctx): print(1)", r"name 'print' is not available to a Locus"),
    ("def step(ctx): return ctx._m", r"'_m' not permitted"),
    ("def step(ctx): return step.__globals__", r"'__globals__' not permitted"),
    ("def step(ctx): return ().__class__", r"'__class__' not permitted"),
    ("def step(ctx):\n    global len\n    del len", r"deletes global 'len'"),
])
def test_code_naming_what_it_was_not_granted_is_refused_at_spawn(g, code, expect):
    msg = ask(g, f"why(lambda: M.spawn(man('bad', {code!r})))")
    assert re.search(expect, msg), msg


def test_a_walker_deposits_with_its_badge_and_moves(g):
    lid = ask(g, "M.spawn(man('walker', WALKER))")
    g.run("M.run(3)")
    assert ask(g, "M.field.last('trail', (1, 1))") == lid
    assert ask(g, f"M.info({lid})['pos']") == (4, 1)
    assert ask(g, f"M.info({lid})['state']") == "live"
    assert ask(g, f"M.info({lid})['steps']") == 3


def _strikes_to_retire(g, name, code, error, **kw):
    extra = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    lid = ask(g, f"M.spawn(man({name!r}, {code!r}{', ' + extra if extra else ''}))")
    g.run("M.run(40)")
    info = ask(g, f"(M.info({lid})['state'], M.info({lid})['strikes'], M.info({lid})['error'])")
    assert info[0] == "retired", info
    assert info[1] == 3, info
    assert re.search(error, info[2]), info
    return lid


def test_an_endless_loop_is_stopped_charged_and_retired(g):
    _strikes_to_retire(g, "spin", "def step(ctx):\n    while True:\n        pass",
                       r"ops budget exhausted \(2000 ops\)")


def test_a_bare_except_cannot_swallow_the_budget_stop(g):
    code = ("def step(ctx):\n    while True:\n        try:\n            while True:\n"
            "                pass\n        except:\n            pass\n        finally:\n"
            "            ctx.deposit('trail', 1.0)\n")
    _strikes_to_retire(g, "catcher", code, r"ops budget exhausted")


def test_endless_allocation_is_stopped(g):
    code = "def step(ctx):\n    a = []\n    while True:\n        a.append(bytearray(1000))"
    _strikes_to_retire(g, "hog", code, r"allocation budget exhausted \(16384 bytes\)")


def test_a_step_that_raises_is_charged(g):
    _strikes_to_retire(g, "raiser", "def step(ctx):\n    return 1 // 0",
                       r"raised ZeroDivisionError")


def test_a_deposit_outside_the_grant_is_refused_audited_and_charged(g):
    g.run("n0 = M.caps.audit_count()")
    code = ("def step(ctx):\n    try:\n        ctx.deposit('work', 1.0, 'k')\n"
            "    except:\n        pass")
    _strikes_to_retire(g, "thief", code, r"capability: deposit of 'work' not granted")
    assert ask(g, "M.field.sense('work', 'k')") == 0.0
    kinds = ask(g, "[r[1] for r in M.caps.audit(M.caps.audit_count() - n0)]")
    assert kinds.count("REFUSED") >= 3, kinds


def test_a_retired_locus_leaves_a_tomb_a_dump_and_an_audit_entry(g):
    lid = ask(g, "M.spawn(man('doomed', 'def step(ctx):\\n    return [][1]'))")
    g.run("M.run(40)")
    assert ask(g, f"M.field.sense('tomb', 'L{lid}')") > 0
    dump = ask(g, f"M.info({lid})['dump']")
    assert dump["pos"] == (1, 1) and len(dump["trail"]) == 9
    assert ask(g, f"M.caps.held({lid})") == []
    assert ask(g, "M.caps.audit_verify()") is True


def test_the_scheduler_steps_the_hottest_attention_first(g):
    g.paste("""
S = new(seed=5)
for i in range(4):
    S.spawn(man('n%d' % i, 'def step(ctx):\\n    pass', attend={'flavour': 'food', 'at': (i, 0)}))
S.field.deposit('food', (2, 0), 9.0)
S.field.deposit('food', (0, 0), 5.0)
S.field.tick()
S.round()
""")
    order = ask(g, "[S.info(i)['name'] for i in S.last_order]")
    assert order[:2] == ["n2", "n0"], order


def test_attention_to_a_key_or_a_region_and_a_wake_on_a_key_order_the_steps(g):
    # The scheduler's scan is C (loci/mod/modmesh.c); a key or a region goes to
    # Mesh._value. Region activation is the region's total (field.region()[0]).
    g.paste("""
KR = new(seed=3)
KR.spawn(man('cell', 'def step(ctx):\\n    pass', attend={'flavour': 'food', 'at': (9, 9)}))
KR.spawn(man('key', 'def step(ctx):\\n    pass', attend={'flavour': 'work', 'key': 'k'}))
KR.spawn(man('area', 'def step(ctx):\\n    pass',
             attend={'flavour': 'food', 'region': (0, 0, 4, 4)}))
kw = KR.spawn(man('keywait', 'def step(ctx):\\n    pass',
                  wake={'flavour': 'work', 'key': 'go', 'above': 0.5}))
KR.field.deposit('food', (1, 1), 2.0)
KR.field.deposit('food', (2, 2), 2.0)
KR.field.deposit('food', (9, 9), 3.0)
KR.field.deposit('work', 'k', 1.0)
KR.field.tick()
KR.round()
first = [KR.info(i)['name'] for i in KR.last_order]
KR.field.deposit('work', 'go', 1.0)
KR.field.tick()
KR.round()
""")
    assert ask(g, "first") == ["area", "cell", "key"], ask(g, "first")
    assert "keywait" in ask(g, "[KR.info(i)['name'] for i in KR.last_order]")


def test_a_wake_condition_holds_a_locus_until_the_trace_crosses_it(g):
    g.paste("""
W = new()
w = W.spawn(man('sleeper', 'def step(ctx):\\n    pass',
                wake={'flavour': 'food', 'at': (5, 5), 'above': 1.0}))
W.run(5)
before = W.info(w)['steps']
W.field.deposit('food', (5, 5), 3.0)
W.run(3)
""")
    assert ask(g, "before") == 0
    assert ask(g, "W.info(w)['steps']") == 2


def test_same_seed_same_field(g):
    g.paste("""
def colony(seed):
    m = new(seed)
    src = '''
def step(ctx):
    x, y = ctx.pos
    ctx.deposit('trail', 1.0 + ctx.random())
    ctx.goto((x + ctx.rand() % 3 - 1) % 16, (y + ctx.rand() % 3 - 1) % 16)
'''
    for i in range(6):
        m.spawn(man('r%d' % i, src, attend={'flavour': 'trail', 'at': (i, i)}))
    m.run(30)
    return m.field.digest()
""")
    a, b, c = ask(g, "(colony(3).hex(), colony(3).hex(), colony(4).hex())")
    assert a == b != c


def test_a_child_gets_only_narrower_rights(g):
    g.paste(r"""
P = new()
KID = {'name': 'kid', 'code': 'def step(ctx):\n    ctx.deposit("trail", 1.0)\n',
       'caps': [{'flavours': ['trail'], 'ops': ['deposit'], 'region': (0, 0, 4, 4)}],
       'budget': {'ops': 100, 'alloc': 4096, 'deposits': 4},
       'attend': {'flavour': 'trail', 'at': (2, 2)}}
GREEDY = {'name': 'greedy', 'code': 'def step(ctx):\n    pass\n',
          'caps': [{'flavours': ['work'], 'ops': ['deposit']}]}
PARENT = 'def init(ctx):\n    ctx.mem["kid"] = ctx.spawn(ctx.args["kid"])\n' \
         'def step(ctx):\n    pass\n'
WIDER = 'def step(ctx):\n    ctx.spawn(ctx.args["kid"])\n'
p = P.spawn({'name': 'parent', 'code': PARENT, 'args': {'kid': KID},
             'attend': {'flavour': 'trail', 'at': (0, 0)},
             'caps': [{'flavours': ['trail', 'food'], 'ops': ['sense', 'deposit'],
                       'spawn': True}]})
q = P.spawn({'name': 'wider', 'code': WIDER, 'args': {'kid': GREEDY},
             'caps': [{'flavours': ['trail'], 'ops': ['deposit'], 'spawn': True}]})
P.run(2)
""")
    kid = ask(g, "[r['id'] for r in P.ps() if r['name'] == 'kid'][0]")
    assert ask(g, f"P.info({kid})['parent']") == ask(g, "p")
    assert ask(g, "P.field.last('trail', (2, 2))") == kid
    assert re.search("spawn: no capability", ask(g, "P.info(q)['error']") or "")
    assert not [r for r in ask(g, "P.ps()") if r["name"] == "greedy"]
    # Revoking the parent's capability takes the child's with it.
    g.run("P.caps.revoke(P.loci[p].caps[0][0])")
    assert ask(g, f"P.caps.held({kid})") == []


def test_kill_keeps_deposits_and_restart_on_failure_respawns(g):
    g.paste("""
K = new()
k = K.spawn(man('keeper', WALKER))
K.run(2)
K.kill(k)
K.run(2)
r = K.spawn(man('phoenix', 'def step(ctx):\\n    return 1 // 0', restart='on-failure'))
K.run(60)
""")
    assert ask(g, "K.info(k)['state']") == "retired"
    assert ask(g, "K.field.last('trail', (1, 1))") == ask(g, "k")
    assert ask(g, "K.info(r)['restarts']") >= 1


def test_ctrl_c_while_a_locus_starts_stops_the_console_command(g):
    # A Locus's code and init run under its budget, where Ctrl-C comes back as RAISED
    # (KeyboardInterrupt): that is the console's interrupt, never a failed start the
    # mesh shrugs off (CI saw a colony's run go on to its end after a Ctrl-C this way).
    g.paste("I = new()\n")
    # Seconds of C work (a naive substring search, eight bytes a compare), whatever the
    # host: the Ctrl-C lands inside it.
    init = ("def init(ctx):\n    h, n = 'a' * 400000, 'a' * 2000 + 'b'\n"
            "    for i in range(100):\n        h.find(n)\n"
            "def step(ctx):\n    pass\n")
    g.send(f"I.spawn(man('slow', {init!r}, budget={{'ops': 2000, 'alloc': 1 << 20, "
           "'cycles': 0}))\r")
    g.expect(re.escape("}))"))
    time.sleep(1.0)
    g.send(b"\x03")
    out = g.expect(re.escape(">>> "), timeout=30).decode(errors="replace")
    assert "KeyboardInterrupt" in out, out
    info = ask(g, "I.info(max(I.loci))")
    assert info["state"] == "retired" and "interrupted" in info["error"], info


def test_replace_keeps_id_caps_and_memory(g):
    g.paste("""
R = new()
rid = R.spawn(man('old', 'def step(ctx):\\n    ctx.mem[\\'n\\'] = ctx.mem.get(\\'n\\', 0) + 1'))
R.run(2)
caps_before = len(R.caps.held(rid))
R.replace(rid, 'def step(ctx):\\n    ctx.mem[\\'n\\'] = ctx.mem.get(\\'n\\', 0) + 10')
R.run(1)
""")
    assert ask(g, "R.loci[rid].mem['n']") == 12
    assert ask(g, "len(R.caps.held(rid)) == caps_before") is True


def test_the_console_commands(g):
    g.run("from lo import *")
    g.run("use_mesh(M)")
    out = g.run("ps()")
    assert re.search(r"walker\s+live", out), out
    assert "retired" in out
    out = g.run("audit(3)")
    assert "chain ok" in out, out
    out = g.run("step(2)")
    assert re.search(r"round \d+, tick \d+: \d+ steps", out), out


def test_the_mesh_runs_in_the_background_while_the_repl_answers(g):
    g.run("r0 = M.rounds")
    g.run("resume()")
    time.sleep(2.0)
    t0 = time.monotonic()
    assert ask(g, "1 + 1") == 2
    assert time.monotonic() - t0 < 5.0
    g.run("pause()")
    r1 = ask(g, "M.rounds")
    assert r1 > ask(g, "r0")
    time.sleep(1.0)
    assert ask(g, "M.rounds") == r1


def test_loci_with_the_same_code_share_no_state(g):
    g.paste(r"""
I = new()
COUNT = 'n = 0\ndef step(ctx):\n    global n\n    n += 1\n    ctx.mem["n"] = n\n'
a = I.spawn(man('c1', COUNT))
I.run(3)
b = I.spawn(man('c2', COUNT))
I.run(2)
""")
    assert ask(g, "(I.loci[a].mem['n'], I.loci[b].mem['n'])") == (5, 2)
    assert ask(g, "I.loci[a].ns is not I.loci[b].ns") is True


def test_hostile_loci_are_contained_beside_a_foraging_colony(g):
    out = g.run("H = __import__('colonies.hostile', None, None, ['run']).run(seed=1, "
                "ticks=150, quiet=True)", timeout=600)
    assert "Traceback" not in out, out
    fates = ask(g, "sorted((k, v['outcome']) for k, v in H['hostile'].items())")
    assert all(o in ("retired", "refused at spawn") for _, o in fates), fates
    assert len(fates) == ask(g, "len(__import__('colonies.src_hostile', None, None, "
                                "['ALL']).ALL)") >= 19, fates
    # Foraging beside them delivers within 10 % of foraging alone (same seed).
    alone, beside = ask(g, "(H['delivered_alone'], H['delivered'])")
    assert alone > 0 and abs(beside - alone) <= 0.1 * alone, (alone, beside)
    assert ask(g, "1 + 1") == 2


def test_the_worked_example_in_mesh_md_runs(g):
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "loci" / "MESH.md").read_text()
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    src = "\n".join(line[4:] for line in block.splitlines()
                    if line.startswith((">>> ", "... ")))
    out = g.paste(src.replace("ps(); show('trail'); audit(5)", "ps()\naudit(5)"),
                  timeout=120)
    assert "Traceback" not in out, out
    assert len(re.findall(r"grazer-\d\s+live", out)) == 4, out
    assert "chain ok" in out
    assert ask(g, "m.field.total('trail')") > 0


def test_hardware_only_through_a_console_granted_range(g):
    g.paste(r"""
HW = new()
READER = 'def step(ctx):\n    ctx.mem["lsr"] = ctx.port_in(0x3fd)\n'
PROBE = 'def step(ctx):\n    ctx.port_in(0x60)\n'
# No cycles limit on the reader: a port read leaves TCG for QEMU's device model, whose
# time on a loaded host the guest's TSC counts; this checks the io grant only.
h1 = HW.spawn({'name': 'uart', 'code': READER, 'caps': [{'io': (0x3f8, 0x3ff)}],
               'budget': {'cycles': 0}})
h2 = HW.spawn({'name': 'probe', 'code': PROBE, 'caps': [{'io': (0x3f8, 0x3ff)}]})
h3 = HW.spawn({'name': 'none', 'code': PROBE, 'caps': GRANT})
HW.run(20)
""")
    assert ask(g, "HW.info(h1)['state'], HW.info(h1)['strikes']") == ("live", 0)
    assert ask(g, "0 <= HW.loci[h1].mem['lsr'] <= 255") is True
    assert ask(g, "HW.info(h2)['error']") == "capability: io 0x60..0x60 port outside grant"
    assert ask(g, "HW.info(h3)['error']") == "capability: io 0x60..0x60 not granted"


def test_churn_neither_fills_the_mesh_nor_stops_it_on_a_full_tomb_flavour(g):
    g.paste(r"""
C = mesh.Mesh([grid('trail', 8, 8)], max_loci=4)
for i in range(300):
    C.kill(C.spawn({'name': 'brief', 'code': 'def step(ctx):\n    pass\n'}))
C.run(2)
""", timeout=300)
    assert ask(g, "C.tombs_lost, C.retired, len(C.live())") == (300 - 256, 300, 0)


def test_spawns_after_a_soft_reset(g):
    # The mesh keeps a scratch and the dicts its manifest check copies on the heap, and a
    # soft reset starts the new heap where the old one was: nothing of them may survive
    # it. Last in the module: the reset ends the module's set-up.
    g.paste("S1 = new()\nfor i in range(20):\n    S1.spawn(man('a%d' % i, WALKER))\nS1.run(3)\n")
    g.send(b"\x04")
    out = g.expect(re.escape(">>> "), timeout=60).decode(errors="replace")
    assert "soft reboot" in out
    # Whatever lay where the old heap's blocks were is overwritten.
    g.paste("junk = [bytearray(b'\\xff' * 48) for i in range(40000)]\n" + SETUP, timeout=120)
    lid = ask(g, "M.spawn(man('after', WALKER))")
    g.run("M.run(2)")
    info = ask(g, f"M.info({lid})")
    assert info["state"] == "live" and info["steps"] == 2, info
    assert info["budget"] == {"ops": 2000, "alloc": 16384, "deposits": 64,
                              "cycles": 50000000, "kept": 65536}, info
