# SPDX-License-Identifier: MIT
"""The field's C core against the pure-Python reference model: random layouts and random
operation sequences give bit-identical fields, tick statistics, queries, errors, digests
and snapshot bytes; and the mass invariant holds after every tick."""

import math
import struct

from field_cffi import CField, FieldError
from field_model import Field, f32
from field_model import FieldError as ModelError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

E_VALUES = [0.0, 0.01, 0.1, 0.5, 1.0, 0.3]
G_VALUES = [0.0, 0.25, 0.5, 1.0, 0.3, 0.01]
CAPS = [1e30, 5.0, 1.0, 0.5]
MINS = [0.0, 1e-3, 0.01, 0.2]
KEYS = [b"a", b"b", b"a\0", b"code7", b"x" * 15, b"\xff", b"", b"y" * 16]
AMOUNTS = st.one_of(st.floats(0.0, 100.0, width=32),
                    st.sampled_from([0.0, 1.0, 1e-6, 3.5, 1e20, math.nan, math.inf, -1.0,
                                     -0.0]))


def bits(values):
    return [struct.pack("<f", v) for v in values]


@st.composite
def layouts(draw):
    out = []
    for i in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            out.append(("grid", f"g{i}", draw(st.integers(1, 6)), draw(st.integers(1, 6)),
                        draw(st.sampled_from(E_VALUES)), draw(st.sampled_from(G_VALUES)),
                        draw(st.sampled_from(CAPS)), draw(st.sampled_from(MINS))))
        else:
            out.append(("keyed", f"k{i}", draw(st.integers(1, 5)), 0,
                        draw(st.sampled_from(E_VALUES)), 0.0,
                        draw(st.sampled_from(CAPS)), draw(st.sampled_from(MINS))))
    return out


GOOD_DEPOSIT = st.tuples(st.just("dep"), st.integers(0, 2), st.integers(0, 35),
                         st.sampled_from(KEYS[:6]), st.floats(0.0, 100.0, width=32),
                         st.sampled_from([1, 2, 7]))
ANY_DEPOSIT = st.tuples(st.just("dep"), st.integers(0, 3), st.integers(-1, 40),
                        st.sampled_from(KEYS), AMOUNTS, st.sampled_from([1, 2, 7, 0]))
QUERY = st.tuples(st.just("query"), st.integers(0, 3), st.integers(0, 6), st.integers(0, 6),
                  st.integers(0, 6), st.integers(0, 6))
OPS = st.lists(st.one_of(GOOD_DEPOSIT, GOOD_DEPOSIT, ANY_DEPOSIT, st.tuples(st.just("tick")),
                         QUERY), min_size=5, max_size=60)


def build(layout):
    c, m = CField(), Field()
    for kind, name, a, b, e, g, cap, mn in layout:
        if kind == "grid":
            assert c.add_grid(name, a, b, e, g, cap, mn) == m.add_grid(name, a, b, e, g, cap, mn)
        else:
            assert c.add_keyed(name, a, e, cap, mn) == m.add_keyed(name, a, e, cap, mn)
    return c, m


def same(fn_c, fn_m):
    """Both sides return the same value or raise the same error code."""
    try:
        want = ("ok", fn_m())
    except ModelError as e:
        want = ("err", str(e))
    try:
        got = ("ok", fn_c())
    except FieldError as e:
        got = ("err", e.code)
    assert got == want
    return got


def compare_fields(c, m):
    for i, fl in enumerate(m.flavours):
        assert bits(c.values(i)) == bits(fl.values())
        if fl.kind == 2:
            assert c.keys(i) == fl.sorted_keys()
        assert c.stats(i) == fl.stats
        assert c.total(i) == m.total(i)
    assert c.digest() == m.digest()


