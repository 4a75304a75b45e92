# SPDX-License-Identifier: MIT
"""The capability table `_cap` in the guest: grant, derive, check, revoke, expire and the
audit log from Python; a Cap cannot be made or altered from Python; and the guest cycles
one check costs (printed; the numbers belong in the report, not in an assertion)."""

from __future__ import annotations

import re

from guestprog import prog

from tools.guest.guestconsole import Guest

# Pasted into the module's guest by the `g` fixture (conftest.py).
SETUP = prog("cap")


# The value of an expression in the guest (AssertionError if it is not a literal).
ask = Guest.ask


def test_grant_derive_and_check(g):
    assert ask(g, "a.badge, b.badge, c.badge") == (1, 2, 3)
    info = ask(g, "t.info(b)")
    assert info["rights"] == 3 and info["region"] == (4, 4, 4, 4) and info["parent"] == 0
    assert info["keys"] == (b"task:",) and info["rate"] == 2.0 and info["expires"] == 100
    assert ask(g, "t.check(b, 2, D, 0, x=5, y=5, amount=1.5)") == 0
    assert ask(g, "_cap.why(t.check(b, 2, D, 0, x=5, y=5, amount=1.0))") == "rate exceeded"
    assert ask(g, "_cap.why(t.check(b, 2, S, 0, x=9, y=5))") == "outside region"
    assert ask(g, "_cap.why(t.check(b, 9, S, 0, x=5, y=5))") == "wrong owner"
    assert ask(g, "_cap.why(t.check(b, 2, S, 1, x=5, y=5))") == "flavour not granted"
    assert ask(g, "_cap.why(t.check(c, 3, S, 0, key=b'task:8'))") == "key not granted"
    assert ask(g, "_cap.why(t.check(b, 2, S, 0, x=5, y=5, now=100))") == "expired"
    assert ask(g, "t.check(c, 3, S, 0, key='task:71')") == 0
    g.run("t.epoch()")
    assert ask(g, "t.check(b, 2, D, 0, x=5, y=5, amount=2.0)") == 0


def test_derivation_only_narrows(g):
    for kw, field in [("rights=S | D | SP", "rights"), ("flavours=3", "flavours"),
                      ("region=(3, 4, 2, 2)", "region"), ("keys=(b'tas',)", "keys"),
                      ("rate=2.5", "rate"), ("expires=0", "expires"), ("io=(1, 2)", "io"),
                      ("region=None", "region"), ("rate=None", "rate")]:
        out = g.run(f"t.derive(b, 5, {kw})")
        assert f"CapError: derive: widens {field}" in out, (kw, out)
    # Left out, a field keeps the parent's value.
    g.run("d = t.derive(b, 5, rights=S)")
    assert ask(g, "t.info(d)['region'], t.info(d)['rate'], t.info(d)['rights']") == (
        (4, 4, 4, 4), 2.0, 1)
    assert ask(g, "t.revoke(d)") == 1
    assert "CapError: grant: io and mem need" in g.run("t.grant(4, _cap.IO, io=(96, 100), by=1)")


def test_a_cap_cannot_be_forged_or_altered(g):
    for expr in ("type(a)()", "_cap.Cap()", "_cap.Cap(0, 1)"):
        assert "TypeError: can't create 'Cap' instances" in g.run(expr), expr
    assert "AttributeError" in g.run("a.badge = 7")
    assert "AttributeError" in g.run("a.slot = 5")
    assert ask(g, "a.badge, a.slot, a.gen") == (1, 0, 1)
    # A handle from another table is refused there, even with the same slot and gen.
    g.run("t2 = _cap.Table(capacity=4, audit=16); x = t2.grant(1, S, flavours=1)")
    assert ask(g, "(x.slot, x.gen) == (a.slot, a.gen)") is True
    assert ask(g, "_cap.why(t.check(x, 1, S, 0, x=1, y=1))") == "foreign handle"
    assert ask(g, "_cap.why(t2.check(a, 1, S, 0))") == "foreign handle"


