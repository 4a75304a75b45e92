#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""REPL latency beside the hostile colony: foraging and every kind of src_hostile.ALL in
one mesh run in the background by `resume()` (plain TCG, as a person at the console
sees it), then `6*7` typed N times, DELAY seconds apart, while the hostiles are spawned,
stopped and retired. Each latency is from the typed line's end to the next prompt.
Prints the median, the 90th percentile and the largest, and the rounds the mesh ran
meanwhile; `bench_repl.py N DELAY` sets the count (default 40) and the gap (0.3 s)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

SETUP = """
import mesh
from colonies import hostile
from lo import *
HM = mesh.Mesh(hostile.flavours(r=10), seed=1)
hostile.setup(HM, seed=1, r=10)
use_mesh(HM)
"""


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    with Guest(IMAGE) as g:
        g.boot()
        out = g.paste(SETUP, timeout=300)
        if "Traceback" in out:
            print(out, file=sys.stderr)
            return 1
        g.run("resume()")
        lat = []
        for _ in range(n):
            time.sleep(delay)
            t = time.monotonic()
            got = g.eval("6*7", timeout=60)
            lat.append(time.monotonic() - t)
            if got != "42":
                print(f"bench_repl: 6*7 printed {got!r}", file=sys.stderr)
                return 1
        g.run("pause()")
        rounds = g.ask("HM.rounds")
        fates = g.ask("[f['outcome'] for f in hostile.report(HM)['hostile'].values()]")
    lat.sort()
    print(f"REPL beside foraging and {len(fates)} hostile kinds under resume(): "
          f"{n} answers of 6*7, {delay:g} s apart, over {rounds} rounds")
    print(f"  median {statistics.median(lat):.3f} s, 90th percentile "
          f"{lat[int(0.9 * (n - 1))]:.3f} s, largest {lat[-1]:.3f} s")
    print("  hostiles: " + ", ".join(f"{fates.count(o)} {o}" for o in sorted(set(fates))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
