# SPDX-License-Identifier: MIT
"""The capability table's C core against tests/host/cap_model.py: random sequences of
grant, derive, check, revoke, retire, expire, epoch and export (hypothesis state machine),
with the model's state, the audit bytes and the chain head compared after every step,
and the properties that do not need the model checked on the C state alone."""

from __future__ import annotations

import os

import cap_cffi
from cap_model import DEPOSIT, IO, MEM, NONE, SENSE, Model, Scope, chain, narrows
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

TABLE_ID = 0x5EED_0000_0001
CAPACITY, AUDIT = 8, 48
OWNERS = st.integers(0, 4)
RATES = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.5, 10.0])
KEYS = st.sampled_from([b"", b"a", b"ab", b"abc", b"b", b"task:", b"task:1"])
OPS_LIST = [1, 2, 4, 8, 16, 32]
OPS = st.sampled_from(OPS_LIST)
AUDITED_NOTHING = ("ARG", "AUDIT_FULL")


@st.composite
def ranges(draw):
    lo = draw(st.integers(0, 40))
    return lo, lo + draw(st.integers(0, 40))


@st.composite
def scopes(draw):
    region = draw(st.none() | st.tuples(st.integers(0, 6), st.integers(0, 6),
                                        st.integers(1, 8), st.integers(1, 8)))
    return Scope(rights=draw(st.integers(0, 63)), flavours=draw(st.integers(0, 15)),
                 region=region, keys=draw(st.none() | st.lists(KEYS, max_size=3).map(tuple)),
                 rate=draw(RATES), expires=draw(st.sampled_from([0, 0, 3, 6, 12, 30])),
                 io=draw(st.none() | ranges()), mem=draw(st.none() | ranges()))


@st.composite
def narrowing(draw, p: Scope):
    """A scope that narrows p in every field (mostly), for derivations that succeed."""
    region = p.region
    if region is None:
        region = draw(st.none() | st.tuples(st.integers(0, 6), st.integers(0, 6),
                                            st.integers(1, 8), st.integers(1, 8)))
    elif draw(st.booleans()):
        x, y, w, h = region
        dx, dy = draw(st.integers(0, w - 1)), draw(st.integers(0, h - 1))
        region = (x + dx, y + dy, draw(st.integers(1, w - dx)), draw(st.integers(1, h - dy)))
    keys = p.keys
    if keys is not None and keys:
        keys = tuple(draw(st.sampled_from(keys)) + draw(st.sampled_from([b"", b"x", b":1"]))
                     for _ in range(draw(st.integers(0, 3))))
        keys = tuple(k[:15] for k in keys)
    elif keys is None and draw(st.booleans()):
        keys = draw(st.lists(KEYS, max_size=3).map(tuple))
    rate = p.rate if p.rate < 0 and draw(st.booleans()) else draw(
        st.sampled_from([r for r in (0.0, 0.5, 1.0, 2.5, 10.0) if p.rate < 0 or r <= p.rate]
                        or [p.rate]))
    expires = p.expires if draw(st.booleans()) else (
        draw(st.integers(1, p.expires)) if p.expires else draw(st.sampled_from([0, 5, 20])))

    def sub(r):
        if r is None:
            return None
        if draw(st.booleans()):
            return None
        lo = draw(st.integers(r[0], r[1]))
        return lo, draw(st.integers(lo, r[1]))

    return Scope(rights=p.rights & draw(st.integers(0, 63)),
                 flavours=p.flavours & draw(st.integers(0, 15)), region=region, keys=keys,
                 rate=rate, expires=expires, io=sub(p.io), mem=sub(p.mem))


