#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs MicroPython's own test suite (the fetched tree's tests/run-tests.py) against a
target and summarises it per directory: LociOS in QEMU by default, or a reference build
(`--instance unix`, or an execpty command for the official ARM qemu port).

Each configuration (bytecode, via-mpy, native = --via-mpy --emit native) is one
run-tests.py invocation over all directories; its per-test lines are split by directory.
Failures are checked against tests/upstream/expected-failures.txt; every skip gets a
reason (the feature the test probed for, or run-tests.py's own skip rule). Writes JSON
(default build/upstream-results.json) and prints a table. Exit status 1 when a failure
is not listed, or a listed failure passes (stale entry).

--aggressive switches the rewriter's aggressive mode on in the guest before every test
(the bridge's --rw-aggressive); `--compare OFF.json ON.json` then checks that every
test got the same verdict in both runs (issue 7; `make upstream-aggressive`).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
MPY_TREE = Path(os.environ.get("MICROPY_DIR", BUILD / "micropython-1.25.0")).resolve()
EXPECTED = ROOT / "tests" / "upstream" / "expected-failures.txt"

DIRS = ("basics", "float", "micropython", "misc", "stress", "import", "extmod")
CONFIGS = {
    "bytecode": [],
    "via-mpy": ["--via-mpy"],
    "native": ["--via-mpy", "--emit", "native"],
}
# Test folders whose tests import their siblings (import1b.py, pkg/, ext/): copied into
# /data of the runner's private image copy, under GUEST_TREE, and each of their tests runs
# with that folder as the guest's cwd (tools/test/upstream_runtests.py).
GUEST_DIRS = ("import",)
GUEST_TREE = "/data/mpy-tests"
UNITTEST_REASON = "needs unittest (micropython-lib, which the Debian tree leaves empty)"
LINE = re.compile(r"^(pass|FAIL|skip)\s+(\S+)")


@dataclass
class DirResult:
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)   # test -> reason

    def as_json(self, expected: dict[str, str]) -> dict:
        return {
            "passed": len(self.passed), "failed": len(self.failed),
            "skipped": len(self.skipped),
            "failures": {t: expected.get(t, "NOT LISTED") for t in self.failed},
            "skips": self.skipped,
        }


def load_expected(path: Path, config: str, target: str) -> dict[str, str]:
    """expected-failures.txt: `<test> <targets> <configs> <reason...>`; targets and
    configs are comma lists or `*`."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4:
            raise SystemExit(f"{path}:{n}: need `<test> <targets> <configs> <reason>`")
        test, targets, configs, reason = parts
        if (targets == "*" or target in targets.split(",")) and \
                (configs == "*" or config in configs.split(",")):
            out[test] = reason
    return out


def may_pass(reason: str) -> bool:
    """A listed failure whose reason starts `sometimes:` fails only some of the time (it
    reads memory the test never set): passing is no news, failing is expected."""
    return reason.startswith("sometimes:")


def unittest_tests(dirs: list[str]) -> list[str]:
    found = []
    for d in dirs:
        for p in sorted((MPY_TREE / "tests" / d).glob("*.py")):
            text = p.read_text(errors="replace")
            if re.search(r"^\s*(import unittest|from unittest)", text, re.M):
                found.append(f"{d}/{p.name}")
    return found


def runner_skip_comments() -> dict[str, str]:
    """`skip_tests.add("x.py")  # why` lines of run-tests.py: test -> why."""
    out = {}
    src = (MPY_TREE / "tests" / "run-tests.py").read_text()
    for m in re.finditer(r'skip_tests\.add\(\s*"([^"]+)"\s*\)\s*(?:#\s*(.*))?', src):
        out.setdefault(m.group(1), (m.group(2) or "").strip())
    return out


def skip_reason(test: str, config: str, comments: dict[str, str]) -> str:
    """Why run-tests.py skipped `test`: the feature probe before the test's own
    print("SKIP"), or the runner's rule."""
    if test in comments:
        why = comments[test] or "listed without comment"
        return f"run-tests.py skip list ({config}): {why}"
    path = MPY_TREE / "tests" / test
    lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
    for i, line in enumerate(lines):
        if 'print("SKIP")' in line or "print('SKIP')" in line:
            probe = []
            for prev in reversed(lines[:i]):
                s = prev.strip()
                if s.startswith(("try:", "if ", "elif ")) or not s:
                    if s.startswith(("if ", "elif ")):
                        probe.insert(0, s.rstrip(":"))
                    break
                if not s.startswith(("except", "#")):
                    probe.insert(0, s)
            text = "; ".join(probe)[:120] or f"feature probe at line {i + 1}"
            return f"target lacks: {text}"
    name = Path(test).stem
    if name.startswith(("native_", "viper_")) or config == "native":
        return "run-tests.py: native emitter rules for this target"
    return "run-tests.py: feature check or platform rule (see its run_tests())"


def seed_guest_tree(image: Path, dirs: list[str]) -> list[str]:
    """Copies the suite's folders of GUEST_DIRS among `dirs` into /data of `image` (a
    private copy), under GUEST_TREE; returns the folders copied."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # run as a file: `tools` importable
    from tools import datafs

    wanted = [d for d in dirs if d in GUEST_DIRS]
    if not wanted:
        return []
    inside = GUEST_TREE.removeprefix("/data")
    fd = os.open(image, os.O_RDWR)
    try:
        fs = datafs.open_fs(fd, datafs.find_data(fd))
        for d in wanted:
            datafs.put_tree(fs, MPY_TREE / "tests" / d, f"{inside}/{d}")
        fs.unmount()
    except ValueError as e:
        raise SystemExit(f"{image}: cannot put the test tree into /data: {e}") from None
    finally:
        os.close(fd)
    return wanted


def run_config(config: str, dirs: list[str], instance: str, target: str,
               files: list[str] | None, results: Path, mpy_cross: Path,
               extra: list[str], guest_dirs: list[str]) -> tuple[dict[str, DirResult], str, float]:
    tests_dir = MPY_TREE / "tests"
    unit = unittest_tests(dirs)
    runner = ["run-tests.py"]
    if guest_dirs:
        runner = [str(ROOT / "tools" / "test" / "upstream_runtests.py"), "--guest-tree",
                  GUEST_TREE, "--guest-dirs", ",".join(guest_dirs), "--"]
    cmd = [sys.executable, *runner, "-t", instance, "-r", str(results), *CONFIGS[config],
           *extra]
    for t in unit:
        cmd += ["-e", "^" + re.escape(t) + "$"]
    cmd += files if files else ["-d", *dirs]
    # MICROPY_DIR absolute: upstream_runtests.py starts in the tree's tests/ folder.
    env = dict(os.environ, MICROPY_MPYCROSS=str(mpy_cross), MICROPY_DIR=str(MPY_TREE))
    print(f"== {target} {config}: {shlex.join(cmd)}", flush=True)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=tests_dir, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace",
                          preexec_fn=lambda: _ulimit_nofile(1024))
    elapsed = time.monotonic() - t0
    comments = runner_skip_comments()
    per_dir: dict[str, DirResult] = {d: DirResult() for d in dirs}
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        verdict, test = m.groups()
        d = test.split("/", 1)[0]
        r = per_dir.setdefault(d, DirResult())
        if verdict == "pass":
            r.passed.append(test)
        elif verdict == "FAIL":
            r.failed.append(test)
        else:
            r.skipped[test] = skip_reason(test, config, comments)
    if not files:
        for t in unit:
            per_dir.setdefault(t.split("/", 1)[0], DirResult()).skipped[t] = UNITTEST_REASON
    return per_dir, proc.stdout, elapsed


def _ulimit_nofile(n: int) -> None:
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def lociOS_instance(image: Path, mem: str, log: Path, rw_stats: Path | None = None) -> str:
    bridge = ROOT / "tools" / "guest" / "upstream_target.py"
    aggressive = f"--rw-aggressive --rw-stats {shlex.quote(str(rw_stats))} " if rw_stats else ""
    return (f"exec:{shlex.quote(sys.executable)} {shlex.quote(str(bridge))} {aggressive}"
            f"--image {shlex.quote(str(image))} --mem {mem} 2>>{shlex.quote(str(log))}")


def rw_stats_total(path: Path) -> tuple[dict[str, int], list[str]]:
    """The rewriter's counters summed over the guests the bridge booted: per boot, its
    last line (counters run from boot; the last test's own work is not in it); and the
    verifier's distinct refusal messages."""
    last: list[dict] = []
    refusals: set[str] = set()
    for line in path.read_text().splitlines() if path.is_file() else []:
        if line.startswith("boot "):
            last.append({})
        elif last:
            last[-1] = ast.literal_eval(line.split(" ", 1)[1])
            refusals.add(last[-1].get("last_refusal", ""))
    total: dict[str, int] = {}
    for d in last:
        for k, v in d.items():
            if isinstance(v, int):
                total[k] = total.get(k, 0) + v
            elif isinstance(v, dict):
                for kk, vv in v.items():
                    total[f"edits.{kk}"] = total.get(f"edits.{kk}", 0) + vv
    total["switches"] = sum(1 for line in path.read_text().splitlines()
                            if not line.startswith("boot ")) if path.is_file() else 0
    return total, sorted(refusals - {""})


def compare(off_path: Path, on_path: Path) -> int:
    """Same verdict per test in both runs, for every configuration both ran."""
    off, on = json.loads(off_path.read_text()), json.loads(on_path.read_text())
    bad = 0
    for config in off["configs"]:
        if config not in on["configs"]:
            continue
        a, b = off["configs"][config]["verdicts"], on["configs"][config]["verdicts"]
        diff = sorted(t for t in set(a) | set(b) if a.get(t) != b.get(t))
        counts = {name: {v: list(x.values()).count(v) for v in ("pass", "FAIL", "skip")}
                  for name, x in (("off", a), ("on", b))}
        print(f"{config}: off {counts['off']} ({off['configs'][config]['seconds']:.0f} s), "
              f"aggressive {counts['on']} ({on['configs'][config]['seconds']:.0f} s)")
        for t in diff:
            print(f"DIFFERENT {config} {t}: off {a.get(t, 'not run')}, "
                  f"aggressive {b.get(t, 'not run')}")
        bad += len(diff)
    stats = on.get("rw_stats", {})
    print(f"rewriter in the aggressive run: {stats}")
    for config, c in on["configs"].items():
        for why in c.get("rw_refusals", []):
            print(f"  {config}: the verifier refused: {why}")
    if not on.get("aggressive") or off.get("aggressive"):
        print("PROBLEM: the first file must be a run without --aggressive, the second with")
        bad += 1
    elif not stats.get("rewritten"):
        print("PROBLEM: the aggressive run rewrote nothing")
        bad += 1
    return 1 if bad else 0


def markdown_table(paths: list[Path]) -> str:
    """One row per directory, one column group per (target, config) of the given
    result files: passed / failed / skipped."""
    reports = [json.loads(p.read_text()) for p in paths]
    cols = [(r["target"], cfg, c) for r in reports for cfg, c in r["configs"].items()]
    dirs = list(dict.fromkeys(d for _, _, c in cols for d in c["dirs"]))
    head = "| directory | " + " | ".join(f"{t} {cfg}" for t, cfg, _ in cols) + " |"
    rows = [head, "|---|" + "---|" * len(cols)]
    for d in dirs + ["**total**"]:
        cells = []
        for _, _, c in cols:
            rs = list(c["dirs"].values()) if d == "**total**" else [c["dirs"].get(d)]
            if None in rs:
                cells.append("-")
                continue
            cells.append("/".join(str(sum(r[k] for r in rs))
                                  for k in ("passed", "failed", "skipped")))
        rows.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--table"]:
        print(markdown_table([Path(p) for p in argv[1:]]))
        return 0
    if argv[:1] == ["--compare"] and len(argv) == 3:
        return compare(Path(argv[1]), Path(argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=BUILD / "lociOS.img")
    # A smaller guest keeps heap-filling tests (micropython/extreme_exc.py grows a list
    # until MemoryError) inside run-tests.py's 10 s idle timeout under TCG.
    ap.add_argument("--mem", default="128M", help="guest RAM for LociOS runs")
    ap.add_argument("--instance", help="run-tests.py -t value (default: LociOS via the "
                    "serial bridge)")
    ap.add_argument("--target", default="lociOS", help="name in the results and in "
                    "expected-failures.txt")
    ap.add_argument("--configs", default="bytecode,via-mpy,native")
    ap.add_argument("--dirs", default=",".join(DIRS))
    ap.add_argument("--files", nargs="*", help="only these tests (relative to tests/)")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="only every Nth test of each directory (sorted by name): the "
                         "quick slice `make test` runs")
    ap.add_argument("--mpy-cross", type=Path, default=BUILD / "port" / "mpy-cross" / "mpy-cross")
    ap.add_argument("--expected", type=Path, default=EXPECTED)
    ap.add_argument("--json", type=Path, default=BUILD / "upstream-results.json")
    ap.add_argument("--results-dir", type=Path, default=BUILD / "upstream")
    ap.add_argument("--runner-arg", action="append", default=[],
                    help="extra argument for run-tests.py (repeatable)")
    ap.add_argument("--aggressive", action="store_true",
                    help="LociOS: the rewriter's aggressive mode on before every test")
    args = ap.parse_args(argv)

    dirs = args.dirs.split(",")
    if args.sample > 1 and not args.files:
        args.files = [f"{d}/{p.name}" for d in dirs for p in
                      sorted((MPY_TREE / "tests" / d).glob("*.py"))[::args.sample]]
    # run-tests.py runs in the tree's tests/ folder: every path it gets must be absolute.
    args.results_dir = args.results_dir.resolve()
    args.json = args.json.resolve()
    args.results_dir.mkdir(parents=True, exist_ok=True)
    instance = args.instance
    rw_stats = args.results_dir / "rw-stats.log" if args.aggressive else None
    guest_dirs: list[str] = []
    if args.aggressive and instance:
        raise SystemExit("--aggressive is for LociOS (the bridge), not --instance")
    if not instance:
        # Boot a private copy: a rebuild during the run must not change the target.
        image = args.results_dir / "lociOS.img"
        shutil.copyfile(args.image, image)
        guest_dirs = seed_guest_tree(image, dirs)
        instance = lociOS_instance(image, args.mem, args.results_dir / "bridge.log", rw_stats)
    report: dict = {"target": args.target, "tree": str(MPY_TREE), "configs": {},
                    "aggressive": args.aggressive}
    problems: list[str] = []
    t_all = time.monotonic()
    for config in args.configs.split(","):
        if rw_stats:
            rw_stats.unlink(missing_ok=True)
        results = args.results_dir / f"{args.target}-{config}"
        per_dir, out, elapsed = run_config(config, dirs, instance, args.target, args.files,
                                           results, args.mpy_cross.resolve(),
                                           args.runner_arg, guest_dirs)
        (args.results_dir / f"{args.target}-{config}.log").write_text(out)
        expected = load_expected(args.expected, config, args.target)
        ran = {t for r in per_dir.values() for t in r.passed + r.failed}
        report["configs"][config] = {
            "seconds": round(elapsed, 1),
            "dirs": {d: r.as_json(expected) for d, r in per_dir.items()},
            "verdicts": {**{t: "pass" for r in per_dir.values() for t in r.passed},
                         **{t: "FAIL" for r in per_dir.values() for t in r.failed},
                         **{t: "skip" for r in per_dir.values() for t in r.skipped}},
        }
        if rw_stats:
            c = report["configs"][config]
            c["rw_stats"], c["rw_refusals"] = rw_stats_total(rw_stats)
        for r in per_dir.values():
            problems += [f"{config}: {t} failed and is not in {args.expected.name}"
                         for t in r.failed if t not in expected]
            problems += [f"{config}: {t} is listed as failing but passed"
                         for t in r.passed if t in expected and not may_pass(expected[t])]
        if not ran:
            problems.append(f"{config}: no test ran; see {results}.log\n{out[-2000:]}")
    report["seconds"] = round(time.monotonic() - t_all, 1)
    if rw_stats:
        report["rw_stats"] = {}
        for c in report["configs"].values():
            for k, v in c["rw_stats"].items():
                report["rw_stats"][k] = report["rw_stats"].get(k, 0) + v
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    print_table(report)
    for p in problems:
        print("PROBLEM:", p)
    print(f"results: {args.json}  ({report['seconds']:.0f} s)")
    return 1 if problems else 0


def print_table(report: dict) -> None:
    print(f"\n{report['target']}: passed / failed / skipped")
    for config, c in report["configs"].items():
        total = [0, 0, 0]
        cells = []
        for d, r in c["dirs"].items():
            cells.append(f"{d} {r['passed']}/{r['failed']}/{r['skipped']}")
            total[0] += r["passed"]
            total[1] += r["failed"]
            total[2] += r["skipped"]
        print(f"  {config:9} total {total[0]}/{total[1]}/{total[2]} ({c['seconds']:.0f} s): "
              + ", ".join(cells))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
