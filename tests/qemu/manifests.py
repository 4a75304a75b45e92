# SPDX-License-Identifier: MIT
"""Generated Locus manifests for test_mesh.py, which holds the C fast path of the
manifest check (loci/mod/mesh_manifest.c) to the Python definition
(loci/python/locus_manifest.py): mostly manifests a person would write, each field now
and then replaced by something near it that is wrong (a bool for an int, a list where a
tuple goes, a NaN, an edge of a range, a nesting too deep, a str subclass), and a
writer of them as MicroPython source."""

from __future__ import annotations

import math

from hypothesis import strategies as st

# The guest mesh's flavours (tests/qemu/progs/mesh.py): grids 16x16 and a keyed one.
GRIDS = ("trail", "food")
KEYED = ("work",)
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
BUDGET_KEYS = ("ops", "alloc", "deposits", "cycles", "kept")
CODE = "def step(ctx):\n    pass\n"


class Sub(str):
    """A str subclass: Python accepts it where a str goes; the fast path leaves it to
    Python."""


ints = st.one_of(st.integers(-3, 20), st.sampled_from([0, 1, 15, 16, 4096, 4097, 1 << 40,
                                                        (1 << 40) + 1, 1 << 70]))
numbers = st.one_of(ints, st.floats(allow_nan=True, allow_infinity=True), st.booleans())
junk = st.one_of(st.none(), st.booleans(), ints, st.text(max_size=3), st.binary(max_size=3),
                 st.just([]), st.just(()))

# ---- what a person would write -------------------------------------------------------
name = st.text(NAME_CHARS, min_size=1, max_size=24)
cell = st.tuples(st.integers(0, 15), st.integers(0, 15))
rect = st.tuples(st.integers(0, 8), st.integers(0, 8), st.integers(1, 8), st.integers(1, 8))
key = st.one_of(st.text("abcw", min_size=1, max_size=15), st.binary(min_size=1, max_size=15))
place = st.one_of(st.fixed_dictionaries({"flavour": st.sampled_from(GRIDS), "at": cell}),
                  st.fixed_dictionaries({"flavour": st.sampled_from(GRIDS), "region": rect}),
                  st.fixed_dictionaries({"flavour": st.sampled_from(KEYED), "key": key}))
wake = place.flatmap(lambda p: st.one_of(st.integers(-2, 9), st.floats(-1, 9)).map(
    lambda a: dict(p, above=a)))
_grant_rest = st.fixed_dictionaries({}, optional={
    "ops": st.lists(st.sampled_from(["sense", "deposit"]), min_size=1, max_size=2),
    "keys": st.lists(key, min_size=1, max_size=4), "rate": st.floats(0, 1e6),
    "expires": st.integers(1, 1000), "spawn": st.booleans(), "rewrite": st.booleans()})
# Flavours come with at least one operation.
grant = _grant_rest.flatmap(lambda g: st.one_of(st.just(g), st.lists(
    st.sampled_from(GRIDS + KEYED), min_size=1, max_size=3).map(
    lambda f: dict(g, flavours=f, ops=g.get("ops", ["sense"])))))
budget = st.dictionaries(st.sampled_from(BUDGET_KEYS), st.integers(1, 100000), max_size=5)
plain = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(), st.text(max_size=4),
              st.binary(max_size=4)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12)
good = st.fixed_dictionaries(
    {"name": name, "code": st.just(CODE)},
    optional={"caps": st.lists(grant, max_size=3), "budget": budget,
              "restart": st.sampled_from(["never", "on-failure"]), "attend": place,
              "wake": wake, "args": plain})


def _nest(n: int):
    v: object = 1
    for i in range(n):
        v = [v] if i % 2 else {"k": v}
    return v


# ---- each field replaced by something near it that is wrong (or right after all) -----
WRONG = {
    "name": st.one_of(st.text(max_size=30), st.text(NAME_CHARS, min_size=25, max_size=26),
                      st.just(""), st.builds(Sub, st.just("sub")), junk),
    "code": st.one_of(st.just(""), st.builds(Sub, st.just(CODE)), junk),
    "module": st.sampled_from(["colonies.src_ant:SOURCE", "a.b", "a", "a..b", "1a", "a:b:c",
                               "a:", "a" * 65, "_x.y_:Z9"]),
    "caps": st.one_of(st.lists(grant, min_size=9, max_size=9),
                      st.lists(st.fixed_dictionaries({}, optional={
                          "flavours": st.one_of(st.lists(st.sampled_from(["nope", "trail"]),
                                                         max_size=2).map(tuple), junk),
                          "ops": st.one_of(st.lists(st.sampled_from(["sense", "look"]),
                                                    max_size=2).map(tuple), junk),
                          "region": st.one_of(rect, st.lists(st.integers(-1, 17), min_size=4,
                                                             max_size=4), junk),
                          "keys": st.one_of(st.lists(st.one_of(key, st.just(""), junk),
                                                     max_size=5), junk),
                          "rate": numbers, "expires": ints, "spawn": junk, "rewrite": junk,
                          "io": st.one_of(st.none(), st.just((0, 7))), "colour": junk}),
                          min_size=1, max_size=2), junk),
    "budget": st.one_of(st.dictionaries(st.sampled_from(BUDGET_KEYS + ("wall",)), numbers,
                                        min_size=1, max_size=3), junk),
    "restart": junk,
    "attend": st.one_of(st.fixed_dictionaries({}, optional={
        "flavour": st.sampled_from(GRIDS + KEYED + ("nope",)),
        "at": st.one_of(cell, st.lists(st.integers(-1, 16), min_size=2, max_size=2),
                        st.tuples(st.booleans(), st.integers(0, 3)), junk),
        "key": st.one_of(key, st.just(""), junk), "region": st.one_of(rect, junk),
        "other": junk}), junk),
    "wake": st.one_of(place.flatmap(lambda p: numbers.map(lambda a: dict(p, above=a))),
                      place, junk),
    "args": st.one_of(st.integers(7, 10).map(_nest), st.just({1: 2}), st.just([1 << 70]),
                      st.just({"s": {Sub("k"): 1}}), junk),
    "colour": junk,
}


@st.composite
def manifest(draw):
    m = draw(good)
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.sampled_from(sorted(WRONG)))
        m[k] = draw(WRONG[k])
    return m


def lit(v) -> str:
    """`v` as MicroPython source (NaN and the infinities have no literal)."""
    if isinstance(v, Sub):
        return f"Sub({str.__repr__(v)})"
    if isinstance(v, float) and not math.isfinite(v):
        return "NAN" if math.isnan(v) else ("INF" if v > 0 else "-INF")
    if isinstance(v, dict):
        return "{" + ", ".join(f"{lit(k)}: {lit(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + "".join(lit(x) + ", " for x in v) + ")"
    return repr(v)
