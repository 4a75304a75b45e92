#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make field-png`: boots LociOS in QEMU, runs a seeded ants-like demo on the trace field
in the guest, pulls a binary snapshot every few ticks over the serial line (raw REPL,
tools/guest/console.py) and writes PNG heat maps and animated GIFs (fieldpics.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.field import fieldpics, fieldsnap
from tools.guest.console import Console, ConsoleError
from tools.guest.guestconsole import ROOT, Guest

# Runs in the guest. Two food sources and a nest give off diffusing scents; ants look
# for food up the 'food' gradient, then carry it home up the 'home' gradient, laying
# 'trail' as they go. Every random choice comes from one LCG, so a seed fixes the run.
GUEST_DEMO = """
from field import Field, grid, keyed
W, H = {w}, {h}
F = Field([grid('food', W, H, E=0.002, G=0.9, min=1e-6),
           grid('home', W, H, E=0.002, G=0.9, min=1e-6),
           grid('trail', W, H, E=0.03, G=0.05, min=1e-3),
           keyed('visits', 16, E=0.01, min=0.01)], journal=256)
SOURCES = ((W * 3 // 5, H // 5), (W * 3 // 5, H * 4 // 5))
NEST = (W // 5, H // 2)
_s = [{seed}]
def rnd(n):
    _s[0] = (_s[0] * 1103515245 + 12345) & 0x7FFFFFFF
    return (_s[0] >> 8) % n
ANTS = [[NEST[0], NEST[1], 0, 100 + i] for i in range({ants})]
def step_ant(a):
    x, y, carrying, who = a
    dx, dy = F.gradient('home' if carrying else 'food', x, y)
    if (dx, dy) == (0, 0) or rnd(10) < 3:
        dx, dy = rnd(3) - 1, rnd(3) - 1
    x, y = min(W - 1, max(0, x + dx)), min(H - 1, max(0, y + dy))
    if carrying:
        F.deposit('trail', (x, y), 1.0, who)
        if abs(x - NEST[0]) + abs(y - NEST[1]) <= 2:
            carrying = 0
    else:
        for i, (sx, sy) in enumerate(SOURCES):
            if abs(x - sx) + abs(y - sy) <= 2:
                carrying = 1
                F.deposit('visits', 'source%d' % i, 1.0, who)
    a[0], a[1], a[2] = x, y, carrying
def run(n):
    for _ in range(n):
        for sx, sy in SOURCES:
            F.deposit('food', (sx, sy), 50.0, 2)
        F.deposit('home', NEST, 50.0, 3)
        for a in ANTS:
            step_ant(a)
        F.tick()
    return F.tick_count()
"""


def run_demo(con: Console, frames: int, every: int, w: int = 80, h: int = 60,
             ants: int = 40, seed: int = 1) -> list[bytes]:
    """Runs the demo in a booted guest (friendly prompt); returns the snapshots."""
    con.raw_enter()
    try:
        con.exec(GUEST_DEMO.format(w=w, h=h, ants=ants, seed=seed))
        snaps = []
        for _ in range(frames):
            con.exec(f"run({every})", timeout=300)
            snaps.append(fieldsnap.pull(con, "F"))
        return snaps
    finally:
        con.raw_exit()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "build" / "field")
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--every", type=int, default=25, help="ticks between snapshots")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    try:
        with Guest() as vm:
            vm.boot(timeout=120)
            raw = run_demo(vm, args.frames, args.every, seed=args.seed)
    except (ConsoleError, fieldsnap.SnapshotError) as e:
        print(f"fielddemo: {e}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    snaps = [fieldsnap.parse(d) for d in raw]
    for d, s in zip(raw, snaps, strict=True):
        (args.out / f"t{s.tick:05d}.snap").write_bytes(d)
    written = fieldpics.write_pngs(snaps[-1], args.out, f"t{snaps[-1].tick:05d}")
    written += [fieldpics.write_animation(snaps, name, args.out / f"{name}.gif")
                for name in snaps[-1].flavours]
    for p in written:
        print(p)
    print(f"fielddemo: {len(snaps)} snapshots (ticks {snaps[0].tick}..{snaps[-1].tick}, "
          f"{len(raw[-1])} B each) in {time.monotonic() - t0:.1f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
