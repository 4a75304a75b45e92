#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make bench-vm`: MicroPython's tests/perf_bench inside LociOS under QEMU -icount
(guest cycles follow instruction counts), optimiser OFF vs ON in the same boot, each
result checked against CPython (or the benchmark's .exp), plus the unix port of the same
MicroPython tree under callgrind for reference, and (--cpython) CPython under callgrind
for the ON/CPython column; optionally (--prof-ref) the same OFF runs
in an image built with LOCIOS_PROF=0, for the profiler's overhead. Writes a markdown
table and a JSON file under build/bench/."""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest import guestconsole

ROOT = guestconsole.ROOT
MICROPY_DIR = Path(os.environ.get("MICROPY_DIR", ROOT / "build" / "micropython-1.25.0"))
BENCH_DIR = MICROPY_DIR / "tests" / "perf_bench"

# Benchmarks not run, and why (checked against this port; see the report of issue 7).
SKIP = {
    "core_import_mpy_single": "times the first import of a module only: after the "
    "warm-up run it is cached in sys.modules, so repeated runs would time a dict lookup",
}

# Appended to every benchmark's source, so each namespace (OFF, ON) has its own copy and
# the optimiser sees the harness as that benchmark's code, never a leftover of another.
# One setup, one warm-up run (where rewriting happens), then k timed runs, each after a
# collection (comparable heaps) and each followed by the benchmark's own result(). The
# first row times the warm-up and what follows it up to the first timed run.
HARNESS = """
import gc as _bm_gc
from kernel import cycles as _bm_cycles
def _bm_series(param, k, after_warmup=None):
    run, result = bm_setup(param)
    t0 = _bm_cycles()
    run()
    norm, out = result()
    if after_warmup is not None:
        after_warmup(run)
    # The warm-up row's cycles: from the first call to the end of after_warmup (for ON,
    # the settled swap set), result() included.
    rows = [(_bm_cycles() - t0, norm, str(out))]
    for _ in range(k):
        _bm_gc.collect()
        t0 = _bm_cycles()
        run()
        t1 = _bm_cycles()
        norm, out = result()
        rows.append((t1 - t0, norm, str(out)))
    return rows
"""

# REPL helpers: load a benchmark's source (sent as _src) into a fresh namespace; a
# benchmark that prints SKIP raises SystemExit, which must not reach the REPL. Mounts a
# benchmark made (core_import_mpy_*) are undone so the next setup can mount again.
GUEST_HELPERS = """
import gc, sys, vfs
def _bm_load():
    ns = {'__name__': 'bm'}
    try:
        exec(_src, ns)
    except SystemExit:
        return None
    return ns
def _bm_unmount():
    for p in ('/__remote',):
        try:
            vfs.umount(p)
        except OSError:
            pass
        while p in sys.path:
            sys.path.remove(p)
"""

# How the optimiser is switched on for the ON half. Each entry: code run before the ON
# namespace is created, the guest expression called after the warm-up run (or None),
# code run after the ON measurement, and an expression whose value is recorded.
ON_MODES: dict[str, dict[str, str | None]] = {
    # _rw.aggressive(True): every heap function is rewritten at its first call, so the
    # fresh namespace's functions are rewritten during the warm-up run.
    "aggressive": {"enable": "import _rw; _rw.aggressive(True)", "after_warmup": None,
                   "disable": "_rw.aggressive(False)", "stats": "_rw.stats()"},
    # opt.settle(run): after the warm-up, alternate runs and gated optimiser passes
    # (record calls, verify, replay, A/B, swap) until the hottest functions are decided.
    # The benchmark runs in an exec() namespace, which opt must be told to trust.
    "opt": {"enable": "import opt; _j0 = len(opt.journal(1 << 30))",
            "after_warmup": "lambda run: opt.trust(_ns) or opt.settle(run)",
            # After the timed runs: roll the namespace's swaps back, so the next
            # benchmark starts with an empty promotion table and this one's functions
            # can be collected.
            "drop": "_ = opt.forget(_ns)",
            "disable": "",
            "stats": "[(e['function'], e['kind'], e['verdict'], e['gate'], e['gain'],"
                     " e['detail'][:60])"
                     " for e in opt.journal(1 << 30)[_j0:]]"},
}
# The same, with twins that call their small callees instead of inlining them (what
# inlining adds: vm/opt/README.md, "Inlined calls").
ON_MODES["opt-noinline"] = dict(ON_MODES["opt"], enable="import opt; opt.INLINE = False; "
                                "_j0 = len(opt.journal(1 << 30))")


# ---- parameters and truth (host) ------------------------------------------------------
def param_keys(source: str) -> list[tuple[int, int]]:
    """The (N, M) keys of a benchmark's bm_params dict, read without running it (its
    values may name the benchmark's own classes)."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "bm_params"
                and isinstance(node.value, ast.Dict)):
            return [tuple(ast.literal_eval(k)) for k in node.value.keys]
    raise ValueError("no bm_params dict")


