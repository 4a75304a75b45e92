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

from loopbench import N, measure  # noqa: E402

CASES = ("w", "f", "c", "y")


def main() -> None:
    results = {img: measure(Path(img), CASES) for img in sys.argv[1:]}
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
