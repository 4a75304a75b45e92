# SPDX-License-Identifier: MIT
"""Cost of the profiler with nothing reading it, in guest cycles under QEMU -icount
(instruction counts: reruns are identical). Times a while loop, a for loop, a loop of
calls and a generator, at the REPL, in each image given; build the references with
LOCIOS_PROF_COUNTERS=0 (link only) and LOCIOS_PROF=0 (nothing) in port/mpconfigport.h:
    python vm/profile/host/bench_prof.py build/lociOS.img other.img ..."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))

import guestconsole  # noqa: E402

BENCH = """
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
CASES = ("w", "f", "c", "y")


def measure(image: Path) -> dict[str, int]:
    g = guestconsole.Guest(image, icount=True)
    try:
        g.boot()
        g.paste(BENCH)
        out = {}
        for case in CASES:
            g.eval(f"t({case}, 1000)")  # warm up (TCG translation, first allocations)
            out[case] = int(g.eval(f"t({case}, {N})", timeout=300))
        return out
    finally:
        g.close()


def main() -> None:
    results = {img: measure(Path(img)) for img in sys.argv[1:]}
    names = [Path(i).parent.parent.name for i in results]
    print(f"cycles per iteration, N={N}, -icount")
    print("case".ljust(6) + "".join(n.rjust(12) for n in names))
    for case in CASES:
        row = [r[case] / N for r in results.values()]
        print(case.ljust(6) + "".join(f"{v:12.2f}" for v in row))
    base = list(results.values())[-1]
    for name, r in zip(names, results.values(), strict=True):
        geo = 1.0
        for case in CASES:
            geo *= r[case] / base[case]
        print(f"{name}: geomean {geo ** (1 / len(CASES)):.4f} x the last image")


if __name__ == "__main__":
    main()
