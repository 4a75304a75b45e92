# SPDX-License-Identifier: MIT
"""MicroPython's own tests with every function compiled by the native emitter
(run-tests.py --emit native) on two unix ports from the patched tree: one with native
promotion's emitter changes on (back-edge polls, vm/patches/0008; small-int fast paths,
call-site caches and unbound-local checks, 0009), one with them off; and the `on` build
again compiling everything as the optimiser's second tier compiles twins (direct calls
and iteration, 0021; every float site's fast path, 0029), and once more as it compiles a
Locus step's twin (every jump polls, the entry charges an op, 0023). Every test must get
the same verdict from all four, and the `on` build must also pass the unbound-local tests
run-tests.py skips for native code (make native-suite).

    native_suite.py --on BIN --off BIN --tree PATCHED_TREE --dirs basics,... --out JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from suite import run_tests

# run-tests.py skips these under --emit native because upstream native code does not
# check for unbound locals or empty cells; with 0009 it does, so the `on` build must
# print what CPython prints.
UNBOUND_TESTS = ("basics/annotate_var.py", "basics/del_deref.py", "basics/del_local.py",
                 "basics/scope_implicit.py", "basics/unboundlocal.py")


def unbound_checks(binary: Path, tree: Path) -> dict[str, bool]:
    out = {}
    for test in UNBOUND_TESTS:
        path = tree / "tests" / test
        want = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
        got = subprocess.run([str(binary), "-X", "emit=native", str(path)],
                             capture_output=True, text=True, timeout=60)
        out[test] = got.returncode == 0 and got.stdout == want.stdout
    return out


# The builds' runs: `tier` is the `on` build compiling all native code as the optimiser's
# second tier compiles its twins (direct calls and iteration, vm/patches/0021), with every
# float site's fast path guarded as floats (0029: a twin gets those type feedback
# chooses, so this runs every fast path and every guard's failure) and every call of a
# small def of the test inlined behind its guard (0030); `counted` also as it compiles a
# Locus step's twin, counting a budget's ops (vm/patches/0023), which inlines nothing.
RUNS = ("off", "on", "tier", "counted")
TIER_ENV = {"LOCIOS_NATIVE_TIER": "1", "LOCIOS_NATIVE_FLOAT": "3", "LOCIOS_NATIVE_INLINE": "2"}
COUNTED_ENV = {**TIER_ENV, "LOCIOS_NATIVE_COUNT": "1"}


# perf_bench's programs call small functions and methods from functions, which the
# tests above seldom do: each is run once at its smallest parameters, as bytecode on the
# off build and as the tier run's native code on the on build, and must print the same.
PERF_DRIVER = """
import sys
name = sys.argv[-1]
ns = {"__name__": "bench"}
exec(compile(open(name).read(), name, "exec"), ns)
run, result = ns["bm_setup"](ns["bm_params"][sorted(ns["bm_params"])[0]])
run()
print(result())
"""
PERF_SKIP = ("benchrun.py", "core_import_mpy_multi.py", "core_import_mpy_single.py")


def perf_checks(on: Path, off: Path, tree: Path) -> dict[str, dict]:
    """{benchmark: {"same": ..., "inlined": ..., "float_fast": ..., "unboxed": ...}}."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="native-perf-") as d:
        driver = Path(d) / "driver.py"
        driver.write_text(PERF_DRIVER)
        for path in sorted((tree / "tests" / "perf_bench").glob("*.py")):
            if path.name in PERF_SKIP or path.name.startswith("viper_"):
                continue
            stats = Path(d) / f"{path.stem}.stats"
            want = subprocess.run([str(off), str(driver), path.name], cwd=path.parent,
                                  capture_output=True, text=True, timeout=300)
            got = subprocess.run([str(on), "-X", "emit=native", str(driver), path.name],
                                 cwd=path.parent, capture_output=True, text=True, timeout=300,
                                 env=dict(os.environ, **TIER_ENV,
                                          LOCIOS_NATIVE_STATS=str(stats)))
            same = (want.returncode == got.returncode == 0 and want.stdout == got.stdout)
            out[path.name] = {"same": same, **native_stats(stats)}
    return out


def native_stats(path: Path) -> dict[str, int]:
    """The calls inlined, float fast paths and unboxed stores made by a run's processes
    (each appends a line at exit: rw_unix.c); the off build writes none."""
    total = {"inlined": 0, "float_fast": 0, "unboxed": 0}
    for line in path.read_text().splitlines() if path.exists() else ():
        for field in line.split():
            key, _, value = field.partition("=")
            if key in total:
                total[key] += int(value)
    return total


