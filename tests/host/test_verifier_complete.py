# SPDX-License-Identifier: MIT
"""Completeness of the bytecode verifier (vm/verifier): every function MicroPython's own
compiler emits for tests/basics, and for generated programs, verifies."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

BASICS = H.MPY_DIR / "tests" / "basics"


@pytest.fixture(scope="module")
def basics():
    out = []
    for f in sorted(BASICS.glob("*.py")):
        out.append((f, H.parse_mpy(H.mpy_cross(f, f.name))))
    return out


def test_every_basics_function_verifies(basics):
    total, refused = 0, []
    for f, mpy in basics:
        for v in H.verify_mpy(mpy):
            total += 1
            if not v.ok:
                refused.append(f"{f.name}:{v.path}: {v.msg}")
    assert total > 1500, total
    assert refused == []


def test_bound_mode_ignores_what_is_unreachable(basics):
    """Frozen code has no run-time length: with len only a bound, a function followed
    by garbage still verifies, reading only what the entry reaches."""
    pad = bytes(range(256)) * 4
    for f, mpy in basics:
        for v in H.verify_mpy(mpy, pad=pad):
            assert v.ok, f"{f.name}:{v.path}: {v.msg}"


def test_bounds_match_the_compiler(basics):
    """The verifier's bounds never exceed what the compiler reserved, and are tight for
    most functions: its depth is that of a real VM, not the compiler's padding."""
    tight = loose = 0
    for _, mpy in basics:
        for v in H.verify_mpy(mpy):
            if v.ok:
                assert v.n_locals + v.max_depth <= v.n_state
                assert v.max_blocks <= v.n_exc_stack
                if v.n_locals + v.max_depth == v.n_state:
                    tight += 1
                else:
                    loose += 1
    assert tight > 0 and loose >= 0


def test_locus_profile_accepts_plain_code(basics):
    """Plain arithmetic and control flow under the restrictive profile."""
    src = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    assert all(v.ok for v in H.verify_mpy(H.parse_mpy(H.mpy_cross(src)), "locus"))


# ---- Generated programs -------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "x", "y"])
EXPRS = st.recursive(
    st.one_of(NAMES, st.integers(-300, 300).map(str), st.just("None"), st.just("'s'")),
    lambda e: st.one_of(
        st.tuples(e, st.sampled_from(["+", "-", "*", "<", "==", "and", "or", "in"]), e)
        .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(NAMES, st.lists(e, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(e, NAMES).map(lambda t: f"{t[0]}.{t[1]}"),
        st.lists(e, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.tuples(e, NAMES, e).map(lambda t: f"[{t[0]} for {t[1]} in {t[2]}]"),
        st.tuples(e, e).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
        st.tuples(NAMES, e).map(lambda t: f"(lambda {t[0]}: {t[1]})"),
        st.tuples(NAMES, e).map(lambda t: f"{t[0]}(*{t[1]}, **{t[1]})"),
    ),
    max_leaves=6,
)


def _block(stmts: list[str], ind: str) -> str:
    return "".join(ind + line + "\n" for s in stmts for line in s.split("\n"))


def _stmts(depth: int, in_loop: bool, in_def: bool):
    simple = [
        st.tuples(NAMES, EXPRS).map(lambda t: f"{t[0]} = {t[1]}"),
        EXPRS,
        st.tuples(NAMES, NAMES).map(lambda t: f"del {t[0]}[{t[1]}]"),
        st.tuples(NAMES, NAMES).map(lambda t: f"{t[0]}, *{t[1]} = {t[1]}"),
    ]
    if in_loop:
        simple += [st.just("break"), st.just("continue")]
    if in_def:
        simple += [EXPRS.map(lambda e: f"return {e}")]
    if depth <= 0:
        return st.one_of(simple)
    body = st.lists(_stmts(depth - 1, in_loop, in_def), min_size=1, max_size=3)
    loop_body = st.lists(_stmts(depth - 1, True, in_def), min_size=1, max_size=3)
    def_body = st.lists(_stmts(depth - 1, False, True), min_size=1, max_size=3)
    compound = [
        st.tuples(EXPRS, body, body).map(
            lambda t: f"if {t[0]}:\n{_block(t[1], '    ')}else:\n{_block(t[2], '    ')}"),
        st.tuples(EXPRS, loop_body).map(lambda t: f"while {t[0]}:\n{_block(t[1], '    ')}"),
        st.tuples(NAMES, EXPRS, loop_body).map(
            lambda t: f"for {t[0]} in {t[1]}:\n{_block(t[2], '    ')}"),
        st.tuples(body, body).map(
            lambda t: f"try:\n{_block(t[0], '    ')}except Exception as e:\n"
                      f"{_block(t[1], '    ')}"),
        st.tuples(body, body).map(
            lambda t: f"try:\n{_block(t[0], '    ')}finally:\n{_block(t[1], '    ')}"),
        st.tuples(EXPRS, body).map(lambda t: f"with {t[0]} as w:\n{_block(t[1], '    ')}"),
        st.tuples(NAMES, def_body).map(
            lambda t: f"def g({t[0]}, k=1, *r, **kw):\n    nonlocal_free = {t[0]}\n"
                      f"    def h():\n        return nonlocal_free\n"
                      f"{_block(t[1], '    ')}"),
        st.tuples(NAMES, EXPRS).map(
            lambda t: f"def gen({t[0]}):\n    yield {t[1]}\n    yield from {t[0]}"),
    ]
    return st.one_of(simple + compound)


PROGRAMS = st.lists(_stmts(3, False, False), min_size=1, max_size=4).map(
    lambda ss: _block(ss, ""))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_generated_programs_verify(src):
    mpy = H.generated_mpy(src)
    if mpy is None:
        return
    for v in H.verify_mpy(mpy):
        assert v.ok, f"{v.path}: {v.msg}\n{src}"
