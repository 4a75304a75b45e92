#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make bench-inspect`: what the console inspectors cost on a serial line. Runs each
colony (seed 1, its default length) in the guest under QEMU -icount, then counts the bytes
`show()` writes for every flavour at 80x24, in colour, in ASCII and stretched over the
whole console (fill=True), and the seconds those bytes take at 115200 baud (10 bits a
byte). Prints a Markdown table and writes build/bench/inspect.json."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

COLONIES = ("foraging", "bridge", "tasks", "healing", "hostile")
BAUD = 115200

GUEST = r"""
import kernel, lo
from lo import *
def nbytes(fn):
    # Everything fn prints, counted as it leaves for the line (newlines as CR LF).
    kernel.capture(True)
    try:
        fn()
    finally:
        b, lost = kernel.capture(False)
    return len(b) + lost
def measure(name, **opts):
    run(name, seed=1, quiet=True, **opts)
    console(80, 24)
    rows = []
    F = lo.F
    for fl in F.names():
        grid_ = F.kind(fl) == 'grid'
        rows.append({'flavour': fl, 'kind': F.kind(fl), 'tick': F.tick_count(),
                     'lines': len(view(fl)),
                     'colour': nbytes(lambda: show(fl)),
                     'ascii': nbytes(lambda: show(fl, ascii=True)),
                     'fill': nbytes(lambda: show(fl, fill=True)) if grid_ else None})
    return rows
"""


def secs(n: int | None) -> str:
    return "-" if n is None else f"{n * 10 / BAUD:.3f}"


def table(res: dict) -> str:
    out = ["| colony | flavour | kind | bytes, colour | s at 115200 | bytes, ascii=True |"
           " bytes, fill=True | s at 115200 |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for colony, rows in res.items():
        for r in rows:
            fill = "-" if r["fill"] is None else f"{r['fill']:,}"
            out.append(f"| {colony} (t={r['tick']}) | {r['flavour']} | {r['kind']} | "
                       f"{r['colour']:,} | {secs(r['colour'])} | {r['ascii']:,} | {fill} | "
                       f"{secs(r['fill'])} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--colonies", default=",".join(COLONIES))
    ap.add_argument("--opt", action="append", default=[], help="NAME=VALUE for every run")
    ap.add_argument("--image", type=Path, default=IMAGE)
    args = ap.parse_args()
    opts = ", ".join(args.opt)
    g = Guest(args.image, icount=True)
    res: dict = {}
    try:
        g.boot()
        out = g.paste(GUEST, timeout=120)
        if "Traceback" in out:
            print(out, file=sys.stderr)
            return 1
        for name in args.colonies.split(","):
            call = f"measure({name!r}{', ' + opts if opts else ''})"
            try:
                res[name] = g.ask(call, timeout=1800)
            except AssertionError as e:   # not a literal: what it printed ends the run
                raise SystemExit(str(e)) from None
            print(f"  {name}: {res[name]}", file=sys.stderr)
    finally:
        g.close()
    out_dir = Path("build/bench")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "inspect.json").write_text(json.dumps(res, indent=1))
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
