# SPDX-License-Identifier: MIT
"""Field operations one by one: bad input leaves the field unchanged with a named error;
queries (neighbourhood, gradient, region, top-k) on hand-made fields; provenance
(journal ring and its counted loss, last depositor, depositor totals, watchpoints)."""

import math

import pytest
from field_cffi import CField, FieldError


def expect(code, fn, *args):
    with pytest.raises(FieldError) as e:
        fn(*args)
    assert e.value.code == code


def two_flavours():
    c = CField(journal_cap=8, deps_cap=3)
    c.add_grid("food", 4, 3, 0.1, 0.2, 10.0, 0.0)
    c.add_keyed("work", 2, 0.0, 10.0, 0.0)
    c.deposit_xy(0, 1, 1, 2.0, 1)
    c.deposit_key(1, b"a", 1.0, 1)
    c.tick()
    return c


def test_bad_deposits_leave_the_field_unchanged():
    c = two_flavours()
    c.deposit_key(1, b"b", 1.0, 1)
    state = (c.digest(), c.snapshot(), c.f.journal_next)
    for amount in (math.nan, math.inf, -math.inf, -1.0, -1e-30):
        expect("FIELD_ERR_AMOUNT", c.deposit_xy, 0, 0, 0, amount, 1)
        expect("FIELD_ERR_AMOUNT", c.deposit_key, 1, b"a", amount, 1)
    expect("FIELD_ERR_AMOUNT", c.deposit_xy, 0, 0, 0, 1e39, 1)   # inf once made float32
    expect("FIELD_ERR_RANGE", c.deposit_xy, 0, 4, 0, 1.0, 1)
    expect("FIELD_ERR_RANGE", c.deposit_xy, 0, 0, 3, 1.0, 1)
    expect("FIELD_ERR_RANGE", c.deposit_cell, 0, 12, 1.0, 1)
    expect("FIELD_ERR_FLAVOUR", c.deposit_xy, 2, 0, 0, 1.0, 1)
    expect("FIELD_ERR_KIND", c.deposit_xy, 1, 0, 0, 1.0, 1)
    expect("FIELD_ERR_KIND", c.deposit_key, 0, b"a", 1.0, 1)
    expect("FIELD_ERR_KEY", c.deposit_key, 1, b"", 1.0, 1)
    expect("FIELD_ERR_KEY", c.deposit_key, 1, b"x" * 16, 1.0, 1)
    expect("FIELD_ERR_FULL", c.deposit_key, 1, b"c", 1.0, 1)
    expect("FIELD_ERR_DEPOSITOR", c.deposit_xy, 0, 0, 0, 1.0, 0)
    assert (c.digest(), c.snapshot(), c.f.journal_next) == state


def test_bad_reads_and_setup():
    c = two_flavours()
    expect("FIELD_ERR_RANGE", c.sense_xy, 0, 4, 2)
    expect("FIELD_ERR_FLAVOUR", c.sense_xy, 5, 0, 0)
    expect("FIELD_ERR_KIND", c.gradient, 1, 0, 0)
    expect("FIELD_ERR_RANGE", c.region, 0, 1, 1, 4, 1)
    expect("FIELD_ERR_RANGE", c.region, 0, 0, 0, 0, 1)
    expect("FIELD_ERR_RANGE", c.neighbourhood, 0, 0, 3)
    expect("FIELD_ERR_FLAVOUR", c.find, "nope")
    assert c.find("work") == 1 and c.sense_key(1, b"absent") == 0.0
    expect("FIELD_ERR_NAME", c.add_grid, "food", 2, 2)
    expect("FIELD_ERR_NAME", c.add_grid, "", 2, 2)
    expect("FIELD_ERR_NAME", c.add_grid, "n" * 16, 2, 2)
    expect("FIELD_ERR_RANGE", c.add_grid, "big", 4097, 1)
    expect("FIELD_ERR_RANGE", c.add_grid, "flat", 0, 1)
    for e, g, cap, mn in ((1.5, 0, 1, 0), (math.nan, 0, 1, 0), (0, -0.1, 1, 0),
                          (0, 0, 0, 0), (0, 0, math.inf, 0), (0, 0, 2e30, 0), (0, 0, 1, 2)):
        expect("FIELD_ERR_PARAM", c.add_grid, "p", 2, 2, e, g, cap, mn)
    diffusing_keyed = c.lib.field_add_keyed(c.f, b"k", 4, c.params(0, 0.5, 1, 0), c.ffi.NULL)
    assert diffusing_keyed == c.lib.FIELD_ERR_PARAM      # keyed flavours have no neighbours
    expect("FIELD_ERR_NOMEM", c.add_grid, "huge", 4096, 4096)
    assert c.f.nflavours == 2


def test_deposits_are_pending_until_tick():
    c = CField()
    i = c.add_grid("food", 2, 2)
    c.deposit_xy(i, 1, 0, 3.0, 4)
    assert c.sense_xy(i, 1, 0) == 0.0 and c.last_xy(i, 1, 0) == 4
    c.tick()
    assert c.sense_xy(i, 1, 0) == 3.0


def test_cap_and_min():
    c = CField()
    i = c.add_grid("food", 1, 1, 0.5, 0.0, 4.0, 1.0)
    c.deposit_xy(i, 0, 0, 3.0, 1)
    c.deposit_xy(i, 0, 0, 3.0, 1)
    c.tick()
    assert c.sense_xy(i, 0, 0) == 2.0          # 6 clipped to 4, then halved
    assert c.stats(i)[2] == 2.0
    c.tick()
    assert c.sense_xy(i, 0, 0) == 1.0
    c.tick()
    assert c.sense_xy(i, 0, 0) == 0.0 and c.stats(i)[3] == 0.5
    k = c.add_keyed("work", 4, 0.5, 10.0, 0.3)
    c.deposit_key(k, b"x", 1.0, 1)
    c.deposit_key(k, b"zero", 0.0, 1)
    c.tick()
    assert c.keys(k) == [b"x"]                 # a 0 entry goes at the tick, even with min 0
    c.tick()
    c.tick()
    assert c.keys(k) == [] and c.sense_key(k, b"x") == 0.0


