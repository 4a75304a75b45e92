# SPDX-License-Identifier: MIT
"""Cost of the profiler with nothing reading it, in guest cycles under QEMU -icount
(instruction counts: reruns are identical). Times a while loop, a for loop, a loop of
calls and a generator, at the REPL, in each image given, and compares each with the LAST
one. Build the references from the same tree with the defines riding on CC (as
vm/bench.mk does), e.g.
    make build BUILD=build/noprof CC="gcc -DLOCIOS_PROF=0"           # no profiler
    make build BUILD=build/linkonly CC="gcc -DLOCIOS_PROF_COUNTERS=0" # frame link only
    python vm/profile/host/bench_prof.py build/lociOS.img build/linkonly/lociOS.img \\
        build/noprof/lociOS.img"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the root: `tools` importable

from tools.bench.loopbench import N, measure  # noqa: E402

CASES = ("w", "f", "c", "y")


def main() -> None:
    images = sys.argv[1:]
    results = [measure(Path(img), CASES) for img in images]
    names = [Path(i).parent.name for i in images]
    if len(set(names)) < len(names):   # e.g. several trees built with the same BUILD
        names = [str(Path(i).parent) for i in images]
    base = results[-1]
    print(f"cycles per iteration, N={N}, -icount; (+x %) against {names[-1]}")
    print("case".ljust(6) + "".join(n.rjust(22) for n in names))
    for case in CASES:
        cells = [f"{r[case] / N:.2f} ({100 * (r[case] / base[case] - 1):+.2f} %)"
                 for r in results]
        print(case.ljust(6) + "".join(c.rjust(22) for c in cells))
    for name, r in zip(names, results, strict=True):
        geo = 1.0
        for case in CASES:
            geo *= r[case] / base[case]
        print(f"{name}: geomean {100 * (geo ** (1 / len(CASES)) - 1):+.2f} % against "
              f"{names[-1]}")


if __name__ == "__main__":
    main()