def choose_key(keys: list[tuple[int, int]], n: int, m: int) -> tuple[int, int] | None:
    """benchrun.py's rule: the largest key with 10*N' <= 12*N and M' <= M."""
    best = None
    for nm in keys:
        if 10 * nm[0] <= 12 * n and nm[1] <= m and (best is None or nm > best):
            best = nm
    return best


TRUTH_SCRIPT = """
import sys
exec(sys.argv[4])  # CPYTHON_SHIM
src = open(sys.argv[1]).read()
ns = {'__name__': 'bm'}
exec(src, ns)
run, result = ns['bm_setup'](ns['bm_params'][(int(sys.argv[2]), int(sys.argv[3]))])
run()
norm, out = result()
print(repr((norm, str(out))))
"""


def truth(name: str, key: tuple[int, int]) -> tuple[str | None, str]:
    """(expected result string or None, where it came from): the .exp file if the
    benchmark has one, else CPython's result; None when neither can give one (then
    upstream's run-perfbench.py does not check either)."""
    exp = BENCH_DIR / f"{name}.py.exp"
    if exp.is_file():
        return exp.read_text().strip(), ".exp"
    p = subprocess.run([sys.executable, "-c", TRUTH_SCRIPT, str(BENCH_DIR / f"{name}.py"),
                        str(key[0]), str(key[1]), CPYTHON_SHIM], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        return None, "CPython cannot run it: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return ast.literal_eval(p.stdout.strip())[1], "CPython"


# ---- guest ----------------------------------------------------------------------------
def send_source(g: guestconsole.Guest, source: str) -> None:
    """Binds _src in the guest to the text, one string literal per line, in paste mode.
    The paste ends at a prompt at the start of a line: the benchmark's text may hold
    `>>> ` itself, and its echo must not end the wait."""
    lines = ["_src = (", *(repr(line) for line in source.splitlines(True)), ")"]
    out = g.paste("\n".join(lines), timeout=300, end=r"\r\n" + re.escape(guestconsole.PROMPT))
    check(out.rsplit("=== ", 1)[-1], "loading the benchmark source")


def guest_phase(g: guestconsole.Guest, key: tuple[int, int], k: int,
                after_warmup: str | None = None, timeout: float = 900,
                before_drop: str | None = None) -> list | None:
    """One phase: fresh namespace, setup, warm-up, k timed runs; rows of (cycles, norm,
    result string), warm-up first (cycles 0); None if the benchmark skipped itself.
    before_drop runs while the namespace `_ns` still exists."""
    # Both phases start from an empty profiler table, so OFF and ON compare like with
    # like: how full the table is changes the cost of every frame exit (a newcomer in a
    # full window lands off its home slot; before eviction it was not counted at all
    # and probed on every exit: core_yield_from ran 55 % slower).
    g.run("import _prof; _prof.reset()")
    g.run("_ns = _bm_load()")
    if g.eval("_ns is None") == "True":
        return None
    hook = after_warmup or "None"
    rows = g.ask(f"_ns['_bm_series'](_ns['bm_params'][{key!r}], {k}, {hook})", timeout=timeout)
    if before_drop:
        check(g.run(before_drop), before_drop)
    g.run("_ns = None; _bm_unmount(); gc.collect()")
    return rows


def run_on(g: guestconsole.Guest, mode: str, key: tuple[int, int], k: int):
    """The ON procedure for one benchmark (see ON_MODES): enable, fresh namespace,
    warm-up (rewriting happens), k timed runs, disable. Returns (rows, optimiser stats)."""
    m = ON_MODES[mode]
    if m["enable"]:
        check(g.run(m["enable"]), m["enable"])
    rows = guest_phase(g, key, k, m["after_warmup"], before_drop=m.get("drop"))
    stats = g.ask(m["stats"])
    if m["disable"]:
        check(g.run(m["disable"]), m["disable"])
    return rows, stats


def check(out: str, what: str) -> None:
    if "Traceback" in out or "Error" in out:
        raise RuntimeError(f"guest: {what}: {out.strip()}")


def boot(image: Path, log: Path | None) -> guestconsole.Guest:
    guestconsole.BOOT_TIMEOUT = 300  # -icount boots are slower, more so on a busy host
    g = guestconsole.Guest(image, icount=True, log=log)
    g.boot()
    print(f"bench-vm: {image} booted in {g.boot_seconds:.0f} s", file=sys.stderr)
    g.paste(GUEST_HELPERS)
    return g


# ---- unix port under callgrind ------------------------------------------------------------
# The timed run goes through exec() of a precompiled code object, so callgrind can collect
# exactly that call (--toggle-collect on the exec builtin; perf_bench itself never execs).
UNIX_HARNESS = """
_bm_code = compile('run()', 'bm', 'exec')
_bm_run, _bm_result = bm_setup(bm_params[{key!r}])
_bm_run()
exec(_bm_code, {{'run': _bm_run}})
print(repr(tuple(str(x) if i else x for i, x in enumerate(_bm_result()))))
"""


def callgrind(unix: Path, name: str, source: str, key: tuple[int, int]) -> tuple[int, str]:
    """(instructions of one timed run after a warm-up, result string)."""
    with tempfile.TemporaryDirectory(prefix="bench-vm-") as tmp:
        script = Path(tmp) / f"{name}.py"
        script.write_text(source + UNIX_HARNESS.format(key=key))
        out = Path(tmp) / "cg.out"
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            "--collect-atstart=no", "--toggle-collect=mp_builtin_exec",
                            str(unix), str(script)], capture_output=True, text=True,
                           timeout=1800, cwd=tmp)
        if p.returncode != 0:
            raise RuntimeError(f"unix {name}: {p.stderr.strip()[-500:]}")
        m = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
        if not m or int(m.group(1)) == 0:
            raise RuntimeError(f"unix {name}: callgrind collected nothing (stripped binary?)")
        return int(m.group(1)), ast.literal_eval(p.stdout.strip().splitlines()[-1])[1]