def test_neighbourhood_gradient_region_topk():
    c = CField()
    i = c.add_grid("food", 3, 3)
    for (x, y), v in {(0, 0): 5.0, (2, 0): 5.0, (1, 2): 7.0, (2, 2): 1.0}.items():
        c.deposit_xy(i, x, y, v, 1)
    c.tick()
    vals, mask = c.neighbourhood(i, 0, 0)
    assert mask == 0b110110000 and vals[4] == 5.0 and vals[0] == 0.0
    assert c.neighbourhood(i, 1, 1)[1] == 0x1FF
    assert c.gradient(i, 1, 1) == (0, 1)       # 7 below beats the two 5s above
    assert c.gradient(i, 1, 0) == (1, 0)       # tie between W and E: E comes first
    assert c.gradient(i, 0, 0) == (0, 0)       # nothing strictly higher
    assert c.region(i, 0, 0, 3, 3) == (18.0, 7.0, 7)
    assert c.region(i, 0, 0, 3, 1) == (10.0, 5.0, 0)   # tie: first in row-major order
    assert c.topk(i, 3) == [(7, 7.0, b""), (0, 5.0, b""), (2, 5.0, b"")]
    assert len(c.topk(i, 10)) == 4 and c.topk(i, 0) == []
    k = c.add_keyed("work", 8)
    for key, v in ((b"b", 2.0), (b"a", 2.0), (b"c", 9.0)):
        c.deposit_key(k, key, v, 1)
    c.tick()
    assert [(h[2], h[1]) for h in c.topk(k, 2)] == [(b"c", 9.0), (b"a", 2.0)]


def test_journal_ring_counts_its_loss():
    c = CField(journal_cap=4)
    i = c.add_grid("food", 2, 2)
    for n in range(6):
        c.deposit_cell(i, n % 4, 1.0, 10 + n)
    assert c.f.journal_next == 6 and c.f.journal_lost == 2
    assert c.lib.field_journal_oldest(c.f) == 2
    expect("FIELD_ERR_JOURNAL_LOST", c.journal, 1)
    expect("FIELD_ERR_RANGE", c.journal, 6)
    r = c.journal(5)
    assert (r["seq"], r["kind"], r["depositor"], r["where"], r["amount"]) == (5, 1, 15, 1, 1.0)
    c.tick()
    assert c.journal(6)["kind"] == c.lib.FIELD_REC_TICK and c.journal(6)["tick"] == 1


def test_last_depositor_and_totals():
    c = CField(deps_cap=2)
    i = c.add_grid("food", 2, 2)
    k = c.add_keyed("work", 4)
    c.deposit_xy(i, 0, 0, 1.5, 7)
    c.deposit_xy(i, 0, 0, 2.0, 8)
    c.deposit_xy(i, 1, 1, 1.0, 7)
    c.deposit_key(k, b"job", 3.0, 9)       # table full: (9, work) goes to the overflow
    assert c.last_xy(i, 0, 0) == 8 and c.last_xy(i, 1, 1) == 7 and c.last_xy(i, 1, 0) == 0
    assert c.last_key(k, b"job") == 9 and c.last_key(k, b"none") == 0
    assert c.depositor(7, i) == (2, 2.5) and c.depositor(8, i) == (1, 2.0)
    assert c.depositor(9, k) == (0, 0.0) and c.depositor(0, 0) == (1, 3.0)
    c.tick()
    assert c.last_xy(i, 0, 0) == 8         # provenance outlives the tick


def test_watchpoints_record_crossings_both_ways():
    c = CField(watch_cap=2)
    i = c.add_grid("food", 4, 4, 0.5, 0.0)
    k = c.add_keyed("work", 4, 0.5)
    w = c.watch_region(i, 0, 0, 2, 2, 3.0)
    wk = c.watch_key(k, b"job", 1.0)
    expect("FIELD_ERR_FULL", c.watch_key, k, b"x", 1.0)
    expect("FIELD_ERR_RANGE", c.watch_region, i, 3, 3, 2, 1, 1.0)
    c.deposit_xy(i, 1, 1, 8.0, 1)
    c.deposit_xy(i, 3, 3, 100.0, 1)        # outside the region: no effect on the watch
    c.deposit_key(k, b"job", 4.0, 1)
    c.tick()                               # region 4.0 >= 3, job 2.0 >= 1: both up
    events = [c.journal(s) for s in range(c.f.journal_next) if c.journal(s)["kind"] == 3]
    assert [(e["where"], e["flags"], e["amount"]) for e in events] == [(w, 1, 4.0),
                                                                       (wk, 1, 2.0)]
    c.tick()                               # region 2.0 < 3: down; job 1.0 still >= 1
    c.tick()                               # job 0.5: down
    events = [c.journal(s) for s in range(c.f.journal_next) if c.journal(s)["kind"] == 3]
    assert [(e["where"], e["flags"]) for e in events] == [(w, 1), (wk, 1), (w, 0), (wk, 0)]
    assert c.f.watches[w].crossings == 2
    assert c.lib.field_unwatch(c.f, w) == 0 and c.lib.field_unwatch(c.f, w) != 0
