#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Screen console costs under QEMU -icount: guest cycles to draw the whole screen and to
draw a scroll by one line, at 1280x800 and 3840x2160 (or the sizes given), measured by
the kernel itself (`kernel.console_bench()`). One boot per size, the mode set by the
loader option loader_screen=WxH. Writes build/bench/screen.json and prints a table."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import ROOT, Guest

BUILD = ROOT / "build"
SIZES = ["1280x800", "3840x2160"]


def image_for(size: str, tmp: Path) -> Path:
    opts = tmp / "OPTIONS.TXT"
    opts.write_text(f"loader_screen={size}\n")
    image = tmp / f"screen-{size}.img"
    subprocess.run([sys.executable, str(ROOT / "tools/build/mkimage.py"),
                    "--loader", str(BUILD / "boot/BOOTX64.EFI"),
                    "--kernel", str(BUILD / "kernel.elf"), "--options", str(opts),
                    "-o", str(image)], check=True, capture_output=True)
    return image


def measure(size: str, tmp: Path) -> dict:
    w, h = size.split("x")
    g = Guest(image_for(size, tmp), icount=True,
              launch=["--vga", f"VGA,xres={w},yres={h},vgamem_mb=64"])
    try:
        g.boot()
        out = g.run("import kernel; print(kernel.console_size(), kernel.console_bench())")
    finally:
        g.close()
    grid, bench = out.strip().split(") (")
    cols, rows = (int(x) for x in grid.strip("(").split(","))
    full, scroll = (int(x) for x in bench.strip(")").split(","))
    return {"size": size, "cols": cols, "rows": rows, "full_cycles": full,
            "scroll_cycles": scroll}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", default=SIZES, help="WIDTHxHEIGHT (default: "
                    + " ".join(SIZES) + ")")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lociOS-bench-screen-") as tmp:
        for size in args.sizes:
            r = measure(size, Path(tmp))
            rows.append(r)
            print(f"{r['size']:>10}  {r['cols']}x{r['rows']} cells  full screen "
                  f"{r['full_cycles']:,} cycles  scroll one line {r['scroll_cycles']:,} cycles",
                  flush=True)
    out = BUILD / "bench" / "screen.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