def run(c, m, op):
    if op[0] == "dep":
        _, i, where, key, amount, who = op
        if i < len(m.flavours) and m.flavours[i].kind == 2:
            same(lambda: c.deposit_key(i, key, amount, who),
                 lambda: m.deposit_key(i, key, amount, who))
        else:
            same(lambda: c.deposit_cell(i, where & 0xFFFFFFFF, amount, who),
                 lambda: m.deposit_cell(i, where, amount, who))
    elif op[0] == "tick":
        c.tick()
        m.tick()
        compare_fields(c, m)
        for i in range(len(m.flavours)):
            assert c.invariant_holds(i)
            assert m.invariant_holds(i)
    else:
        _, i, x, y, w, h = op
        if i >= len(m.flavours):
            same(lambda: c.topk(i, 3), lambda: m._flavour(i, 1))
            return
        same(lambda: c.topk(i, w), lambda: m.topk(i, w))
        if m.flavours[i].kind == 1:
            same(lambda: c.neighbourhood(i, x, y), lambda: m.neighbourhood(i, x, y)
                 if x < m.flavours[i].w and y < m.flavours[i].h else m.sense_xy(i, x, y))
            same(lambda: c.gradient(i, x, y), lambda: m.gradient(i, x, y)
                 if x < m.flavours[i].w and y < m.flavours[i].h else m.sense_xy(i, x, y))
            same(lambda: c.region(i, x, y, w, h), lambda: m.region(i, x, y, w, h))
            same(lambda: c.sense_xy(i, x, y), lambda: m.sense_xy(i, x, y))
        else:
            same(lambda: c.sense_key(i, KEYS[x]), lambda: m.sense_key(i, KEYS[x]))


@SETTINGS
@given(layouts(), OPS)
def test_c_matches_model_bit_for_bit(layout, ops):
    c, m = build(layout)
    for op in ops:
        run(c, m, op)
    c.tick()
    m.tick()
    compare_fields(c, m)
    assert c.snapshot() == m.snapshot()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.sampled_from(E_VALUES),
       st.sampled_from(G_VALUES), st.sampled_from(CAPS), st.sampled_from(MINS),
       st.lists(st.tuples(st.integers(0, 143), st.floats(0, 1e6, width=32)), max_size=30),
       st.integers(1, 6))
def test_mass_invariant(w, h, e, g, cap, mn, deposits, ticks):
    """total_after = (1-E)(total_before + deposited - clipped) - dropped, every tick."""
    c = CField()
    i = c.add_grid("food", w, h, e, g, cap, mn)
    c.f.check_invariant = 1
    for t in range(ticks):
        for cell, amount in deposits[t::ticks]:
            c.deposit_cell(i, cell % (w * h), amount, 1)
        before = c.total(i)
        c.tick()    # raises FIELD_ERR_INVARIANT if the check in C fails
        b, dep, clipped, dropped, after = c.stats(i)
        assert b == before and after == c.total(i)
        keep = 1.0 - struct.unpack("<f", struct.pack("<f", e))[0]
        assert math.isclose(after, keep * (b + dep - clipped) - dropped,
                            rel_tol=1e-5, abs_tol=1e-5 * (b + dep) + 1e-30)
        if cap >= 1e30 and mn == 0.0:
            assert clipped == 0.0 and dropped == 0.0


def test_invariant_check_catches_a_broken_tick():
    c = CField()
    i = c.add_grid("food", 4, 4, 0.1, 0.5)
    c.deposit_xy(i, 1, 1, 10.0, 1)
    c.tick()
    assert c.invariant_holds(i)
    c.f.fl[i].stats.after += 0.01     # as if a tick had leaked mass
    assert not c.invariant_holds(i)
    c.f.check_invariant = 1
    c.f.fl[i].cells[0] = 5.0          # mass appears from nowhere between ticks...
    c.f.fl[i].stats.before = 0.0
    c.tick()                          # ...which the next tick's own accounting absorbs
    assert c.invariant_holds(i)


