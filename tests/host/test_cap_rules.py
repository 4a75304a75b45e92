# SPDX-License-Identifier: MIT
"""The capability table's rules one at a time on the C core: derivation never widens
(in its fields and in what it allows), revocation takes exactly the subtree, stale,
foreign, wrong-owner and expired handles fail, rates are charged up the tree."""

from __future__ import annotations

import cap_cffi
from cap_model import DEPOSIT, IO, MEM, REC, REFUSED, SENSE, SPAWN, Scope, narrows
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cap_model import TABLE_ID, narrowing, scopes

ALL = Scope(rights=63, flavours=0xF)


def table(capacity=16, audit=256):
    return cap_cffi.CTable(capacity, audit, TABLE_ID)


REQUESTS = st.fixed_dictionaries({
    "op": st.sampled_from([1, 2, 4, 8, 16, 32]), "flavour": st.integers(0, 5),
    "x": st.integers(-1, 16), "y": st.integers(-1, 16), "w": st.integers(1, 4),
    "h": st.integers(1, 4),
    "key": st.none() | st.sampled_from([b"", b"a", b"ab", b"abc", b"task:", b"task:12"]),
    "amount": st.sampled_from([0.0, 0.25, 1.0, 4.0]), "now": st.sampled_from([0, 2, 7, 25])})


@settings(max_examples=300, deadline=None)
@given(data=st.data(), parent=scopes(), widen=st.booleans(), reqs=st.lists(REQUESTS, max_size=12))
def test_a_child_allows_nothing_its_parent_refuses(data, parent, widen, reqs):
    t = table()
    rc, p = t.grant(1, parent)
    assert rc == "OK"
    child = data.draw(scopes() if widen else narrowing(parent))
    rc, c = t.derive(p, 2, child, 1)
    expect = narrows(parent, child)
    assert rc == expect == t.narrows(parent, child)
    if rc != "OK":
        assert t.live().keys() == {p[1]}        # the refusal left nothing behind
        return
    for r in reqs:
        if t.check(c, 2, **r) == "OK":
            # Rates are charged to both, so the parent is asked with the child's charge
            # taken back out: the same question it would have answered a moment ago.
            t.t.slots[p[1]].used -= r["amount"] if r["op"] == DEPOSIT else 0.0
            assert t.check(p, 1, **r) == "OK", r


@st.composite
def forests(draw):
    """Derivation steps: (-1, owner) grants a root, (i, owner) derives from the i-th cap."""
    steps = []
    for n in range(draw(st.integers(1, 24))):
        parent = draw(st.integers(-1, n - 1)) if n else -1
        steps.append((parent, draw(st.integers(1, 3))))
    return steps


def grow(t, steps):
    refs, parents = [], []
    for parent, owner in steps:
        if parent < 0 or refs[parent] is None:
            rc, ref = t.grant(owner, ALL)
            parents.append(None)
        else:
            rc, ref = t.derive(refs[parent], owner, ALL, 0)
            parents.append(parent)
        refs.append(ref if rc == "OK" else None)
    return refs, parents


@settings(max_examples=200, deadline=None)
@given(steps=forests(), pick=st.integers(0, 23))
def test_revoke_takes_the_subtree_and_nothing_else(steps, pick):
    t = table(capacity=32, audit=512)
    refs, parents = grow(t, steps)
    target = pick % len(refs)
    doomed = {target}
    for i in range(len(refs)):          # parents precede children in `steps`
        if parents[i] in doomed:
            doomed.add(i)
    before = t.live()
    rc, n = t.revoke(refs[target])
    assert rc == "OK" and n == len(doomed)
    for i, ref in enumerate(refs):
        want = "REVOKED" if i in doomed else "OK"
        assert t.check(ref, steps[i][1], SENSE, 0) == want, (i, doomed)
    after = t.live()
    assert {i: before[i] for i in after} == after
    assert t.revoke(refs[target]) == ("OK", 0)      # already gone: nothing more


@settings(max_examples=100, deadline=None)
@given(steps=forests(), owner=st.integers(1, 3))
def test_retire_takes_what_the_owner_holds_with_descendants(steps, owner):
    t = table(capacity=32, audit=512)
    refs, parents = grow(t, steps)
    doomed = set()
    for i in range(len(refs)):
        if steps[i][1] == owner or parents[i] in doomed:
            doomed.add(i)
    rc, n = t.retire(owner)
    assert rc == "OK" and n == len(doomed)
    for i, ref in enumerate(refs):
        assert t.check(ref, steps[i][1], SENSE, 0) == ("REVOKED" if i in doomed else "OK")