def test_revoke_takes_descendants_and_the_log_says_so(g):
    g.run("k = t.grant(7, S, flavours=1); kc = t.derive(k, 8, flavours=1)")
    n0 = ask(g, "t.audit_count()")
    assert ask(g, "t.revoke(b)") == 2
    assert ask(g, "[r[1] for r in t.audit(2)], [r[5] for r in t.audit(2)]") == (
        ["REVOKE", "REVOKE"], [2, 1])                        # c (slot 2) before b (slot 1)
    assert ask(g, "t.audit_count()") == n0 + 2
    assert ask(g, "_cap.why(t.check(c, 3, S, 0, key=b'task:7'))") == "revoked"
    assert ask(g, "t.check(a, 1, S, 0, x=1, y=1), t.check(kc, 8, S, 0)") == (0, 0)
    assert ask(g, "t.held(3), t.held(8) == [kc]") == ([], True)
    assert ask(g, "t.retire(7)") == 2
    g.run("e = t.grant(9, S, flavours=1, expires=50)")
    assert ask(g, "t.expire(49), t.expire(50), t.now") == (0, 1, 50)


def test_audit_chain_export_and_fail_closed(g):
    assert ask(g, "t.audit_verify()") is True
    g.run("n = t.audit_count(); h = t.audit_head(); data = t.audit_export()")
    assert ask(g, "len(data) == n * _cap.REC_SIZE, t.audit_count()") == (True, 1)
    assert ask(g, "cp = t.audit(1)[0]; cp[1], cp[9] == n, cp[-1] == h") == ("CHECKPOINT", True,
                                                                            True)
    assert ask(g, "_cap.chain(data) == h, t.audit_verify()") == (True, True)
    assert ask(g, "bad = bytearray(data); bad[100] ^= 1; _cap.chain(bytes(bad)) == h") is False
    # A log with room for 4 records: the 5th audited operation is refused, nothing lost.
    g.run("f = _cap.Table(capacity=8, audit=4); r = f.grant(1, S, flavours=1)")
    g.run("f.check(r, 2, S, 0); f.check(r, 2, S, 0); f.check(r, 2, S, 0)")
    assert ask(g, "f.audit_count(), _cap.why(f.check(r, 2, S, 0))") == (4, "audit log full")
    assert "CapError: grant: audit log full" in g.run("f.grant(1, S)")
    assert "CapError: revoke: audit log full" in g.run("f.revoke(r)")
    assert ask(g, "f.check(r, 1, S, 0), f.audit_count(), f.audit_verify()") == (0, 4, True)
    g.run("fd = f.audit_export()")
    assert ask(g, "f.revoke(r), f.audit_count(), f.audit_verify()") == (1, 2, True)


def test_cost_of_one_check(g):
    """Guest TSC cycles per t.check(...) called from Python: allowed (no record) and
    refused (one audit record, one SHA-256), net of the same loop doing nothing."""
    # The fastest of many short batches: interrupts and emulator hiccups only add time.
    g.paste("""
def batch(tt, q, owner, n):
    r = range(n)
    t0 = time.ticks_cpu()
    if tt is None:
        for i in r:
            pass
    else:
        for i in r:
            tt.check(q, owner, S, 0, 3, 3)
    return time.ticks_cpu() - t0

def cost(batches, n):
    tt = _cap.Table(capacity=8, audit=batches * n + 2)
    q = tt.grant(11, S | D, flavours=1, region=(0, 0, 8, 8))
    best = [min(batch(t_, q, owner, n) for _ in range(batches))
            for t_, owner in ((None, 11), (tt, 11), (tt, 12))]
    assert tt.audit_count() == batches * n + 1 and tt.audit_verify()
    return best[0] // n, (best[1] - best[0]) // n, (best[2] - best[0]) // n
""")
    out = g.run("print('cap-cost', cost(40, 25))", timeout=120)
    m = re.search(r"cap-cost \((\d+), (-?\d+), (-?\d+)\)", out)
    assert m, out
    loop, allowed, refused = map(int, m.groups())
    print(f"\ncap check from Python, guest TSC cycles per call beyond an empty loop "
          f"({loop}/iteration): allowed {allowed}, refused and audited {refused}")
    assert allowed > 0 and refused > allowed      # a refusal also hashes a record


def test_a_use_no_capability_names_is_still_audited(guest):
    out = guest.paste("""
import _cap
T = _cap.Table(capacity=8, audit=4)
n0 = T.audit_count()
rc = T.refuse(42, _cap.DEPOSIT, 3)
n1 = T.audit_count()
rec = T.audit(1)[0]
full = [T.refuse(42, _cap.SENSE) for _ in range(4)]
""")
    assert "Traceback" not in out, out
    assert guest.eval("rc == _cap.E_OP and n1 == n0 + 1") == "True"
    assert (guest.eval("(rec[1], rec[3], rec[4], rec[5], rec[10])")
            == "('REFUSED', 42, 42, None, 'op not granted')")
    assert guest.eval("full[-1] == _cap.E_AUDIT_FULL and T.audit_verify()") == "True"