def run(binary: Path, tree: Path, dirs: list[str], files: list[str] | None = None,
        env: dict[str, str] | None = None) -> tuple[dict[str, str], float]:
    """Verdicts of the tests in dirs (or just files, one at a time), all native."""
    return run_tests(binary, tree, dirs, files, ("--emit", "native"), env)


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
    how = {"off": (args.off, None), "on": (args.on, None), "tier": (args.on, TIER_ENV),
           "counted": (args.on, COUNTED_ENV)}
    for name in RUNS:
        binary, env = how[name]
        print(f"native-suite: {name}: run-tests.py --emit native -d {' '.join(dirs)}",
              flush=True)
        with tempfile.TemporaryDirectory(prefix="native-stats-") as d:
            stats = Path(d) / "stats"
            verdicts, took = run(binary, args.tree, dirs,
                                 env={**(env or {}), "LOCIOS_NATIVE_STATS": str(stats)})
            made = native_stats(stats)
        report[name] = {"verdicts": verdicts, "seconds": round(took, 1),
                        "counts": dict(Counter(verdicts.values())), **made}
        print(f"native-suite: {name}: {report[name]['counts']} in {took:.0f} s; "
              f"{made['inlined']} calls inlined, {made['float_fast']} float fast paths "
              f"({made['unboxed']} storing unboxed)",
              flush=True)
    got = {name: report[name]["verdicts"] for name in RUNS}
    every = set().union(*got.values())
    # run-tests.py's parallel workers sometimes interleave their output so that a verdict
    # line is lost (as in suite.py): such a test is run again alone on the build that lost it.
    for name in RUNS:
        if lost := sorted(every - set(got[name])):
            print(f"native-suite: {name}: no verdict printed for {lost}; running them alone")
            got[name].update(run(how[name][0], args.tree, dirs, lost, how[name][1])[0])
            report[name]["counts"] = dict(Counter(got[name].values()))
    off = got["off"]
    differ = sorted(t for t in every if any(got[n].get(t) != off.get(t) for n in RUNS))
    if differ:
        # A garbled line can also turn into another verdict (a fresh Debian root showed a
        # pass read as a skip): each test that differs is run again alone on every build,
        # and only what differs then is reported.
        print(f"native-suite: {differ} differ; running them alone on every build")
        for name in RUNS:
            got[name].update(run(how[name][0], args.tree, dirs, differ, how[name][1])[0])
            report[name]["counts"] = dict(Counter(got[name].values()))
        differ = sorted(t for t in differ if any(got[n].get(t) != off.get(t) for n in RUNS))
    report["differ"] = {t: [got[n].get(t) for n in RUNS] for t in differ}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True))
    report["unbound"] = unbound_checks(args.on, args.tree)
    report["perf_bench"] = perf_checks(args.on, args.off, args.tree)
    args.out.write_text(json.dumps(report, indent=1, sort_keys=True))
    for t in differ:
        print(f"native-suite: DIFFERS {t}: "
              + ", ".join(f"{n} {got[n].get(t)}" for n in RUNS))
    print(f"native-suite: {len(differ)} of {len(every)} tests differ between "
          f"{', '.join(RUNS)} ({args.out})")
    wrong = [t for t, ok in report["unbound"].items() if not ok]
    print(f"native-suite: on, unbound locals: {len(UNBOUND_TESTS) - len(wrong)} of "
          f"{len(UNBOUND_TESTS)} print what CPython prints"
          + (f" (not: {', '.join(wrong)})" if wrong else ""))
    perf = report["perf_bench"]
    unlike = [name for name, r in perf.items() if not r["same"]]
    print(f"native-suite: tier, perf_bench: {len(perf) - len(unlike)} of {len(perf)} print "
          f"what the bytecode prints, with {sum(r['inlined'] for r in perf.values())} calls "
          f"inlined and {sum(r['float_fast'] for r in perf.values())} float fast paths "
          f"({sum(r['unboxed'] for r in perf.values())} storing unboxed)"
          + (f" (not: {', '.join(unlike)})" if unlike else ""))
    return 1 if differ or wrong or unlike else 0


if __name__ == "__main__":
    sys.exit(main())
