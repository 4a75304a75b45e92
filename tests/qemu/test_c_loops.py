# SPDX-License-Identifier: MIT
"""Long loops in C built-ins poll (issue 22, item 8; vm/patches/0014, budget_poll in
vm/budget/budget.c): big-integer arithmetic and conversion, substring search and sorting
stop for Ctrl-C at the REPL and for a cycles budget inside `_budget.run`, in the middle
of the built-in, and leave the data they worked on valid. Before the patch each ran to
its end (minutes to hours at these sizes) whatever came. One guest for the module."""

from __future__ import annotations

import re
import time

import pytest

from tools.guest.guestconsole import Guest

ask = Guest.ask

SETUP = """
import _budget, gc
L = list(range(100000))
H = 'a' * 1000000
N = 'a' * 10000 + 'b'
D = '7' * 1000000
B = 1 << 1000000
C = 1 << 4000000
Q = C >> 2000000 | 1
"""

# Each runs for minutes or more without a poll (sizes above).
STARVERS = {
    "huge pow": "x = 7 ** 10 ** 7",
    "sort of a sorted list": "L.sort()",
    "sorted()": "sorted(L)",
    "find": "H.find(N)",
    "count": "H.count(N)",
    "in": "N in H",
    "replace": "H.replace(N, 'x')",
    "split": "H.split(N)",
    "int() of a long string": "int(D)",
    "str() of a huge int": "str(B)",
    "division": "C // Q",
}


@pytest.fixture(scope="module")
def g(guest):
    out = guest.paste(SETUP, timeout=120)
    assert "Traceback" not in out, out
    return guest


@pytest.mark.parametrize("line", STARVERS.values(), ids=STARVERS.keys())
def test_ctrl_c_interrupts_a_long_builtin_at_the_repl(g, line):
    g.send(line + "\r")
    g.expect(re.escape(line) + r"\r\n")
    time.sleep(1.0)
    # Still computing: no prompt yet.
    assert b">>> " not in g.drain(0.2)
    t0 = time.monotonic()
    g.send(b"\x03")
    out = g.expect(re.escape(">>> "), timeout=60).decode(errors="replace")
    waited = time.monotonic() - t0
    assert "KeyboardInterrupt" in out, out
    assert waited < 2.0, waited
    t0 = time.monotonic()
    assert ask(g, "6 * 7") == 42
    assert time.monotonic() - t0 < 2.0


def test_an_interrupted_sort_leaves_the_list_valid(g):
    # The sort above was stopped midway: the list still holds exactly its items.
    assert ask(g, "len(L), sum(L) == 99999 * 100000 // 2, sorted(L[:1000]) == L[:1000]") \
        == (100000, True, True)
    assert ask(g, "gc.collect() is None and len(str(7 ** 1000))") == len(str(7 ** 1000))


CYCLES = 50_000_000


@pytest.mark.parametrize("line", [v for k, v in STARVERS.items() if k != "huge pow"]
                         + ["7 ** 10 ** 7"], ids=[k for k in STARVERS if k != "huge pow"]
                         + ["huge pow"])
def test_a_cycles_budget_stops_a_long_builtin_inside_it(g, line):
    expr = line.split("=", 1)[1] if line.startswith("x =") else line
    t0 = time.monotonic()
    r = ask(g, f"_budget.run(lambda _: {expr}, 0, 0, {CYCLES}, 0)[:4]", timeout=60)
    took = time.monotonic() - t0
    status, value, ops, cycles = r
    assert (status, value) == (3, None), r
    # Stopped at the first poll past the deadline, a fraction of a millisecond of work
    # later. The TSC runs in host time under TCG: pauses of the host move the deadline,
    # by at most 4 times the limit (vm/budget/README.md). Each of these would take a
    # hundred times the limit, or more, to finish.
    assert CYCLES <= cycles < 6 * CYCLES, cycles
    assert took < 10, took


def test_ctrl_c_inside_a_budgeted_builtin_comes_back_raised(g):
    g.send("r = _budget.run(lambda _: int(D), 0, 0, 0, 0); print('got', r[0], repr(r[1]))\r")
    g.expect(r"print\('got'.*\r\n")
    time.sleep(1.0)
    g.send(b"\x03")
    out = g.expect(re.escape(">>> "), timeout=30).decode(errors="replace")
    assert "got 1 KeyboardInterrupt()" in out, out
    assert ask(g, "_budget.active()") is False


def test_results_are_unchanged_by_the_polls(g):
    # Small enough to finish: the same values as the arithmetic itself gives.
    assert ask(g, "int('7' * 3000) == sum(7 * 10 ** i for i in range(3000))") is True
    assert ask(g, "len(str(7 ** 5000)), str(7 ** 5000)[:6], str(7 ** 5000)[-6:]") \
        == (len(str(7 ** 5000)), str(7 ** 5000)[:6], str(7 ** 5000)[-6:])
    assert ask(g, "(7 ** 3000) // (3 ** 2000) % 1000003") == (7 ** 3000) // (3 ** 2000) % 1000003
    assert ask(g, "('ab' * 5000 + 'abc').find('abc'), ('ab' * 5000).count('ba')") \
        == (10000, 4999)
    assert ask(g, "sorted(list(range(3000, 0, -1)))[:3], len(('x,y' * 999).split(','))") \
        == ([1, 2, 3], 1000)
