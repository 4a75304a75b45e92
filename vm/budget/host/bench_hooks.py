# SPDX-License-Identifier: MIT
"""Cost of the budget hooks, in guest cycles under QEMU -icount (deterministic): plain
loops and calls at the REPL (hooks idle), and the same inside _budget.run (hooks armed).
Compare an image built with the hooks against one built with LOCIOS_BUDGET_HOOKS=0:
    python vm/budget/host/bench_hooks.py build/lociOS.img [other.img ...]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))

import guestconsole  # noqa: E402

BENCH = """
import time, _budget
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
def t(fn, n):
    t0 = time.ticks_cpu(); fn(n); return time.ticks_diff(time.ticks_cpu(), t0)
def tb(fn, n):
    t0 = time.ticks_cpu(); _budget.run(fn, n, 0, 0, 0); return time.ticks_diff(time.ticks_cpu(), t0)
"""
N = 200000
CASES = ("w", "f", "c")


def measure(image: Path) -> dict[str, int]:
    g = guestconsole.Guest(image, icount=True)
    try:
        g.boot()
        g.paste(BENCH)
        out = {}
        for case in CASES:
            g.eval(f"t({case}, 1000)")  # warm up (TCG translation, first allocations)
            out[case] = int(g.eval(f"t({case}, {N})", timeout=300))
            out[case + " armed"] = int(g.eval(f"tb({case}, {N})", timeout=300))
        return out
    finally:
        g.close()


def main() -> None:
    results = {img: measure(Path(img)) for img in sys.argv[1:]}
    keys = list(next(iter(results.values())))
    print(f"cycles per iteration, N={N}, -icount")
    print("case".ljust(12) + "".join(Path(i).parent.parent.name.rjust(14) for i in results))
    for k in keys:
        print(k.ljust(12) + "".join(f"{r[k] / N:14.2f}" for r in results.values()))


if __name__ == "__main__":
    main()
