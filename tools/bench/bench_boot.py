#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Boot benchmark: wall time from starting QEMU to the first `>>>`, and the kernel's own
count of TSC cycles from kernel entry to the prompt (from the banner), over N boots.
Writes build/bench/boot.json and prints a summary."""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, ROOT, Guest


def one_boot(image: Path, mem: str) -> dict:
    g = Guest(image, mem=mem)
    try:
        banner = g.boot()
        heap = int(g.run("import kernel; print(kernel.mem()['heap'])").strip())
    finally:
        g.close()
    cycles = re.search(r"boot (\d+) cycles", banner)
    return {
        "wall_s": round(g.boot_seconds, 3),
        "kernel_cycles": int(cycles.group(1)) if cycles else None,
        "heap_bytes": heap,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="number of boots (default 5)")
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--image", type=Path, default=IMAGE)
    args = ap.parse_args()
    runs = []
    for i in range(args.n):
        r = one_boot(args.image, args.mem)
        runs.append(r)
        print(f"boot {i + 1}/{args.n}: {r['wall_s']:.2f} s to '>>>', "
              f"{r['kernel_cycles']} cycles kernel entry to prompt", flush=True)
    summary = {
        "boots": args.n,
        "mem": args.mem,
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "median_kernel_cycles": statistics.median(
            r["kernel_cycles"] for r in runs if r["kernel_cycles"] is not None),
        "heap_bytes": runs[-1]["heap_bytes"],
        "runs": runs,
    }
    out = ROOT / "build" / "bench" / "boot.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"median over {args.n} boots: {summary['median_wall_s']:.2f} s wall, "
          f"{summary['median_kernel_cycles']:.0f} kernel cycles; "
          f"heap {summary['heap_bytes'] / 2**20:.1f} MiB at {args.mem} (written to {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
