#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pictures of trace-field snapshots (FORMAT.md files, read with fieldsnap.py): one
PNG heat map per flavour, and an animated GIF per flavour over a sequence of snapshots.

  fieldpics.py render SNAP... -o DIR        DIR/<snap stem>-<flavour>.png
  fieldpics.py animate SNAP... -o DIR       DIR/<flavour>.gif, one frame per snapshot

The colour scale is linear from 0 (black, the scale's minimum colour) to the flavour's
maximum (white; for an animation the maximum over all frames, so frames compare), through
dark red, red, orange and yellow, each step brighter than the last. Grids: cell (x, y) is
the square of side `scale` at (x*scale, y*scale), y downwards; a legend band below the
cells shows the scale, its ends, the tick and the mass. Keyed flavours: one bar per key.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.field import fieldsnap

LEVELS = 250                 # palette entries 0..249: the colour scale
BG, FG, DIM = 250, 251, 252  # background, text, frame
LEGEND_H = 34
MIN_WIDTH = 256
TARGET = 512                 # a grid is scaled up (integer factor) towards this many pixels
# Scale stops (position, RGB): every step raises one channel, so brightness only grows.
STOPS = ((0.0, (0, 0, 0)), (0.25, (128, 0, 0)), (0.45, (255, 0, 0)), (0.7, (255, 160, 0)),
         (0.85, (255, 255, 0)), (1.0, (255, 255, 255)))


def ramp(t: float) -> tuple[int, int, int]:
    t = min(1.0, max(0.0, t))
    for (p0, c0), (p1, c1) in zip(STOPS, STOPS[1:], strict=False):
        if t <= p1:
            u = (t - p0) / (p1 - p0)
            return tuple(round(a + (b - a) * u) for a, b in zip(c0, c1, strict=True))
    return STOPS[-1][1]


def palette() -> list[int]:
    pal: list[int] = []
    for i in range(LEVELS):
        pal += ramp(i / (LEVELS - 1))
    pal += (40, 40, 48) + (235, 235, 235) + (110, 110, 120)
    return pal + [0] * (768 - len(pal))


PALETTE = palette()


def level(v: float, vmax: float) -> int:
    """Palette index of value v on the scale 0..vmax (0 for v <= 0 or an empty scale)."""
    if vmax <= 0 or v <= 0:
        return 0
    return min(LEVELS - 1, int(v / vmax * (LEVELS - 1) + 0.5))


def colour(v: float, vmax: float) -> tuple[int, int, int]:
    return tuple(PALETTE[3 * level(v, vmax):3 * level(v, vmax) + 3])


@dataclass
class Layout:
    scale: int           # pixels per cell side
    width: int
    height: int

    def centre(self, x: int, y: int) -> tuple[int, int]:
        return x * self.scale + self.scale // 2, y * self.scale + self.scale // 2


def grid_layout(fl: fieldsnap.Flavour) -> Layout:
    s = max(1, TARGET // max(fl.w, fl.h))
    return Layout(s, max(fl.w * s, MIN_WIDTH), fl.h * s + LEGEND_H)


def _fmt(v: float) -> str:
    return "0" if v == 0 else f"{v:.4g}"


def _legend(img: Image.Image, top: int, vmax: float, text: str) -> None:
    d = ImageDraw.Draw(img)
    w = img.width
    bar_w = w - 16
    for i in range(bar_w):
        d.line([(8 + i, top + 4), (8 + i, top + 11)], fill=i * (LEVELS - 1) // (bar_w - 1))
    d.rectangle([7, top + 3, 8 + bar_w, top + 12], outline=DIM)
    d.text((8, top + 15), "0", fill=FG)
    hi = _fmt(vmax)
    d.text((w - 8 - 6 * len(hi), top + 15), hi, fill=FG)
    d.text((8 + 6 * 3, top + 15), text[: max(0, (w - 40) // 6 - len(hi))], fill=FG)


def render_grid(fl: fieldsnap.Flavour, tick: int, vmax: float | None = None) -> Image.Image:
    """The heat map of one grid flavour, palette mode ("P"), with its legend."""
    vmax = max(fl.values, default=0.0) if vmax is None else vmax
    lay = grid_layout(fl)
    cells = Image.frombytes("P", (fl.w, fl.h), bytes(level(v, vmax) for v in fl.values))
    img = Image.new("P", (lay.width, lay.height), BG)
    img.putpalette(PALETTE)
    img.paste(cells.resize((fl.w * lay.scale, fl.h * lay.scale), Image.Resampling.NEAREST),
              (0, 0))
    _legend(img, fl.h * lay.scale, vmax,
            f"{fl.name} t={tick} mass {_fmt(fl.total())}")
    return img


def render_keyed(fl: fieldsnap.Flavour, tick: int, vmax: float | None = None,
                 rows: int = 16) -> Image.Image:
    """The largest keys of a keyed flavour as horizontal bars, largest first."""
    items = sorted(fl.entries.items(), key=lambda kv: (-kv[1], kv[0]))[:rows]
    vmax = max((v for _, v in items), default=0.0) if vmax is None else vmax
    row_h, label_w = 14, 6 * 16
    w = MIN_WIDTH * 2
    img = Image.new("P", (w, max(1, len(items)) * row_h + 8 + LEGEND_H), BG)
    img.putpalette(PALETTE)
    d = ImageDraw.Draw(img)
    for i, (key, v) in enumerate(items):
        y = 4 + i * row_h
        d.text((4, y), key.decode("utf-8", "replace"), fill=FG)
        length = 0 if vmax <= 0 else round(v / vmax * (w - label_w - 70))
        if length > 0:
            d.rectangle([label_w, y + 1, label_w + length - 1, y + row_h - 3],
                        fill=level(v, vmax))
        d.text((label_w + length + 4, y), _fmt(v), fill=FG)
    _legend(img, img.height - LEGEND_H, vmax, f"{fl.name} t={tick} {len(fl.entries)} keys")
    return img


def render(fl: fieldsnap.Flavour, tick: int, vmax: float | None = None) -> Image.Image:
    return (render_grid if fl.kind == "grid" else render_keyed)(fl, tick, vmax)


def flavour_max(fl: fieldsnap.Flavour) -> float:
    return max(fl.values if fl.kind == "grid" else fl.entries.values(), default=0.0)


def write_pngs(snap: fieldsnap.Snapshot, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fl in snap.flavours.values():
        p = out / f"{stem}-{fl.name}.png"
        render(fl, snap.tick).save(p)
        paths.append(p)
    return paths


def write_animation(snaps: list[fieldsnap.Snapshot], name: str, path: Path,
                    frame_ms: int = 250) -> Path:
    """An animated GIF of flavour `name` over the snapshots, on one common scale."""
    fls = [s.flavours[name] for s in snaps]
    vmax = max(flavour_max(f) for f in fls)
    frames = [render(f, s.tick, vmax) for f, s in zip(fls, snaps, strict=True)]
    size = (max(f.width for f in frames), max(f.height for f in frames))
    frames = [f if f.size == size else _pad(f, size) for f in frames]
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=frame_ms, loop=0,
                   optimize=False)
    return path


def _pad(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    out = Image.new("P", size, BG)
    out.putpalette(PALETTE)
    out.paste(img, (0, 0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("render", "animate"))
    ap.add_argument("snaps", nargs="+", type=Path)
    ap.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    args = ap.parse_args(argv)
    try:
        snaps = [fieldsnap.parse(p.read_bytes()) for p in args.snaps]
    except (OSError, fieldsnap.SnapshotError) as e:
        print(f"fieldpics: {e}", file=sys.stderr)
        return 1
    if args.what == "render":
        for p, s in zip(args.snaps, snaps, strict=True):
            for q in write_pngs(s, args.out, p.stem):
                print(q)
    else:
        for name in snaps[0].flavours:
            print(write_animation(snaps, name, args.out / f"{name}.gif"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