def test_diffusion_spreads_four_ways_and_reflects_at_walls():
    c = CField()
    i = c.add_grid("food", 3, 3, 0.0, 0.4)
    c.deposit_xy(i, 1, 1, 1.0, 1)
    c.tick()                          # commit, evaporate (E = 0), then diffuse
    assert c.sense_xy(i, 1, 1) == struct.unpack("<f", struct.pack("<f", 0.6))[0]
    for x, y in ((0, 1), (2, 1), (1, 0), (1, 2)):
        assert c.sense_xy(i, x, y) == struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert c.sense_xy(i, 0, 0) == 0.0   # 4-neighbour: no diagonal spread
    c.tick()
    assert math.isclose(c.total(i), 1.0, rel_tol=1e-6)
    # A corner cell keeps the shares that would cross its two walls.
    c2 = CField()
    j = c2.add_grid("food", 2, 1, 0.0, 1.0)
    c2.deposit_xy(j, 0, 0, 8.0, 1)
    c2.tick()
    assert (c2.sense_xy(j, 0, 0), c2.sense_xy(j, 1, 0)) == (6.0, 2.0)


def test_long_seeded_run_matches_model():
    """A few hundred ticks of a busy field: no drift between C and model over time."""
    import random

    rng = random.Random(4)
    layout = [("grid", "food", 16, 12, 0.05, 0.3, 50.0, 1e-4),
              ("grid", "home", 5, 5, 0.0, 1.0, 1e30, 0.0),
              ("keyed", "work", 8, 0, 0.2, 0.0, 10.0, 0.05)]
    c, m = build(layout)
    for _ in range(300):
        for _ in range(rng.randrange(6)):
            i = rng.randrange(3)
            amount = struct.unpack("<f", struct.pack("<f", rng.uniform(0, 20)))[0]
            who = rng.randrange(1, 5)
            if i == 2:
                key = rng.choice(KEYS[:6] + [b"k%d" % rng.randrange(12)])
                same(lambda: c.deposit_key(i, key, amount, who),  # noqa: B023
                     lambda: m.deposit_key(i, key, amount, who))  # noqa: B023
            else:
                cell = rng.randrange(m.flavours[i].w * m.flavours[i].h)
                c.deposit_cell(i, cell, amount, who)
                m.deposit_cell(i, cell, amount, who)
        c.tick()
        m.tick()
        compare_fields(c, m)
    assert any(c.values(0)) and c.keys(2)
    assert c.snapshot() == m.snapshot()


CELL_VALUES = st.one_of(st.floats(0.0, 1e3, width=32), st.floats(0.0, 2.0**96, width=32),
                        st.sampled_from([0.0, -0.0, 1e-45, 1e-40, 1.0, 0.001, 5.0]))


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(1, 23), st.integers(1, 7), st.sampled_from(E_VALUES),
       st.sampled_from(G_VALUES), st.sampled_from(CAPS), st.sampled_from(MINS),
       st.lists(st.tuples(st.integers(0, 160), CELL_VALUES), max_size=80),
       st.lists(st.tuples(st.integers(0, 160), st.floats(0.0, 20.0, width=32)), max_size=40),
       st.integers(1, 4))
def test_wide_grids_match_model(w, h, e, g, cap, mn, cells, deposits, ticks):
    """Rows wide enough for the tick's groups of four cells, and the columns left over:
    committed values set directly (-0.0, subnormals, values above cap) and deposits, so
    that clipping and the min rule fall anywhere in a row; cells, statistics and snapshot
    bit for bit against the model."""
    c, m = build([("grid", "g", w, h, e, g, cap, mn)])
    n = w * h
    for cell, v in cells:
        c.f.fl[0].cells[cell % n] = v
        m.flavours[0].cells[cell % n] = f32(v)
    for t in range(ticks):
        for cell, amount in deposits[t::ticks]:
            c.deposit_cell(0, cell % n, amount, 1)
            m.deposit_cell(0, cell % n, amount, 1)
        c.tick()
        m.tick()
        compare_fields(c, m)
        assert c.stats(0)[4] == c.total(0)
        assert set(bits(c.f.fl[0].pending[j] for j in range(n))) == {bytes(4)}
    assert c.snapshot() == m.snapshot()