# ---- CPython under callgrind -------------------------------------------------------------
# CPython's exec builtin is a static function, invisible to callgrind in a stripped
# interpreter, so one timed run is the difference between two whole processes: set-up,
# warm-up and one run, and the same with a second run. PYTHONHASHSEED=0 makes the two
# processes take the same path up to the extra run.
# The viper_call benchmarks name MicroPython's code emitters; CPython runs them as the
# plain Python they are, with micropython.viper and .native as decorators that do nothing.
CPYTHON_SHIM = (
    "import builtins as _bm_b, types as _bm_t\n"
    "_bm_b.micropython = _bm_t.SimpleNamespace(viper=lambda f: f, native=lambda f: f,"
    " const=lambda x: x)\n")
CPYTHON_HARNESS = """
import sys
_bm_run, _bm_result = bm_setup(bm_params[{key!r}])
_bm_run()
for _ in range(int(sys.argv[1])):
    _bm_run()
print(repr(tuple(str(x) if i else x for i, x in enumerate(_bm_result()))))
"""


def cpython_version(python: Path) -> str:
    p = subprocess.run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"{python}: {p.stderr.strip()[-300:]}")
    return p.stdout.strip()


def cpython_callgrind(python: Path, name: str, source: str,
                      key: tuple[int, int]) -> tuple[int | None, str]:
    """(instructions of one run after a warm-up, result string), or (None, why) when
    CPython cannot run the benchmark (the viper ones import micropython)."""
    counts, result = [], ""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="bench-vm-cpython-") as tmp:
        script = Path(tmp) / f"{name}.py"
        script.write_text(CPYTHON_SHIM + source + CPYTHON_HARNESS.format(key=key))
        for runs in (1, 2):
            out = Path(tmp) / f"cg{runs}.out"
            p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                str(python), str(script), str(runs)], capture_output=True,
                               text=True, timeout=3600, cwd=tmp, env=env)
            if p.returncode != 0:
                err = [ln for ln in p.stderr.splitlines() if not ln.startswith("==")]
                return None, "CPython cannot run it: " + (err or ["?"])[-1]
            m = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
            if not m:
                raise RuntimeError(f"cpython {name}: no callgrind totals")
            counts.append(int(m.group(1)))
            if runs == 1:
                result = ast.literal_eval(p.stdout.strip().splitlines()[-1])[1]
    if counts[1] <= counts[0]:
        raise RuntimeError(f"cpython {name}: the second run added no instructions {counts}")
    return counts[1] - counts[0], result


