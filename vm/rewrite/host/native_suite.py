# SPDX-License-Identifier: MIT
"""MicroPython's own tests with every function compiled by the native emitter
(run-tests.py --emit native) on two unix ports from the patched tree: one with native
promotion's emitter changes on (back-edge polls, vm/patches/0008; small-int fast paths,
0009), one with them off. Every test must get the same verdict from both (make
native-suite).

    native_suite.py --on BIN --off BIN --tree PATCHED_TREE --dirs basics,... --out JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from suite import parse


def run(binary: Path, tree: Path, dirs: list[str]) -> tuple[dict[str, str], float]:
    env = dict(os.environ, MICROPY_MICROPYTHON=str(binary.resolve()))
    results = tree / "tests" / "results" / "_results.json"
    results.unlink(missing_ok=True)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "run-tests.py", "--emit", "native", "-j", "2",
                        "-d", *dirs], cwd=tree / "tests", env=env, capture_output=True,
                       text=True)
    took = time.monotonic() - t0
    failed = json.loads(results.read_text())["failed_tests"] if results.exists() else []
    verdicts = parse(p.stdout, dirs, failed)
    if not verdicts:
        raise SystemExit(f"run-tests.py printed no verdicts:\n{p.stdout}\n{p.stderr}")
    return verdicts, took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--on", type=Path, required=True)
    ap.add_argument("--off", type=Path, required=True)
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--dirs", default="basics,micropython,misc,float")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    dirs = args.dirs.split(",")
    report: dict = {"dirs": dirs}
    for name, binary in (("off", args.off), ("on", args.on)):
        print(f"native-suite: {name}: run-tests.py --emit native -d {' '.join(dirs)}",
              flush=True)
        verdicts, took = run(binary, args.tree, dirs)
        report[name] = {"verdicts": verdicts, "seconds": round(took, 1),
                        "counts": dict(Counter(verdicts.values()))}
        print(f"native-suite: {name}: {report[name]['counts']} in {took:.0f} s", flush=True)
    off, on = report["off"]["verdicts"], report["on"]["verdicts"]
    differ = sorted(t for t in set(off) | set(on) if off.get(t) != on.get(t))
    report["differ"] = {t: [off.get(t), on.get(t)] for t in differ}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True))
    for t in differ:
        print(f"native-suite: DIFFERS {t}: off {off.get(t)}, on {on.get(t)}")
    print(f"native-suite: {len(differ)} of {len(set(off) | set(on))} tests differ "
          f"({args.out})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
