# SPDX-License-Identifier: MIT
"""Random small Python functions (hypothesis strategies, as source text) and a batch
driver that runs them on the rewriter's unix oracle (vm/rewrite.mk) before and after
`_rw.apply(fn, _rw.plan(fn))`, after `_rw.undo`, and under aggressive mode: the host
property tests of issue 7 (tests/host/test_rewrite_props.py)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[3]
ORACLE = ROOT / "build" / "host" / "rewrite" / "unix-build" / "micropython"

# Values around the small-int boundary (MicroPython's small ints are 63-bit here:
# -2**62 .. 2**62 - 1), big ints, floats, and wrong types whose operations raise.
SMALL = [0, 1, -1, 2, 3, 7, -5, 100]
EDGE = [2**62 - 1, -2**62, 2**62, -2**62 - 1, 2**62 - 3, 2**64, -2**70, 2**100]
FLOATS = [0.5, -1.25, 3.0, 1e300, -0.0]
WRONG = ["'s'", "None", "[1]", "True"]
ARG_VALUES = [repr(v) for v in SMALL + EDGE + FLOATS] + WRONG
SEQS = ["[]", "[1, 2, 3]", "[2**62 - 1, -1, 5]", "(4, 5, 6)", "[1.5, 'x']", "'abc'",
        "[0] * 7", "7"]

NAMES = ["a", "b", "x", "y", "i"]
LOCALS = ["x", "y"]
CMP = ["<", ">", "==", "<=", ">=", "!="]


# Strategies are built once (lru_cache): hypothesis validates each new strategy object,
# and building them per draw made one function cost about a second.
@lru_cache
def _lit() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from([str(v) for v in SMALL]),
                     st.sampled_from([repr(v) for v in EDGE + FLOATS]))


@lru_cache
def expr(depth: int = 2) -> st.SearchStrategy[str]:
    """An expression over the locals: arithmetic (multiplication and left shifts only by
    constants, so values stay small enough in loops), comparisons, subscripts."""
    atom = st.one_of(_lit(), st.sampled_from(NAMES), st.just("len(L)"),
                     st.sampled_from(["L[0]", "L[-1]", "L[x]", "L[i]", "L[a]"]))
    if depth == 0:
        return atom
    sub = expr(depth - 1)
    return st.one_of(
        atom,
        st.tuples(sub, st.sampled_from(["+", "-", "//", "%", "&", "|", "^"]), sub)
        .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(["*", "<<", ">>"]), st.integers(0, 3))
        .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(sub, st.sampled_from(CMP), sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        sub.map(lambda e: f"(-{e})"),
        st.tuples(st.sampled_from(["L", "(L if x else L)"]), sub)
        .map(lambda t: f"{t[0]}[{t[1]}]"),
    )


@lru_cache
def cond() -> st.SearchStrategy[str]:
    return st.tuples(expr(1), st.sampled_from(CMP), expr(1)).map(lambda t: " ".join(t))


def _indent(lines: list[str]) -> list[str]:
    return ["    " + s for s in lines]


@lru_cache
def block(depth: int, in_loop: bool) -> st.SearchStrategy[list[str]]:
    return st.lists(stmt(depth, in_loop), min_size=1, max_size=4).map(
        lambda ss: [line for s in ss for line in s])


@lru_cache
def simple(in_loop: bool) -> st.SearchStrategy[list[str]]:
    out = [
        st.tuples(st.sampled_from(LOCALS), expr()).map(lambda t: [f"{t[0]} = {t[1]}"]),
        # x += k / x -= k: the INCR_FAST pattern; other operators: the in-place ARITH_SI
        st.tuples(st.sampled_from(LOCALS), st.sampled_from(["+=", "-="]),
                  st.integers(-3, 40)).map(lambda t: [f"{t[0]} {t[1]} {t[2]}"]),
        st.tuples(st.sampled_from(LOCALS), st.sampled_from(["+=", "-=", "|=", "&=", "^=",
                                                            ">>="]), expr(1))
        .map(lambda t: [f"{t[0]} {t[1]} {t[2]}"]),
        st.tuples(st.sampled_from(LOCALS), st.sampled_from(["*=", "<<="]), st.integers(0, 3))
        .map(lambda t: [f"{t[0]} {t[1]} {t[2]}"]),
        st.tuples(expr(1), expr(1)).map(lambda t: [f"L[{t[0]}] = {t[1]}"]),
        expr(1).map(lambda e: [f"print({e})"]),
        cond().map(lambda c: [f"if {c}:", "    return"]),
        st.tuples(cond(), expr(1)).map(lambda t: [f"if {t[0]}:", f"    return {t[1]}"]),
    ]
    if in_loop:
        out.append(cond().map(lambda c: [f"if {c}:", "    break"]))
        out.append(cond().map(lambda c: [f"if {c}:", "    continue"]))
    return st.one_of(*out)


@lru_cache
def stmt(depth: int, in_loop: bool) -> st.SearchStrategy[list[str]]:
    return simple(in_loop) if depth == 0 else _stmt(depth, in_loop)


@st.composite
def _stmt(draw, depth: int, in_loop: bool) -> list[str]:
    kind = draw(st.sampled_from(["simple"] * 4 + ["if", "for", "while", "try"]))
    if kind == "simple":
        return draw(simple(in_loop))
    body = draw(block(depth - 1, in_loop or kind in ("for", "while")))
    if kind == "if":
        out = [f"if {draw(cond())}:"] + _indent(body)
        if draw(st.booleans()):
            out += ["else:"] + _indent(draw(block(depth - 1, in_loop)))
        return out
    if kind == "for":
        # Always a short loop: bounds are constants, or a local clamped to one.
        rng = draw(st.sampled_from([
            "range(5)", "range(-2, 3)", "range(6, 0, -2)", "range(3, -3, -1)",
            "range(x, x + 4)", "range(0, 12, 3)",
            "range(2**62 - 3, 2**62 + 1)", "range(a, a + 4)"]))
        return [f"for i in {rng}:"] + _indent(body)
    if kind == "while":
        # k<depth> is the loop's own counter, assigned nowhere else (a nested loop has
        # another depth): the loop is short.
        start, stop = draw(st.sampled_from([("0", "5"), ("-3", "2"), ("0.5", "4"),
                                            ("2**62 - 3", "2**62 + 2"), ("7", "1")]))
        k = f"k{depth}"
        step = [f"    {k} += 1"]
        head = [f"{k} = {start}", f"while {k} < {stop}:"]
        return head + step + _indent(body)   # counted first: `continue` cannot skip it
    handler = draw(st.sampled_from(["ZeroDivisionError", "TypeError", "IndexError",
                                    "(TypeError, ValueError)", "Exception"]))
    out = ["try:"] + _indent(body) + [f"except {handler}:"] + _indent(
        draw(block(0, in_loop)))
    if draw(st.booleans()):
        out += ["finally:", "    y = 3"]
    return out


@st.composite
def function(draw) -> str:
    """def f(a, b, L): ... — the locals x, y start from the arguments (or y not at all,
    so some paths raise UnboundLocalError)."""
    lines = ["x = a"]
    if draw(st.integers(0, 4)):
        lines.append(f"y = {draw(st.sampled_from(['b', '0', '2**62 - 1', '1.5']))}")
    lines += draw(block(2, False))
    lines.append(draw(st.sampled_from(["return x", "return (x, y)", "return", "return None",
                                       "return L"])))
    return "def f(a, b, L):\n" + "\n".join(_indent(lines)) + "\n"


@lru_cache
def args() -> st.SearchStrategy[str]:
    """Source of one argument tuple (a, b, L), evaluated fresh for every call; mostly
    small ints, so that most calls run the fast paths to the end."""
    one = st.one_of(*[st.sampled_from([repr(v) for v in SMALL])] * 3,
                    st.sampled_from(ARG_VALUES))
    seq = st.one_of(st.sampled_from(SEQS[1:3] + SEQS[6:7]), st.sampled_from(SEQS))
    return st.tuples(one, one, seq).map(lambda t: f"({t[0]}, {t[1]}, {t[2]})")


@dataclass
class Case:
    src: str
    argsets: list[str]


def cases(n_min: int, n_max: int) -> st.SearchStrategy[list[Case]]:
    one = st.builds(Case, function(), st.lists(args(), min_size=3, max_size=6))
    return st.lists(one, min_size=n_min, max_size=n_max)


# Runs in the oracle. Phases per case: b = original, a = after apply(plan), u = after
# undo, g = a fresh copy rewritten by aggressive mode (verified first) at its first call.
DRIVER = r'''
import _rw
def run(f, argsets, tag):
    for j, a in enumerate(argsets):
        print('@', tag, j)
        try:
            r = f(*a)
            print('=', repr(r))
        except Exception as e:
            print('!', type(e).__name__)
def case(n, src, mkargs):
    ns = {}
    exec(src, ns)
    f = ns['f']
    c0 = _rw.code(f)
    run(f, mkargs(), 'b')
    p = _rw.plan(f)
    _rw.apply(f, p)
    c1 = _rw.code(f)
    p2 = _rw.plan(f)
    _rw.apply(f, p2)
    same2 = _rw.code(f) == c1
    run(f, mkargs(), 'a')
    undone = _rw.undo(f)
    c2 = _rw.code(f)
    run(f, mkargs(), 'u')
    ns = {}
    exec(src, ns)
    g = ns['f']
    s0 = _rw.stats()
    _rw.aggressive(True)
    try:
        run(g, mkargs(), 'g')
    finally:
        _rw.aggressive(False)
    s1 = _rw.stats()
    print('#', n, ','.join(sorted(set(e[3] for e in p))) or '-', len(p), len(p2), int(same2),
          int(c2 == c0), int(c1 != c0), undone, s1['refused'] - s0['refused'],
          int(_rw.code(g) == c1), repr(s1['last_refusal']))
'''


@dataclass
class Outcome:
    phases: dict[str, list[str]]   # tag -> lines printed by the calls
    kinds: list[str]
    n_edits: int
    n_edits_again: int
    reapply_same: bool
    undo_identical: bool
    changed: bool
    undone_bytes: int
    refused: int
    aggressive_same: bool   # aggressive mode wrote the bytes apply(plan) wrote
    last_refusal: str


def program(batch: list[Case]) -> str:
    parts = [DRIVER]
    for n, c in enumerate(batch):
        parts.append(f"case({n}, {c.src!r}, lambda: [{', '.join(c.argsets)}])")
    return "\n".join(parts) + "\n"


def parse(out: str, n: int) -> list[Outcome]:
    import ast
    res: list[Outcome] = []
    phases: dict[str, list[str]] = {"b": [], "a": [], "u": [], "g": []}
    tag = None
    for line in out.splitlines():
        if line.startswith("@ "):
            _, tag, j = line.split()
            phases[tag].append(f"@ {j}")
        elif line.startswith("# "):
            f = line.split(" ", 11)
            kinds = [k for k in f[2].split(",") if k != "-"]
            res.append(Outcome(phases, kinds, int(f[3]), int(f[4]), f[5] == "1",
                               f[6] == "1", f[7] == "1", int(f[8]), int(f[9]), f[10] == "1",
                               ast.literal_eval(f[11])))
            phases = {"b": [], "a": [], "u": [], "g": []}
            tag = None
        elif tag:
            phases[tag].append(line)
    if len(res) != n:
        raise AssertionError(f"oracle finished {len(res)} of {n} cases:\n{out[-3000:]}")
    return res


def run_batch(oracle: Path, batch: list[Case], timeout: float = 60) -> list[Outcome]:
    p = subprocess.run([str(oracle), "-c", program(batch)], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, LOCIOS_RW_AGGRESSIVE="0"))
    if p.returncode != 0:
        raise AssertionError(f"oracle exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr}")
    return parse(p.stdout, len(batch))


def oracle() -> Path:
    """LOCIOS_RW_ORACLE, or the oracle vm/rewrite.mk's rewrite-oracle target builds (made
    here: a no-op when it is up to date)."""
    env = os.environ.get("LOCIOS_RW_ORACLE")
    if env:
        return Path(env)
    cmd = ["make", "--no-print-directory", "-C", str(ROOT)]
    if "include vm/rewrite.mk" not in (ROOT / "Makefile").read_text():
        cmd += ["-f", "Makefile", "-f", "vm/rewrite.mk"]
    p = subprocess.run(cmd + ["rewrite-oracle"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"make rewrite-oracle failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return ORACLE