# ---- statistics and report ----------------------------------------------------------------
def summary(rows: list) -> dict:
    """Median and spread ((max - min) / median) of the timed runs (warm-up excluded)."""
    cyc = [r[0] for r in rows[1:]]
    med = statistics.median(cyc)
    return {"cycles": cyc, "median": med, "spread": (max(cyc) - min(cyc)) / med}


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def results_ok(rows: list | None, expected: str | None) -> bool:
    """Every run (warm-up included) gave the same result, and it is the expected one."""
    if not rows:
        return False
    outs = {(r[1], r[2]) for r in rows}
    return len(outs) == 1 and (expected is None or rows[0][2] == expected)


def fmt_pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def markdown(report: dict) -> str:
    on = report["on_mode"]
    lines = [f"## perf_bench in LociOS (-icount guest cycles), optimiser OFF vs ON ({on})", "",
             f"N={report['n']} M={report['m']}, k={report['k']} timed runs after a warm-up; "
             "cycles are medians, spread = (max-min)/median; speed-up = OFF/ON; first call to "
             "settled = guest cycles from the warm-up run's start to the settled swap set; "
             "unix = instructions of one run of the unix port under callgrind; "
             f"CPython = instructions of one run of CPython {report.get('cpython') or '(not run)'}"
             " under callgrind (the difference between one and two runs after a warm-up; the"
             " viper ones as plain Python); "
             "ON/CPython below 1 is fewer instructions than CPython.", "",
             "| benchmark | params | OFF cycles | spread | ON cycles | spread | speed-up "
             "| first call to settled | unix Ir | OFF/unix | CPython Ir | ON/CPython | check |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, b in report["benchmarks"].items():
        if "skipped" in b:
            lines.append(f"| {name} | | | | | | | | | | | | skipped: {b['skipped']} |")
            continue
        off, onr, ux, cp = b.get("off"), b.get("on"), b.get("unix"), b.get("cpython")
        cp_ir = cp.get("ir") if cp else None
        cells = [name, str(tuple(b["key"])),
                 f"{off['median']:.0f}" if off else "", fmt_pct(off["spread"]) if off else "",
                 f"{onr['median']:.0f}" if onr else "", fmt_pct(onr["spread"]) if onr else "",
                 f"{b['speedup']:.3f}" if "speedup" in b else "",
                 str(b["to_settled"]) if "to_settled" in b else "",
                 str(ux["ir"]) if ux else "",
                 f"{off['median'] / ux['ir']:.2f}" if off and ux else "",
                 str(cp_ir) if cp_ir else ("n/a" if cp else ""),
                 f"{onr['median'] / cp_ir:.2f}" if onr and cp_ir else "",
                 b["check"]]
        lines.append("| " + " | ".join(cells) + " |")
    g = report["geomean"]
    if g.get("speedup"):
        lines += ["", f"Geometric-mean speed-up: **{g['speedup']:.3f}x** over "
                  f"{g['count']} benchmarks; slowest {g['min_speedup']:.3f}x "
                  f"({g['min_name']}). Target: >= 1.5x, none below 1.0x."]
    if g.get("on_cpython"):
        lines += ["", f"ON/CPython, geometric mean over {g['on_cpython_count']} benchmarks "
                  f"CPython runs: **{g['on_cpython']:.2f}** (below 1: fewer instructions "
                  "than CPython)."]
        if g.get("on_cpython_bytecode"):
            lines += ["", f"The same without the viper ones (CPython runs them as plain Python "
                      f"against MicroPython's machine code), over "
                      f"{g['on_cpython_bytecode_count']}: **{g['on_cpython_bytecode']:.2f}**."]
    if g.get("off_unix_worst"):
        lines += ["", f"OFF/unix: worst {g['off_unix_worst']:.2f} ({g['off_unix_worst_name']}), "
                  f"geometric mean {g['off_unix']:.2f}."]
    if report.get("prof"):
        p = report["prof"]
        lines += ["", "## Profiler overhead, optimiser OFF (default image vs LOCIOS_PROF=0)",
                  "", "| benchmark | default cycles | LOCIOS_PROF=0 cycles | overhead | check |",
                  "|---|---:|---:|---:|---|"]
        for name, r in p["benchmarks"].items():
            lines.append(f"| {name} | {r['default']:.0f} | {r['noprof']:.0f} | "
                         f"{fmt_pct(r['overhead'])} | {r['check']} |")
        lines += ["", f"Geometric-mean overhead: **{fmt_pct(p['geomean_overhead'])}** "
                  f"(target < 2%)."]
    lines += ["", f"Command: `{report['command']}`; wall time {report['seconds']:.0f} s."]
    return "\n".join(lines) + "\n"


# ---- main -------------------------------------------------------------------------------------
def bench_names(only: str | None) -> list[str]:
    names = sorted(p.stem for p in BENCH_DIR.glob("*.py") if p.stem != "benchrun")
    if only:
        want = set(only.split(","))
        names = [n for n in names if n in want]
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=guestconsole.IMAGE)
    ap.add_argument("--on", choices=[*ON_MODES, "none"], default="opt",
                    help="how the optimiser is switched on (none: OFF runs only)")
    ap.add_argument("-n", type=int, default=100, help="perf_bench N (CPU MHz scale)")
    ap.add_argument("-m", type=int, default=100, help="perf_bench M (heap KiB scale)")
    ap.add_argument("-k", type=int, default=3, help="timed runs per phase")
    ap.add_argument("--only", help="comma-separated benchmark names")
    ap.add_argument("--unix", type=Path, help="unix-port micropython for callgrind")
    ap.add_argument("--cpython", type=Path,
                    help="CPython (3.11) for callgrind: the ON/CPython column")
    ap.add_argument("--prof-ref", type=Path, help="image built with LOCIOS_PROF=0")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    args = ap.parse_args(argv)
    started = time.monotonic()

    names = bench_names(args.only)
    plan: dict[str, dict] = {}
    for name in names:
        src = (BENCH_DIR / f"{name}.py").read_text()
        key = choose_key(param_keys(src), args.n, args.m)
        if name in SKIP:
            plan[name] = {"skipped": SKIP[name]}
        elif key is None:
            plan[name] = {"skipped": f"no bm_params for N={args.n} M={args.m}"}
        else:
            exp, exp_from = truth(name, key)
            plan[name] = {"key": list(key), "source": src, "expected": exp,
                          "expected_from": exp_from}

    args.out.mkdir(parents=True, exist_ok=True)
    runnable = [n for n, b in plan.items() if "skipped" not in b]
    g = boot(args.image, args.out / "vm-console.log")
    try:
        for name in runnable:
            b = plan[name]
            t0 = time.monotonic()
            send_source(g, b["source"] + HARNESS)
            key = tuple(b["key"])
            b["off_rows"] = guest_phase(g, key, args.k)
            if b["off_rows"] is None:
                b["skipped"] = "prints SKIP in LociOS"
                continue
            if args.on != "none":
                b["on_rows"], b["on_stats"] = run_on(g, args.on, key, args.k)
            print(f"bench-vm: {name}: {time.monotonic() - t0:.0f} s", file=sys.stderr)
    finally:
        g.close()

    prof = None
    if args.prof_ref:
        g = boot(args.prof_ref, args.out / "vm-noprof-console.log")
        prof = {"image": str(args.prof_ref), "benchmarks": {}}
        try:
            for name in runnable:
                b = plan[name]
                if "skipped" in b:
                    continue
                send_source(g, b["source"] + HARNESS)
                rows = guest_phase(g, tuple(b["key"]), args.k)
                ok = results_ok(rows, b["expected"])
                d, r = summary(b["off_rows"])["median"], summary(rows)["median"]
                prof["benchmarks"][name] = {"default": d, "noprof": r, "overhead": d / r - 1,
                                            "noprof_cycles": [x[0] for x in rows[1:]],
                                            "check": "ok" if ok else "FAIL"}
        finally:
            g.close()
        ovh = [1 + r["overhead"] for r in prof["benchmarks"].values()]
        prof["geomean_overhead"] = geomean(ovh) - 1

    cpython = cpython_version(args.cpython) if args.cpython else None
    report = {"n": args.n, "m": args.m, "k": args.k, "on_mode": args.on, "cpython": cpython,
              "image": str(args.image), "host": platform.node(), "benchmarks": {},
              "geomean": {}, "prof": prof,
              "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])])}
    failed = False
    for name, b in plan.items():
        if "skipped" in b:
            report["benchmarks"][name] = {"skipped": b["skipped"]}
            continue
        r = {"key": b["key"], "expected_from": b["expected_from"],
             "off": summary(b["off_rows"])}
        checks = [results_ok(b["off_rows"], b["expected"])]
        if b.get("on_rows") is not None:
            r["on"] = summary(b["on_rows"])
            r["on_stats"] = b["on_stats"]
            r["speedup"] = r["off"]["median"] / r["on"]["median"]
            # Guest cycles from the first call to the settled swap set (the warm-up run
            # and the optimiser's passes: recording, replays, A/B rounds).
            r["to_settled"] = b["on_rows"][0][0]
            checks.append(results_ok(b["on_rows"], b["expected"])
                          and b["on_rows"][0][2] == b["off_rows"][0][2])
        if args.unix:
            ir, out = callgrind(args.unix, name, b["source"], tuple(b["key"]))
            r["unix"] = {"ir": ir}
            checks.append(b["expected"] is None or out == b["expected"])
        if args.cpython:
            ir, out = cpython_callgrind(args.cpython, name, b["source"], tuple(b["key"]))
            r["cpython"] = {"ir": ir} if ir is not None else {"why": out}
            if ir is not None:
                checks.append(out == (b["expected"] if b["expected"] is not None
                                      else b["off_rows"][0][2]))
        r["result"] = b["off_rows"][0][2]
        ok = all(checks)
        failed |= not ok
        r["check"] = ("ok" if ok else "FAIL") + ("" if b["expected"] is not None
                                                 else " (no expected value: " +
                                                 b["expected_from"] + ")")
        report["benchmarks"][name] = r
    sp = {n: r["speedup"] for n, r in report["benchmarks"].items() if "speedup" in r}
    if sp:
        worst = min(sp, key=sp.get)
        report["geomean"] = {"speedup": geomean(list(sp.values())), "count": len(sp),
                             "min_speedup": sp[worst], "min_name": worst}
    vs = {n: r["on"]["median"] / r["cpython"]["ir"] for n, r in report["benchmarks"].items()
          if "on" in r and r.get("cpython", {}).get("ir")}
    if vs:
        report["geomean"].update(on_cpython=geomean(list(vs.values())), on_cpython_count=len(vs))
        # Without the viper ones, where CPython runs plain Python against machine code.
        bc = [x for n, x in vs.items() if not n.startswith("viper_")]
        if bc:
            report["geomean"].update(on_cpython_bytecode=geomean(bc),
                                     on_cpython_bytecode_count=len(bc))
    ou = {n: r["off"]["median"] / r["unix"]["ir"] for n, r in report["benchmarks"].items()
          if "off" in r and "unix" in r}
    if ou:
        worst = max(ou, key=ou.get)
        report["geomean"].update(off_unix=geomean(list(ou.values())),
                                 off_unix_worst=ou[worst], off_unix_worst_name=worst)
    report["seconds"] = time.monotonic() - started

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "vm.json").write_text(json.dumps(report, indent=1) + "\n")
    md = markdown(report)
    (args.out / "vm.md").write_text(md)
    print(md)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
