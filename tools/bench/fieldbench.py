#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`make bench-field`: the trace field's costs in guest TSC cycles under QEMU -icount
(deterministic: reruns give the same counts), C core vs the same operations written in
pure Python on the same MicroPython VM, plus a memory-traffic floor for one tick.
Prints a Markdown table and writes build/bench/field.json."""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.console import Console, ConsoleError
from tools.guest.guestconsole import ROOT, TEST_IMAGE, Guest

SIDE, NFL = 256, 4

# Guest side, part 1: timing helpers and the C-backed field (4 flavours of 256x256).
GUEST_SETUP = """
import time, kernel, gc, _fieldbench
from field import Field, grid
SIDE, NFL = {side}, {nfl}
def cyc(fn, *a):
    gc.collect()
    t = time.ticks_cpu()
    fn(*a)
    return time.ticks_diff(time.ticks_cpu(), t)
F = Field([grid('f%d' % i, SIDE, SIDE, E=0.1, G=0.4) for i in range(NFL)], journal=1024)
_s = [1]
def cells(n):
    out = []
    for _ in range(n):
        _s[0] = (_s[0] * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(((_s[0] >> 8) % SIDE, (_s[0] >> 16) % SIDE))
    return out
CELLS = cells({n_py})
def py_deposit(f, cs):
    dep = f.deposit
    for c in cs:
        dep(0, c, 1.0)
def py_sense(f, cs):
    sense = f.sense
    for c in cs:
        sense(0, c)
for i in range(NFL):
    for x, y in cells(500):
        F.deposit(i, (x, y), 5.0)
F.tick()
"""

# Guest side, part 2: the same field in pure Python (array('f') per flavour), same rules
# as loci/field/README.md: pending deposits, commit+cap+evaporate, 4-neighbour diffusion
# with reflecting borders, min rule, top-k, snapshot bytes and SHA-256 digest.
GUEST_PURE = """
import array, hashlib, struct
class PyGrid:
    def __init__(self, w, h, E, G, cap=1e30, mn=0.0):
        self.w, self.h, self.keep, self.G, self.cap, self.min = w, h, 1 - E, G, cap, mn
        self.v = array.array('f', bytes(4 * w * h))
        self.p = array.array('f', bytes(4 * w * h))
    def deposit(self, x, y, a):
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise IndexError('cell')
        if not (a >= 0 and a < 1e38):
            raise ValueError('amount')
        i = y * self.w + x
        self.p[i] = min(self.p[i] + a, self.cap)
    def sense(self, x, y):
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise IndexError('cell')
        return self.v[y * self.w + x]
    def tick(self):
        w, h, v, p, keep, cap = self.w, self.h, self.v, self.p, self.keep, self.cap
        n = w * h
        for i in range(n):
            s = v[i] + p[i]
            v[i] = (cap if s > cap else s) * keep
        q = self.G / 4
        selfw = [(1 - self.G) + k * q for k in range(5)]
        mn = self.min
        out = array.array('f', bytes(4 * n))
        for y in range(h):
            row = y * w
            for x in range(w):
                i = row + x
                acc = 0.0
                k = 0
                if x > 0: acc += v[i - 1]
                else: k += 1
                if x + 1 < w: acc += v[i + 1]
                else: k += 1
                if y > 0: acc += v[i - w]
                else: k += 1
                if y + 1 < h: acc += v[i + w]
                else: k += 1
                t = v[i] * selfw[k] + q * acc
                out[i] = t if t >= mn else 0.0
        self.v = out
        self.p = array.array('f', bytes(4 * n))
    def topk(self, k):
        best = []
        v = self.v
        for i in range(len(v)):
            x = v[i]
            if x > 0 and (len(best) < k or x > best[-1][0]):
                best.append((x, -i))
                best.sort(reverse=True)
                del best[k:]
        return [(-i, x) for x, i in best]
    def data(self):
        pend = [(i, a) for i, a in enumerate(self.p) if a]
        return (struct.pack('<II', self.w, self.h) + bytes(self.v)
                + struct.pack('<I', len(pend))
                + b''.join(struct.pack('<If', i, a) for i, a in pend))
class PyField:
    def __init__(self, n, side):
        self.fl = [PyGrid(side, side, 0.1, 0.4) for _ in range(n)]
        self.t = 0
    def tick(self):
        for g in self.fl:
            g.tick()
        self.t += 1
    def snapshot(self):
        body = b''.join(g.data() for g in self.fl)
        head = struct.pack('<QI', self.t, len(self.fl))
        d = hashlib.sha256(head + body).digest()
        return b'LOCIFLD\\0' + head + d + body
P = PyField(NFL, SIDE)
for g in P.fl:
    for x, y in cells(500):
        g.deposit(x, y, 5.0)
P.tick()
def pp_deposit(g, cs):
    dep = g.deposit
    for x, y in cs:
        dep(x, y, 1.0)
def pp_sense(g, cs):
    sense = g.sense
    for x, y in cs:
        sense(x, y)
"""

N_PY = 2000       # deposit / sense calls from Python (C-backed and pure)
N_C = 200000      # deposit / sense calls from C (_fieldbench)
COPY = 1 << 22    # bytes for the guest memcpy rate


def measure(con: Console) -> dict:
    def ask(expr: str, timeout: float = 600) -> object:
        return ast.literal_eval(con.exec(f"print(repr({expr}))", timeout).decode().strip())

    con.exec(GUEST_SETUP.format(side=SIDE, nfl=NFL, n_py=N_PY), timeout=600)
    r: dict = {"tsc_hz": ask("kernel.tsc_hz()")}
    r["py_deposit"] = ask("cyc(py_deposit, F, CELLS)") / N_PY
    r["py_sense"] = ask("cyc(py_sense, F, CELLS)") / N_PY
    d, s, _ = ask(f"_fieldbench.deposit_sense(F, 0, {N_C})")
    r["c_deposit"], r["c_sense"] = d / N_C, s / N_C
    r["tick"] = ask("cyc(F.tick)")
    r["topk"] = ask("cyc(F.topk, 0, 10)")
    r["snapshot"] = ask("cyc(F.snapshot)")
    r["digest"] = ask("cyc(F.digest)")
    r["snapshot_bytes"] = ask("len(F.snapshot())")
    con.exec(f"_a = bytearray({COPY}); _m = memoryview(bytearray({COPY}))\n"
             "def _cp():\n    _m[:] = _a\n")
    r["copy_cycles_per_byte"] = ask("cyc(_cp)") / COPY
    con.exec(GUEST_PURE, timeout=600)
    r["pure_deposit"] = ask("cyc(pp_deposit, P.fl[0], CELLS)") / N_PY
    r["pure_sense"] = ask("cyc(pp_sense, P.fl[0], CELLS)") / N_PY
    r["pure_tick"] = ask("cyc(P.tick)", timeout=3600)
    r["pure_topk"] = ask("cyc(P.fl[0].topk, 10)", timeout=3600)
    r["pure_snapshot_digest"] = ask("cyc(P.snapshot)", timeout=3600)
    return r


def host_copy_bandwidth(n: int = 1 << 28, reps: int = 5) -> float:
    """Bytes per second of a large memcpy on this host (bytearray slice copy)."""
    src, dst = bytearray(n), bytearray(n)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        dst[:] = src
        best = min(best, time.perf_counter() - t)
    return n / best


def table(r: dict, host_bw: float) -> str:
    hz = r["tsc_hz"]
    cells = SIDE * SIDE * NFL
    # Bytes the C tick touches per cell (loci/field/field_grid_tick.c, one walk): it reads
    # the value and the pending amount of the row below, writes the committed value back
    # and the result into the pending buffer, and zeroes the value of the row above
    # (neighbours come from cache): 5 float streams = 20 B.
    touched = 20 * cells
    rows = [
        ("deposit, per call", r["py_deposit"], r["c_deposit"], r["pure_deposit"]),
        ("sense, per call", r["py_sense"], r["c_sense"], r["pure_sense"]),
        (f"tick, {SIDE}x{SIDE} x {NFL} flavours", r["tick"], None, r["pure_tick"]),
        ("top-10 of one 256x256 flavour", r["topk"], None, r["pure_topk"]),
        (f"snapshot ({r['snapshot_bytes']} B) + digest", r["snapshot"] + r["digest"], None,
         r["pure_snapshot_digest"]),
    ]
    out = ["| operation | C core, called from Python | C core, loop in C | pure Python "
           "(same VM) | pure / C |", "|---|---:|---:|---:|---:|"]
    for name, c_py, c_c, pure in rows:
        base = c_c if c_c is not None else c_py
        out.append(f"| {name} | {c_py:,.0f} | {'' if c_c is None else f'{c_c:,.0f}'} | "
                   f"{pure:,.0f} | {pure / base:,.0f}x |")
    floor_s = touched / host_bw
    out.append(f"| floor: the tick's {touched / 2**20:.0f} MiB of memory traffic at this "
               f"host's memcpy rate ({host_bw / 1e9:.1f} GB/s) = {floor_s * 1e6:,.0f} us | "
               f"{floor_s * hz:,.0f} | | | |")
    out.append("")
    out.append(f"Cycles are guest TSC cycles (`kernel.tsc_hz()` = {hz:,}). In guest time "
               f"that is {hz / r['py_deposit']:,.0f} deposits/s from Python, "
               f"{hz / r['c_deposit']:,.0f}/s from C; {hz / r['py_sense']:,.0f} senses/s from "
               f"Python, {hz / r['c_sense']:,.0f}/s from C; {hz / r['tick']:,.1f} ticks/s. "
               f"The floor row converts the host time to cycles at that rate. For reference, "
               f"the guest's own memcpy (memoryview slice copy of {COPY >> 20} MiB) costs "
               f"{r['copy_cycles_per_byte']:.1f} cycles/B.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-icount", action="store_true", help="faster, not deterministic")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    try:
        with Guest(TEST_IMAGE, icount=not args.no_icount) as vm:
            vm.boot(timeout=600)
            vm.raw_enter()
            r = measure(vm)
    except ConsoleError as e:
        print(f"fieldbench: {e}", file=sys.stderr)
        return 1
    r["icount"] = not args.no_icount
    r["host_copy_bytes_per_s"] = host_copy_bandwidth()
    out = ROOT / "build" / "bench" / "field.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(r, indent=2) + "\n")
    print(table(r, r["host_copy_bytes_per_s"]))
    print(f"\n(fieldbench: {time.monotonic() - t0:.0f} s wall; raw numbers in {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
