# SPDX-License-Identifier: MIT
"""Guest loop microbenchmarks shared by the hook-cost scripts (vm/budget/host/bench_hooks.py,
vm/profile/host/bench_prof.py): cycles a plain loop, a for loop, a loop of calls and a
generator loop take at the REPL, under QEMU -icount (instruction counts, so reruns agree)."""

from __future__ import annotations

from pathlib import Path

from tools.guest import guestconsole

LOOPS = """
import time
def w(n):
    i = 0
    while i < n:
        i += 1
def f(n):
    for i in range(n):
        pass
def g():
    return 1
def c(n):
    for i in range(n):
        g()
def gen(n):
    for i in range(n):
        yield i
def y(n):
    for v in gen(n):
        pass
def t(fn, n):
    t0 = time.ticks_cpu(); fn(n); return time.ticks_diff(time.ticks_cpu(), t0)
"""
N = 200000


def measure(image: Path, cases: tuple[str, ...], timers: tuple[str, ...] = ("t",),
            extra: str = "") -> dict[str, int]:
    """{case or 'case timer': cycles for N iterations} for each case and timer function
    (`extra` may define more timers, e.g. one that runs the case under _budget.run)."""
    g = guestconsole.Guest(image, icount=True)
    try:
        g.boot()
        g.paste(LOOPS + extra)
        out = {}
        for case in cases:
            g.eval(f"t({case}, 1000)")  # warm up (TCG translation, first allocations)
            for timer in timers:
                key = case if timer == "t" else f"{case} {timer}"
                out[key] = int(g.eval(f"{timer}({case}, {N})", timeout=300))
        return out
    finally:
        g.close()
