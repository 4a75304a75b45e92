# SPDX-License-Identifier: MIT
"""The trace field in the guest, through its Python API (`field`, `_field`) and the `lo`
console helpers: values, queries, provenance, snapshots, replay, bad input."""

from __future__ import annotations

import re

import pytest
from guestprog import prog

from tools.guest.guestconsole import Guest

# Pasted into the module's guest by the `g` fixture (conftest.py).
SETUP = prog("field")


# The value of an expression in the guest (AssertionError if it is not a literal).
ask = Guest.ask


def test_deposit_is_pending_until_tick_then_evaporates(g):
    g.run("f.deposit('food', (3, 4), 10.0, 7)")
    assert ask(g, "f.sense('food', (3, 4))") == 0.0
    assert ask(g, "f.tick()") == 1
    assert ask(g, "f.sense('food', (3, 4))") == 5.0        # (0 + 10) * (1 - 0.5)
    assert ask(g, "f.last('food', (3, 4)), f.last('food', (0, 0))") == (7, 0)


def test_queries(g):
    g.run("f.deposit('food', (5, 4), 2.0, 8); f.tick()")
    assert ask(g, "f.sense('food', (3, 4)), f.sense('food', (5, 4))") == (2.5, 1.0)
    assert ask(g, "f.topk('food', 5)") == [((3, 4), 2.5), ((5, 4), 1.0)]
    assert ask(g, "f.region('food', 0, 0, 16, 8)") == (3.5, 2.5, (3, 4))
    assert ask(g, "f.total('food')") == 3.5
    assert ask(g, "f.gradient('food', 4, 4)") == (-1, 0)   # W is the highest neighbour
    assert ask(g, "f.neighbourhood('food', 0, 0)")[:4] == (None, None, None, None)


def test_keyed_flavour_and_min_rule(g):
    g.run("f.deposit('work', 'build', 1.0, 3); f.deposit('work', b'lint', 0.15); f.tick()")
    assert ask(g, "f.sense('work', 'build')") == 0.5
    assert ask(g, "f.sense('work', 'lint')") == 0.0        # 0.075 < min 0.1: removed
    assert ask(g, "[k for k, *_ in f.keyed_items('work')]") == [b"build"]


def test_depositor_totals_and_journal(g):
    deps = ask(g, "f.depositors()")
    assert (7, 0, 1, 10.0) in deps and (8, 0, 1, 2.0) in deps
    rec = ask(g, "f.journal(0)")
    assert rec == (0, 0, "deposit", 0, (3, 4), 10.0, 7, 0)


def test_journal_loss_is_counted(g):
    g.paste("h = Field([grid('x', 4, 4)], journal=8)\nfor i in range(20): h.deposit('x', 0, 1.0)")
    info = ask(g, "h.info()")
    assert info["journal_lost"] == 12 and info["journal_oldest"] == 12
    assert "journal lost" in g.run("h.journal(3)")


def test_watchpoint_records_crossing(g):
    wid = ask(g, "f.watch('trail', (0, 0, 4, 4), 3.0)")
    g.run("f.deposit('trail', (1, 1), 8.0); f.tick()")
    w = ask(g, "f.watches()")[0]
    assert w[0] == wid and w[4] == 1 and w[6] is True
    nxt = ask(g, "f.info()['journal_next']")
    kinds = ask(g, f"[f.journal(q)[2] for q in range({nxt - 3}, {nxt})]")
    assert "watch" in kinds


def test_mass_invariant_checked_every_tick(g):
    g.paste("f.set_check(True)\nfor i in range(50):\n    f.deposit('trail', (i % 16, i % 8), 1.5)\n"
            "    f.tick()")
    assert ask(g, "f.check_invariant('trail', 1e-5), f.check_invariant('food', 1e-5)") == (
        True, True)
    before, dep, clipped, dropped, after = ask(g, "f.tick_stats('trail')")
    assert abs(after - 0.9 * (before + dep)) <= 1e-5 * (before + dep)


def test_snapshot_diff_restore(g):
    g.run("a = f.snap(); f.deposit('food', (0, 0), 4.0); f.tick(); b = f.snap()")
    assert ask(g, "a == b, a.tick + 1 == b.tick, len(a.digest)") == (False, True, 32)
    total, rows = ask(g, "diff(a, b)")
    assert len(rows) == min(total, 100) and ("food", (0, 0), 0.0, 2.0) in rows
    g.run("f.restore(a)")
    assert ask(g, "f.snap() == a, f.digest() == a.digest") == (True, True)
    assert ask(g, "Field.from_snapshot(b).digest() == b.digest") is True


