#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a colony of the Loci mesh in LociOS over many seeds, from the host:

    loci_run.py foraging --seeds 1-30 --opt pheromone=False

boots the image once, runs `colonies.<name>.run(seed=s, **opts)` for every seed in the
guest, streams its progress, and prints a table (per metric: median, mean, min, max
over the seeds; lists of numbers are summarised element by element). The raw results
go to build/colonies/<name>[-opts].json."""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

OUT = Path("build/colonies")


def seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def opt(text: str) -> tuple[str, object]:
    k, _, v = text.partition("=")
    if not k.isidentifier() or not _:
        raise argparse.ArgumentTypeError(f"--opt wants name=value, got {text!r}")
    try:
        return k, ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return k, v


def run_seed(g: Guest, name: str, seed: int, opts: dict, timeout: float) -> dict:
    kw = "".join(f", {k}={v!r}" for k, v in opts.items())
    g.send(f"print('RESULT', repr(colonies_{name}.run(seed={seed}{kw})))\r")
    deadline = time.monotonic() + timeout
    while True:
        i = g.expect_any([rb"RESULT (.*?)\r\n", rb"Traceback[^>]*>>> ", rb"\r\n"],
                         timeout=max(1.0, deadline - time.monotonic()))
        if i == 0:
            text = g.match.group(1).decode()
            g.expect(">>> ")
            return ast.literal_eval(text)
        if i == 1:
            raise RuntimeError("the colony raised:\n" + g.match.group(0).decode())
        line = g.before.decode("utf-8", "replace").strip()
        if line and not line.startswith("print('RESULT'"):
            print(f"  [seed {seed}] {line}", file=sys.stderr)


def summarise(results: list[dict]) -> list[tuple[str, str]]:
    rows = []
    keys = [k for k in results[0] if all(k in r for r in results)]
    for k in keys:
        vals = [r[k] for r in results]
        nums = [float(v) for v in vals
                if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if nums and len(nums) + vals.count(None) == len(vals):
            none = f"  ({vals.count(None)} of {len(vals)} None)" if None in vals else ""
            rows.append((k, _stats(nums) + none))
        elif all(isinstance(v, (list, tuple)) for v in vals) and len({len(v) for v in vals}) == 1:
            for i in range(len(vals[0])):
                col = [v[i] for v in vals]
                if all(isinstance(c, (int, float)) for c in col):
                    rows.append((f"{k}[{i}]", _stats([float(c) for c in col])))
                else:
                    rows.append((f"{k}[{i}]", f"{sum(c is None for c in col)} of "
                                 f"{len(col)} None"))
        elif all(isinstance(v, bool) for v in vals):
            rows.append((k, f"{sum(vals)} of {len(vals)} true"))
    return rows


def _stats(xs: list[float]) -> str:
    return (f"median {statistics.median(xs):.4g}  mean {statistics.mean(xs):.4g}  "
            f"min {min(xs):.4g}  max {max(xs):.4g}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("--seeds", default="1", type=seeds)
    ap.add_argument("--opt", action="append", type=opt, default=[])
    ap.add_argument("--icount", action="store_true", help="deterministic guest time")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per seed")
    ap.add_argument("--image", type=Path, default=IMAGE)
    args = ap.parse_args()
    opts = dict(args.opt)
    g = Guest(args.image, icount=args.icount)
    results: list[dict] = []
    OUT.mkdir(parents=True, exist_ok=True)
    tag = "".join(f"-{k}={v}" for k, v in opts.items())
    path = OUT / re.sub(r"[^A-Za-z0-9_.=-]", "_", f"{args.name}{tag}.json")
    try:
        g.boot()
        out = g.run(f"import colonies.{args.name} as colonies_{args.name}")
        if "Error" in out:
            print(out, file=sys.stderr)
            return 1
        for s in args.seeds:
            t = time.monotonic()
            r = run_seed(g, args.name, s, opts, args.timeout)
            r["seed"] = s
            print(f"seed {s}: {r}  ({time.monotonic() - t:.0f} s)", file=sys.stderr)
            results.append(r)
            # Written after every seed, so a long run interrupted keeps what it measured.
            path.write_text(json.dumps({"colony": args.name, "opts": opts,
                                        "results": results}, indent=1, default=repr))
    finally:
        g.close()
    print(f"\n{args.name} {opts or ''} over {len(results)} seeds ({path}):")
    for k, v in summarise([{k: v for k, v in r.items() if k != "seed"} for r in results]):
        print(f"  {k:28s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
