# SPDX-License-Identifier: MIT
"""The capability audit log on the C core: one record per audited operation, a SHA-256
chain that any flipped byte breaks (in the live log and in an export), export leaving a
CHECKPOINT, and a full log failing closed (audited operations refused, state unchanged)."""

from __future__ import annotations

import hashlib

import cap_cffi
from cap_model import CHECKPOINT, DEPOSIT, REC, REC_SIZE, SENSE, Scope, chain
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cap_model import TABLE_ID

ALL = Scope(rights=63, flavours=0xF)


def busy_table(n_ops, audit=512):
    """A table after a mix of every audited kind of operation."""
    t = cap_cffi.CTable(16, audit, TABLE_ID)
    for k in range(n_ops):
        _, a = t.grant(k % 3, ALL)
        _, b = t.derive(a, 7, Scope(rights=SENSE, flavours=1, expires=5 + k), 0)
        t.check(b, 8, SENSE, 0)                 # wrong owner: REFUSED
        t.check(b, 7, DEPOSIT, 0)               # op not granted: REFUSED
        t.check(b, 7, SENSE, 0)                 # allowed: not recorded
        if k % 2:
            t.revoke(a)
    t.expire(6)
    t.retire(0)
    return t


def test_every_audited_operation_is_one_record():
    t = cap_cffi.CTable(8, 64, TABLE_ID)
    _, a = t.grant(1, ALL)
    _, b = t.derive(a, 2, Scope(rights=1, flavours=1), 0)
    _, c = t.derive(b, 3, Scope(rights=1, flavours=1), 0)
    assert t.derive(b, 3, Scope(rights=2, flavours=1), 0)[0] == "W_RIGHTS"
    assert t.check(c, 3, SENSE, 0) == "OK"
    assert t.check(c, 9, SENSE, 0) == "OWNER"
    assert t.revoke(b) == ("OK", 2)
    kinds = [r[16] for r in t.log]
    assert kinds == [1, 2, 2, 3, 3, 4, 4]       # GRANT DERIVE DERIVE REFUSED REFUSED REVOKE x2
    assert [REC.unpack(r)[7] for r in t.log[-2:]] == [c[1], b[1]]     # leaves first
    assert [REC.unpack(r)[0] for r in t.log] == list(range(7))
    assert t.verify()


def test_chain_is_sha256_over_previous_head_and_record():
    t = busy_table(3)
    head = bytes(32)
    for r in t.log:
        head = hashlib.sha256(head + r).digest()
    assert head == t.head and t.verify()


@settings(max_examples=200, deadline=None)
@given(n_ops=st.integers(1, 6), where=st.integers(0, 10**6), bit=st.integers(0, 7),
       exports=st.integers(0, 2))
def test_any_flipped_byte_in_an_export_breaks_it(n_ops, where, bit, exports):
    t = busy_table(n_ops)
    for _ in range(exports):                    # later exports start at a CHECKPOINT
        t.export()
        assert t.grant(1, ALL)[0] == "OK"
    data = t.export()
    carried = t.log[0][56:88]
    assert t.log[0][16] == CHECKPOINT and len(t.log) == 1 and t.verify()
    assert chain(data) == cap_cffi.chain(data) == carried
    bad = bytearray(data)
    bad[where % len(bad)] ^= 1 << bit
    assert cap_cffi.chain(bytes(bad)) != carried
    assert chain(bytes(bad)) != carried
    assert cap_cffi.chain(data[:-1]) is None and cap_cffi.chain(data[REC_SIZE:]) is None


@settings(max_examples=100, deadline=None)
@given(n_ops=st.integers(1, 5), where=st.integers(0, 10**6), bit=st.integers(0, 7))
def test_any_flipped_byte_in_the_live_log_breaks_verify(n_ops, where, bit):
    t = busy_table(n_ops)
    assert t.verify()
    t.corrupt_log(where % (len(t.log) * REC_SIZE), 1 << bit)
    assert not t.verify()


def test_a_full_log_fails_closed_then_export_reopens_it():
    t = cap_cffi.CTable(8, 6, TABLE_ID)
    _, a = t.grant(1, ALL)
    _, b = t.derive(a, 2, Scope(rights=3, flavours=1, rate=1.0), 0)
    _, c = t.grant(3, Scope(rights=1, flavours=1, expires=2))
    assert t.check(b, 9, SENSE, 0) == "OWNER"
    assert t.check(b, 9, SENSE, 0) == "OWNER"
    assert t.grant(4, ALL)[0] == "OK"
    assert len(t.log) == 6
    live, log, head = t.live(), t.log, t.head
    # Everything that must leave a record is refused, and changes nothing.
    assert t.grant(5, ALL) == ("AUDIT_FULL", None)
    assert t.derive(a, 5, ALL, 0) == ("AUDIT_FULL", None)
    assert t.check(b, 9, SENSE, 0) == "AUDIT_FULL"
    assert t.revoke(a) == ("AUDIT_FULL", 0)
    assert t.retire(1) == ("AUDIT_FULL", 0)
    assert t.expire(3) == ("AUDIT_FULL", 0)
    assert t.now == 0
    assert t.live() == live and t.log == log and t.head == head
    # An allowed use needs no record, so it still passes (and is still charged).
    assert t.check(b, 2, DEPOSIT, 0, amount=1.0) == "OK"
    assert t.check(c, 3, SENSE, 0, now=5) == "AUDIT_FULL"   # expired, and not recordable
    data = t.export()
    assert len(data) == 6 * REC_SIZE and chain(data) == t.log[0][56:88]
    assert t.revoke(a) == ("OK", 2) and t.verify()
    assert t.check(b, 2, DEPOSIT, 0) == "REVOKED"
