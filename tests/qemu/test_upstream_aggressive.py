# SPDX-License-Identifier: MIT
"""A slice of MicroPython's own tests in one booted guest, each run twice from its source:
as it is, and with the rewriter's aggressive mode on (`_rw.aggressive(True)`: every
function rewritten at its first call). Output and exceptions must be identical. The whole
suite, with run-tests.py's verdicts compared, is `make upstream-aggressive`
(vm/rewrite-check.mk)."""

from __future__ import annotations

import re

import pytest
from guestprog import prog

from tools.guest.guestconsole import ROOT

TESTS = ROOT / "build" / "micropython-1.25.0" / "tests"
# Every Nth test of each directory (sorted): a few dozen, well under a minute.
SLICE = {"basics": 12, "float": 8, "micropython": 8}
# Not runnable from exec(): they read their own file, need the REPL or a module beside
# them, or grow the heap until MemoryError.
UNSUITABLE = re.compile(r"unittest|input\(|__file__|import (?!\w*(sys|gc|micropython|array|"
                        r"math|cmath|struct|_rw|io|os|time|random|collections|errno))\w")

DRIVER = prog("upstream_driver")


def selected() -> list[str]:
    out = []
    for d, n in SLICE.items():
        for p in sorted((TESTS / d).glob("*.py"))[::n]:
            if not UNSUITABLE.search(p.read_text(errors="replace")):
                out.append(f"{d}/{p.name}")
    return out


def raw_exec(guest, code: str, timeout: float = 30) -> tuple[str, str]:
    """One raw REPL execution: (stdout, exception text)."""
    guest.raw_send(code, timeout)
    out, err = guest.raw_finish(timeout)
    return out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def raw(guest):
    guest.raw_enter()
    out, err = raw_exec(guest, DRIVER)
    assert not err, err
    yield guest
    guest.raw_exit()


def test_slice_gives_the_same_output_with_every_function_rewritten(raw):
    names = selected()
    assert len(names) >= 30, names
    same, raised, differ = 0, [], []
    raw_exec(raw, "S0 = _rw.stats()")
    for name in names:
        src = (TESTS / name).read_text()
        off, e1 = raw_exec(raw, f"runsrc({src!r}, False)")
        on, e2 = raw_exec(raw, f"runsrc({src!r}, True)")
        assert not e1 and not e2, (name, e1, e2)
        if "\nEXC " in "\n" + off:
            raised.append(name)
        if off == on:
            same += 1
        else:
            differ.append((name, off[-300:], on[-300:]))
    stats, _ = raw_exec(raw, "s = _rw.stats(); print(s['rewritten'] - S0['rewritten'], "
                             "s['refused'] - S0['refused'], repr(s['last_refusal']))")
    rewritten, refused, why = stats.split(" ", 2)
    print(f"\n{len(names)} tests, {same} identical, {len(raised)} ended by an exception "
          f"{raised}; rewritten {rewritten}, refused {refused}")
    assert not differ, differ
    # Not vacuous: the aggressive runs rewrote functions (several per test on average)
    # and the verifier refused none.
    # and the verifier refused none; the tests ran to their end (a few expect to raise).
    assert int(rewritten) >= 2 * len(names) and int(refused) == 0, (stats, why)
    assert len(raised) <= len(names) // 10, raised