def test_stale_foreign_wrong_owner_and_expired_handles_fail():
    t = table(capacity=1)
    _, a = t.grant(5, ALL)
    assert t.check(a, 5, SENSE, 1) == "OK"
    assert t.check(a, 6, SENSE, 1) == "OWNER"
    assert t.check((TABLE_ID + 1, a[1], a[2]), 5, SENSE, 1) == "FOREIGN"
    assert t.revoke(a) == ("OK", 1)
    _, b = t.grant(5, ALL)
    assert b[1] == a[1] and b[2] == a[2] + 1        # the slot came back, a new generation
    assert t.check(a, 5, SENSE, 1) == "REVOKED"
    assert t.derive(a, 5, ALL, 0)[0] == "REVOKED"
    t.revoke(b)
    _, c = t.grant(5, Scope(rights=63, flavours=1, expires=10))
    assert t.check(c, 5, SENSE, 0, now=9) == "OK"
    assert t.check(c, 5, SENSE, 0, now=10) == "EXPIRED"
    t.now = 10
    assert t.derive(c, 5, Scope(rights=1, flavours=1, expires=10), 0)[0] == "EXPIRED"
    assert t.expire(10) == ("OK", 1)
    assert t.check(c, 5, SENSE, 0, now=3) == "REVOKED"
    reasons = [REC.unpack(r)[4] for r in t.log if r[16] == REFUSED]
    assert [cap_cffi.E[n] for n in ("OWNER", "FOREIGN", "REVOKED", "REVOKED", "EXPIRED",
                                    "EXPIRED", "REVOKED")] == reasons


def test_rate_is_charged_up_the_tree_and_reset_by_epoch():
    t = table()
    _, p = t.grant(1, Scope(rights=DEPOSIT, flavours=1, rate=3.0))
    _, c1 = t.derive(p, 2, Scope(rights=DEPOSIT, flavours=1, rate=2.0), 0)
    _, c2 = t.derive(p, 3, Scope(rights=DEPOSIT, flavours=1, rate=2.0), 0)
    assert t.check(c1, 2, DEPOSIT, 0, amount=2.0) == "OK"
    assert t.check(c1, 2, DEPOSIT, 0, amount=0.5) == "RATE"      # its own rate
    assert t.check(c2, 3, DEPOSIT, 0, amount=1.5) == "RATE"      # the parent's 3.0
    assert t.check(c2, 3, DEPOSIT, 0, amount=1.0) == "OK"
    assert t.check(c2, 3, DEPOSIT, 0, amount=float("nan")) == "AMOUNT"
    assert t.check(c2, 3, SENSE, 0) == "OP"
    t.epoch()
    assert t.check(c2, 3, DEPOSIT, 0, amount=2.0) == "OK"


def test_scope_of_place_and_hardware():
    t = table()
    _, a = t.grant(1, Scope(rights=SENSE | DEPOSIT, flavours=0b11, region=(2, 2, 4, 4),
                            keys=(b"task:",)))
    assert t.check(a, 1, SENSE, 1, x=5, y=5) == "OK"
    assert t.check(a, 1, SENSE, 1, x=5, y=5, w=2) == "REGION"
    assert t.check(a, 1, SENSE, 1, x=1, y=3) == "REGION"
    assert t.check(a, 1, SENSE, 2, x=3, y=3) == "FLAVOUR"
    assert t.check(a, 1, SENSE, 1, key=b"task:7") == "OK"
    assert t.check(a, 1, SENSE, 1, key=b"tas") == "KEY"
    assert t.check(a, 1, SENSE, 1) == "REGION"      # whole flavour: not for a region grant
    assert t.grant(1, Scope(rights=IO, io=(0x60, 0x64)), by=7)[0] == "AUTHORITY"
    _, h = t.grant(1, Scope(rights=IO | MEM | SPAWN, io=(0x60, 0x64), mem=(4096, 8191)))
    assert t.check(h, 1, IO, x=0x60, w=5) == "OK"
    assert t.check(h, 1, IO, x=0x60, w=6) == "IO"
    assert t.check(h, 1, MEM, x=8191) == "OK"
    assert t.check(h, 1, MEM, x=8192) == "MEM"
    assert t.check(h, 1, SPAWN) == "OK"
    assert t.derive(h, 2, Scope(rights=IO, io=(0x60, 0x65)), 0)[0] == "W_IO"
    assert t.derive(h, 2, Scope(rights=IO, io=(0x61, 0x62)), 1)[0] == "OK"