class CapMachine(RuleBasedStateMachine):
    @initialize(audit=st.sampled_from([AUDIT, AUDIT, AUDIT, 200, 12, 3]))
    def setup(self, audit):
        self.c = cap_cffi.CTable(CAPACITY, audit, TABLE_ID)
        self.m = Model(CAPACITY, audit, TABLE_ID)
        self.refs = [(TABLE_ID + 1, 0, 1)]      # a foreign handle, then every one made
        self.expected = 0                       # records, counted from results alone
        self.exports: list[bytes] = []

    def _ref(self, data):
        """Mostly a live handle, else any ever seen (stale, foreign)."""
        live = [(TABLE_ID, i, s.gen) for i, s in enumerate(self.m.slots) if s.live]
        if live and data.draw(st.integers(0, 6)):
            return data.draw(st.sampled_from(live))
        return data.draw(st.sampled_from(self.refs))

    def _same(self, a, b):
        assert a == b, (a, b)

    def _any_live(self):
        return any(s.live for s in self.m.slots)

    @rule(owner=OWNERS, scope=scopes(), by=st.sampled_from([0, 0, 0, 0, 0, 1, 3]))
    def grant(self, owner, scope, by):
        got = self.c.grant(owner, scope, by)
        self._same(got, self.m.grant(owner, scope, by))
        if got[0] not in AUDITED_NOTHING:
            self.expected += 1
        if got[1]:
            self.refs.append(got[1])
            assert by == 0 or not scope.rights & (IO | MEM)

    @precondition(_any_live)
    @rule(data=st.data(), owner=OWNERS, widen=st.integers(0, 4).map(lambda n: n == 0))
    def derive(self, data, owner, widen):
        ref = self._ref(data)
        err, i = self.m.lookup(ref)
        parent = self.m.slots[i].scope if i is not None else Scope()
        scope = data.draw(scopes() if widen else narrowing(parent))
        by = data.draw(st.sampled_from([0, self.m.slots[i].owner if i is not None else 0, 4]))
        got = self.c.derive(ref, owner, scope, by)
        self._same(got, self.m.derive(ref, owner, scope, by))
        if got[0] not in AUDITED_NOTHING:
            self.expected += 1
        if got[1]:
            self.refs.append(got[1])
            assert narrows(parent, scope) == "OK"

    @precondition(_any_live)
    @rule(data=st.data(), op=OPS, flavour=st.sampled_from([0, 1, 2, 3, 33]), pos=st.sampled_from(
        ["cell", "rect", "key", "none"]), amount=st.sampled_from([0.0, 0.5, 1.0, 3.0, -1.0,
                                                                 float("inf"), float("nan")]),
        now=st.sampled_from([0, 0, 2, 5, 13, 40]))
    def check(self, data, op, flavour, pos, amount, now):
        ref = self._ref(data)
        err, i = self.m.lookup(ref)
        owner = data.draw(st.sampled_from([self.m.slots[i].owner if i is not None else 0] * 3
                                          + [2]))
        if i is not None and data.draw(st.booleans()):
            # Aim inside the grant, so that allowed uses and the rate are exercised.
            sc = self.m.slots[i].scope
            op = data.draw(st.sampled_from([b for b in OPS_LIST if sc.rights & b] or [op]))
            flavour = data.draw(st.sampled_from([f for f in range(4) if sc.flavours >> f & 1]
                                                or [flavour]))
        kw = dict(flavour=flavour, amount=amount, now=now)
        if pos in ("cell", "rect"):
            kw.update(x=data.draw(st.integers(0, 14)), y=data.draw(st.integers(-1, 14)))
            if pos == "rect":
                kw.update(w=data.draw(st.integers(1, 5)), h=data.draw(st.integers(1, 5)))
        elif pos == "key":
            kw.update(key=data.draw(KEYS | st.binary(max_size=16)))
        if op in (IO, MEM) and data.draw(st.booleans()):
            kw.update(x=data.draw(st.integers(-1, 90)), w=data.draw(st.integers(1, 9)))
        got = self.c.check(ref, owner, op, **kw)
        self._same(got, self.m.check(ref, owner, op, **kw))
        if got not in ("OK",) + AUDITED_NOTHING:
            self.expected += 1
        if got == "OK" and i is not None:
            sc = self.m.slots[i].scope
            assert sc.rights & op and self.m.slots[i].owner == owner
            assert not sc.expires or (now or self.m.now) < sc.expires
            if op in (SENSE, DEPOSIT):
                assert sc.flavours >> flavour & 1

    @precondition(_any_live)
    @rule(data=st.data(), by=st.sampled_from([0, 2]))
    def revoke(self, data, by):
        ref = self._ref(data)
        err, i = self.m.lookup(ref)
        before = self.c.live()
        doomed = set(self.m.subtree(i)) if i is not None else set()
        got = self.c.revoke(ref, by)
        self._same(got, self.m.revoke(ref, by))
        self.expected += got[1]
        after = self.c.live()
        if got[0] == "OK":
            # The whole subtree is gone and nothing else changed.
            assert got[1] == len(doomed)
            assert set(after) == set(before) - doomed
            assert all(after[j] == before[j] for j in after)
        else:
            assert after == before

    def _crowded(self):
        return sum(s.live for s in self.m.slots) >= CAPACITY // 2

    @precondition(_crowded)
    @rule(owner=OWNERS, by=st.sampled_from([0, 1]))
    def retire(self, owner, by):
        got = self.c.retire(owner, by)
        self._same(got, self.m.retire(owner, by))
        self.expected += got[1]
        if got[0] == "OK":
            assert all(v[1] != owner for v in self.c.live().values())

    @precondition(_crowded)
    @rule(now=st.integers(0, 40))
    def expire(self, now):
        got = self.c.expire(now)
        self._same(got, self.m.expire(now))
        self.expected += got[1]
        if got[0] == "OK":
            assert all(not v[5].expires or now < v[5].expires for v in self.c.live().values())

    @rule()
    def epoch(self):
        self.c.epoch()
        self.m.epoch()

    @rule(now=st.integers(0, 40))
    def set_now(self, now):
        self.c.now = now
        self.m.now = now

    @rule()
    def export(self):
        data = self.c.export()
        self._same(data, self.m.export())
        # The CHECKPOINT now in the log carries the head the export chains to.
        carried = self.c.log[0][56:88]
        if data:
            assert chain(data) == cap_cffi.chain(data) == carried
        else:                                   # nothing recorded yet: the genesis head
            assert carried == bytes(32)
        self.exports.append(data)
        self.expected = 1

    @invariant()
    def same_state(self):
        if not hasattr(self, "c"):
            return
        assert self.c.live() == self.m.live()
        assert self.c.log == self.m.log
        assert self.c.head == self.m.head and self.c.seq == self.m.seq
        assert self.c.now == self.m.now
        assert self.c.verify()

    @invariant()
    def audit_count_is_operation_count(self):
        if hasattr(self, "c"):
            assert len(self.c.log) == self.expected

    @invariant()
    def nothing_wider_than_its_parent(self):
        if not hasattr(self, "c"):
            return
        live = self.c.live()
        for _gen, _owner, parent, parent_gen, _used, scope in live.values():
            if parent == NONE:
                continue
            assert parent in live and live[parent][0] == parent_gen
            assert narrows(live[parent][5], scope) == "OK"
            assert self.c.narrows(live[parent][5], scope) == "OK"


CapMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("CAP_EXAMPLES", "150")), stateful_step_count=40,
    deadline=None, suppress_health_check=[HealthCheck.too_slow])
TestCapMachine = CapMachine.TestCase
