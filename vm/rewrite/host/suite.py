# SPDX-License-Identifier: MIT
"""MicroPython's own tests on the rewriter's unix oracle (vm/rewrite.mk): once with the
aggressive mode off, once forced on from the start (LOCIOS_RW_AGGRESSIVE=1: every
function rewritten at its first call, after the verifier's replacement check). Every test
must get the same verdict both times; the aggressive run's rewriting counters, summed
over every process, show it did rewrite.

    suite.py --oracle BIN --tree PATCHED_TREE --dirs basics,micropython,misc,float --out JSON
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

LINE = re.compile(r"^(pass|FAIL|skip) +(\S+)", re.M)
TEST = re.compile(r"[\w.-]+/[\w.-]+\.py")


def run_tests(binary: Path, tree: Path, dirs: list[str], files: list[str] | None = None,
              args: tuple[str, ...] = (), env: dict[str, str] | None = None
              ) -> tuple[dict[str, str], float]:
    """Verdicts of the tree's run-tests.py (with `args`) on a unix `binary` over the tests
    in dirs, or just files, one at a time; and the seconds it took. native_suite.py
    runs the same way."""
    env = dict(os.environ, MICROPY_MICROPYTHON=str(binary.resolve()), **(env or {}))
    which = ["-j", "1", *files] if files else ["-j", "2", "-d", *dirs]
    # The results folder outside the tree: the patched tree stays exactly the pristine
    # one plus the patches (tests/host/test_vm_patches.py compares them file by file).
    with tempfile.TemporaryDirectory(prefix="run-tests-results-") as result_dir:
        results = Path(result_dir) / "_results.json"
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "run-tests.py", "-r", result_dir, *args, *which],
                           cwd=tree / "tests", env=env, capture_output=True, text=True)
        took = time.monotonic() - t0
        failed = json.loads(results.read_text())["failed_tests"] if results.exists() else []
    verdicts = parse(p.stdout, dirs if not files else sorted({f.split("/")[0] for f in files}),
                     failed)
    if not verdicts:
        raise SystemExit(f"run-tests.py printed no verdicts:\n{p.stdout}\n{p.stderr}")
    return verdicts, took


def run(oracle: Path, tree: Path, dirs: list[str], aggressive: bool,
        stats: Path, files: list[str] | None = None) -> tuple[dict[str, str], float]:
    """Verdicts of the tests in dirs (or just files) in one mode of the oracle."""
    return run_tests(oracle, tree, dirs, files, env={
        "LOCIOS_RW_AGGRESSIVE": "1" if aggressive else "0", "LOCIOS_RW_STATS": str(stats)})


def parse(out: str, dirs: list[str], failed: list[str]) -> dict[str, str]:
    """Each test's verdict. run-tests.py's parallel workers print their "pass  <file>"
    lines in pieces that can interleave, so a line may be garbled: a test named anywhere
    in the output without a clean line gets its verdict from the summary instead (failed
    paths from results/_results.json, skipped names from "N tests skipped: ...")."""
    verdicts = {m.group(2): m.group(1) for m in LINE.finditer(out)
                if TEST.fullmatch(m.group(2))}
    skipped = set()
    for m in re.finditer(r"^\d+ tests skipped: (.*)$", out, re.M):
        skipped.update(m.group(1).split())
    for tok in set(out.split()):
        if TEST.fullmatch(tok) and tok.split("/")[0] in dirs and tok not in verdicts:
            name = tok.rsplit("/", 1)[1][:-3]
            verdicts[tok] = "FAIL" if tok in failed else "skip" if name in skipped else "pass"
    return verdicts


def sum_stats(path: Path) -> tuple[dict[str, int], list[str]]:
    total: Counter[str] = Counter()
    refusals = []
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = dict(f.split("=", 1) for f in line.split(" ", len(line.split(" ")) - 1))
        why = fields.pop("last_refusal", "-")
        if why != "-":
            refusals.append(why)
        total.update({k: int(v) for k, v in fields.items()})
    return dict(total), refusals


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", type=Path, required=True)
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--dirs", default="basics,micropython,misc,float")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    dirs = a.dirs.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        off, t_off = run(a.oracle, a.tree, dirs, False, Path(tmp) / "off")
        on, t_on = run(a.oracle, a.tree, dirs, True, Path(tmp) / "on")
        # run-tests.py's parallel workers sometimes interleave their output so that a
        # verdict line is lost: such a test is run again alone in the mode that lost it.
        for verdicts, aggressive, name in ((off, False, "off"), (on, True, "on")):
            if lost := sorted((set(off) | set(on)) - set(verdicts)):
                print(f"aggressive {name}: no verdict printed for {lost}; running them alone")
                verdicts.update(run(a.oracle, a.tree, dirs, aggressive,
                                    Path(tmp) / name, lost)[0])
        stats_off, _ = sum_stats(Path(tmp) / "off")
        stats, refusals = sum_stats(Path(tmp) / "on")
    differ = sorted((t, off.get(t), on.get(t)) for t in set(off) | set(on)
                    if off.get(t) != on.get(t))
    counts = {name: dict(Counter(v.values())) for name, v in (("off", off), ("on", on))}
    out = {"dirs": dirs, "counts": counts, "seconds": {"off": t_off, "on": t_on},
           "differ": differ, "aggressive_stats": stats, "off_stats": stats_off,
           "refusals": sorted(set(refusals))}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    print(f"aggressive off: {counts['off']} ({t_off:.0f} s)")
    print(f"aggressive on:  {counts['on']} ({t_on:.0f} s)")
    print(f"rewriting over the aggressive run: {stats}")
    for r in sorted(set(refusals)):
        print(f"  refused: {r}")
    for t, x, y in differ:
        print(f"DIFFERENT {t}: off {x}, on {y}")
    # The aggressive run must have rewritten, and the off run must not have.
    if not stats.get("rewritten") or stats_off.get("rewritten"):
        print("aggressive mode did not take effect as expected", file=sys.stderr)
        return 1
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
