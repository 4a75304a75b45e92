# SPDX-License-Identifier: MIT
"""Cost of the budget hooks, in guest cycles under QEMU -icount (deterministic): plain
loops and calls at the REPL (hooks idle), and the same inside _budget.run (hooks armed).
Compare an image built with the hooks against one built with LOCIOS_BUDGET_HOOKS=0:
    python vm/budget/host/bench_hooks.py build/lociOS.img [other.img ...]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the root: `tools` importable

from tools.bench.loopbench import N, measure  # noqa: E402

# Run under _budget.run with no limits: the hooks armed and counting.
ARMED = """
import _budget
def armed(fn, n):
    t0 = time.ticks_cpu(); _budget.run(fn, n, 0, 0, 0); return time.ticks_diff(time.ticks_cpu(), t0)
"""
CASES = ("w", "f", "c")


def main() -> None:
    results = {img: measure(Path(img), CASES, ("t", "armed"), ARMED) for img in sys.argv[1:]}
    keys = list(next(iter(results.values())))
    print(f"cycles per iteration, N={N}, -icount")
    print("case".ljust(12) + "".join(Path(i).parent.parent.name.rjust(14) for i in results))
    for k in keys:
        print(k.ljust(12) + "".join(f"{r[k] / N:14.2f}" for r in results.values()))


if __name__ == "__main__":
    main()
