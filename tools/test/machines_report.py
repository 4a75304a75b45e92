#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the machine matrix's results (build/machines/report.json, written by
tests/qemu/test_machines.py) into a Markdown table beside it, and prints it.

    tools/test/machines_report.py build/machines/report.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = [("machine", "name"), ("QEMU arguments", "launch"), ("RAM", "mem"),
           ("OPTIONS.TXT", "options"), ("boot", "ok"), ("cycles to prompt", "boot_cycles"),
           ("TSC reference", "tsc"), ("LAPIC", "lapic"), ("placed at", "placed"),
           ("result", "result")]


def table(rows: dict[str, dict]) -> str:
    lines = ["| " + " | ".join(c for c, _ in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for name in sorted(rows):
        r = dict(rows[name], name=name)
        cells = []
        for _, key in COLUMNS:
            v = r.get(key, "")
            if key == "ok":
                v = "ok" if v else "FAILED"
            elif key == "boot_cycles" and v:
                v = f"{v:,}"
            cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(argv[0])
    if not src.exists():
        print(f"machines_report.py: {src} does not exist: no row of the matrix ran",
              file=sys.stderr)
        return 1
    md = table(json.loads(src.read_text()))
    src.with_suffix(".md").write_text(md)
    print(md, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