def test_replay_reproduces_digest(g):
    g.paste("p = Field([grid('t', 16, 8, E=0.1, G=0.4), keyed('w', 8, E=0.3)], journal=256)\n"
            "s = p.snap()\nfor i in range(30):\n"
            "    p.deposit('t', (i % 16, (3 * i) % 8), 0.25 * i, 40 + i % 3)\n"
            "    p.deposit('w', 'k%d' % (i % 3), 1.0)\n    p.tick()\nr = p.replay(s)")
    assert ask(g, "r.digest() == p.digest(), r.tick_count() == p.tick_count()") == (True, True)
    assert ask(g, "r.tick_count()") == 30


def test_replay_refuses_when_the_journal_lost_records(g):
    g.paste("q = Field([grid('x', 4, 4)], journal=8)\ns0 = q.snap()\n"
            "for i in range(20): q.deposit('x', i % 16, 1.0)")
    assert "FieldError: replay: journal lost the records needed" in g.run("q.replay(s0)")


BAD = [
    ("f.deposit('nope', (0, 0), 1.0)", "KeyError: unknown flavour 'nope'"),
    ("f.deposit('food', (16, 0), 1.0)", "IndexError: cell (16, 0) outside 'food'"),
    ("f.deposit('food', (-1, 0), 1.0)", "IndexError"),
    ("f.deposit('food', (0, 0), float('nan'))", "FieldError: deposit: amount must be finite"),
    ("f.deposit('food', (0, 0), float('inf'))", "FieldError: deposit: amount must be finite"),
    ("f.deposit('food', (0, 0), 1e39)", "FieldError: deposit: amount must be finite"),
    ("f.deposit('food', (0, 0), -1.0)", "FieldError: deposit: amount must be finite"),
    ("f.deposit('food', (0, 0), 1.0, 0)", "FieldError: depositor id must be"),
    ("f.deposit('work', 'x' * 16, 1.0)", "FieldError: key must be 1..15 bytes"),
    ("f.sense('work', (0, 0))", "TypeError"),
    ("f.restore(S0[:-1])", "FieldError: restore: snapshot truncated"),
    ("f.restore(S0[:40] + bytes([S0[40] ^ 1]) + S0[41:])",
     "FieldError: restore: snapshot checksum mismatch"),
    ("f.restore(S0[:8] + b'\\x02' + S0[9:])", "FieldError: restore: snapshot of another"),
    ("f.restore(b'GARBAGE!' + S0[8:])", "FieldError: restore: not a field snapshot"),
    ("f.restore(Field([grid('food', 2, 2)]).snap())", "FieldError: restore: snapshot layout"),
    ("Snapshot(b'LOCIFLD')", "FieldError: snap_info: snapshot truncated"),
    ("Field([grid('huge', 4096, 4096)] * 8)", "MemoryError: field needs"),
]


@pytest.mark.parametrize("stmt,message", BAD)
def test_bad_input_raises_and_leaves_field_unchanged(g, stmt, message):
    before = g.eval("state(f)")
    out = g.run(stmt)
    assert message in out, out
    assert g.eval("state(f)") == before


def test_lo_helpers_fit_an_80x24_terminal(g):
    g.run("from lo import *")
    g.run("colour(False)")
    assert "32x32" in g.run("demo()")
    for call in ("show('trail')", "show('food')", "top('food', 10)", "stats()", "journal(10)",
                 "at(8, 10)", "who(8, 10)", "watch()", "diff(snap(), (tick(), snap())[1])"):
        out = g.run(call)
        lines = out.rstrip("\n").split("\n")
        assert "Traceback" not in out, (call, out)
        assert len(lines) <= 23 and max(len(x) for x in lines) <= 80, (call, out)


def test_lo_show_follows_the_field(g):
    g.paste("use(Field([grid('h', 20, 5)]))\nfor x in range(20):\n"
            "    deposit('h', (x, 2), float(x))\ntick()")
    out = g.run("show('h')").split("\n")
    assert out[2] == "".join(" .:-=+*#%@"[int(x / 19 * 9 + 0.5)] for x in range(20))
    assert out[0] == " " * 20
    assert re.search(r"min 0 +max 19 +mass 190", out[5]), out
    top = g.run("top('h', 2)").split("\n")
    assert "(19, 2)" in top[1] and "repl" in top[1]
    # Colour: the raw bytes (guest.run strips escapes) hold the ramp's ends.
    g.send("colour(True); show('h'); colour(False)\r")
    raw = g.expect(re.escape(">>> "))
    assert b"\x1b[107m" in raw and b"\x1b[40m" in raw and b"48;5;" not in raw
    g.send("colour(256); show('h'); colour(False)\r")
    raw = g.expect(re.escape(">>> "))
    assert b"\x1b[48;5;231m" in raw and b"\x1b[48;5;16m" in raw
