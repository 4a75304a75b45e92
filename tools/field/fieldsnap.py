# SPDX-License-Identifier: MIT
"""Host-side reader of trace-field snapshots (loci/field/FORMAT.md, version 1), written
from the format document, not from the C: framing, CRC-32, every rule, then the digest.

    snap = fieldsnap.parse(data)        # SnapshotError(code, message) if anything is off
    snap.flavours["food"].values        # W*H floats, row-major; .at(x, y)
    data = fieldsnap.snapshot(con, "lo.F")  # pulled over a tools.guest console, checked
"""

from __future__ import annotations

import hashlib
import math
import struct
import zlib
from array import array
from dataclasses import dataclass, field

MAGIC = b"LOCIFLD\0"
VERSION = 1
HEADER = 72
DESC = 44
ENTRY = 24
TRAILER = 4
MAX_FLAVOURS = 16
NAME_MAX = 15
KEY_MAX = 15
GRID_MAX_SIDE = 4096
KEYED_MAX_CAP = 65536
CAP_MAX = struct.unpack("<f", struct.pack("<f", 1e30))[0]   # as float32, like the C
GRID, KEYED = 1, 2

_HDR = struct.Struct("<8sHHIQQII32s")
_DESC = struct.Struct("<BBH16sIIffff")
_U32 = struct.Struct("<I")
_PAIR_F = struct.Struct("<If")
_PAIR_U = struct.Struct("<II")
_ENTRY = struct.Struct("<B15sff")


class SnapshotError(ValueError):
    """A snapshot the reader refuses. `code` is the C core's name for the same failure
    (truncated, magic, version, checksum, corrupt, digest), the message says what."""

    def __init__(self, code: str, message: str):
        super().__init__(f"snapshot {code}: {message}")
        self.code = code


@dataclass
class Flavour:
    kind: str                    # "grid" or "keyed"
    name: str
    w: int                       # grid width, or keyed capacity
    h: int                       # grid height, 0 for keyed
    E: float
    G: float
    cap: float
    min: float
    values: array = field(default_factory=lambda: array("f"))   # grid: W*H, row-major
    pending: dict = field(default_factory=dict)   # cell index or key -> amount
    last: dict = field(default_factory=dict)      # cell index or key -> depositor id
    entries: dict = field(default_factory=dict)   # keyed: key bytes -> value, key order

    def at(self, x: int, y: int) -> float:
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise IndexError(f"cell ({x}, {y}) outside {self.name!r} ({self.w}x{self.h})")
        return self.values[y * self.w + x]

    def total(self) -> float:
        vals = self.values if self.kind == "grid" else self.entries.values()
        return math.fsum(vals)


@dataclass
class Snapshot:
    version: int
    tick: int
    journal_seq: int
    digest: bytes
    size: int
    flavours: dict[str, Flavour]   # in flavour index order

    def grids(self) -> list[Flavour]:
        return [f for f in self.flavours.values() if f.kind == "grid"]


class _Reader:
    def __init__(self, data: bytes, end: int):
        self.data, self.pos, self.end = data, 0, end

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > self.end:
            raise SnapshotError("corrupt", f"{what} runs past the end of the sections "
                                           f"(offset {self.pos}, needs {n} bytes)")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u32(self, what: str) -> int:
        return _U32.unpack(self.take(4, what))[0]


def _corrupt(msg: str):
    raise SnapshotError("corrupt", msg)


def _check_amount(v: float, cap: float, what: str, positive: bool = False):
    if not math.isfinite(v) or v < 0 or v > cap or (positive and v == 0):
        _corrupt(f"{what} = {v!r} is not in {'(0' if positive else '[0'}, cap {cap}]")


def _check_params(name: str, kind: int, E: float, G: float, cap: float, mn: float):
    for label, v in (("E", E), ("G", G)):
        if not (0.0 <= v <= 1.0):
            _corrupt(f"flavour {name!r}: {label} = {v!r} outside 0..1")
    if not (0.0 < cap <= CAP_MAX):
        _corrupt(f"flavour {name!r}: cap = {cap!r} outside (0, 1e30]")
    if not (0.0 <= mn <= cap):
        _corrupt(f"flavour {name!r}: min = {mn!r} outside [0, cap]")
    if kind == KEYED and G != 0.0:
        _corrupt(f"keyed flavour {name!r} has G = {G!r} (must be 0)")


def _key_order(key: bytes):
    return (key.ljust(KEY_MAX, b"\0"), len(key))


def _strict_pairs(r: _Reader, count: int, limit: int, st: struct.Struct, what: str):
    raw = r.take(count * st.size, what)
    prev = -1
    out = []
    for idx, val in st.iter_unpack(raw):
        if idx <= prev or idx >= limit:
            _corrupt(f"{what}: index {idx} not strictly increasing below {limit}")
        prev = idx
        out.append((idx, val))
    return out


def _grid(r: _Reader, fl: Flavour, digest) -> None:
    n = fl.w * fl.h
    raw = r.take(4 * n, f"{fl.name!r} values")
    digest.update(raw)
    vals = array("f")
    vals.frombytes(raw)
    if vals.itemsize != 4:
        raise RuntimeError("this host's array('f') is not float32")
    bad = next((i for i, v in enumerate(vals) if not (math.isfinite(v) and v >= 0)), None)
    if bad is not None:
        _corrupt(f"{fl.name!r} cell {bad} holds {vals[bad]!r} (must be finite and >= 0)")
    fl.values = vals
    start = r.pos
    p = r.u32(f"{fl.name!r} pending count")
    if p > n:
        _corrupt(f"{fl.name!r}: {p} pending deposits for {n} cells")
    for idx, amt in _strict_pairs(r, p, n, _PAIR_F, f"{fl.name!r} pending"):
        _check_amount(amt, fl.cap, f"{fl.name!r} pending[{idx}]", positive=True)
        fl.pending[idx] = amt
    digest.update(r.data[start:r.pos])
    q = r.u32(f"{fl.name!r} provenance count")
    if q > n:
        _corrupt(f"{fl.name!r}: {q} provenance pairs for {n} cells")
    for idx, who in _strict_pairs(r, q, n, _PAIR_U, f"{fl.name!r} provenance"):
        if who == 0:
            _corrupt(f"{fl.name!r} cell {idx}: last depositor 0")
        fl.last[idx] = who


def _keyed(r: _Reader, fl: Flavour, digest) -> None:
    start = r.pos
    c = r.u32(f"{fl.name!r} entry count")
    if c > fl.w:
        _corrupt(f"{fl.name!r}: {c} entries, capacity {fl.w}")
    keys = []
    prev = None
    for klen, kbytes, v, p in _ENTRY.iter_unpack(r.take(c * ENTRY, f"{fl.name!r} entries")):
        if not 1 <= klen <= KEY_MAX or any(kbytes[klen:]):
            _corrupt(f"{fl.name!r}: key length {klen} or padding not zero")
        key = kbytes[:klen]
        if prev is not None and _key_order(key) <= _key_order(prev):
            _corrupt(f"{fl.name!r}: key {key!r} out of order after {prev!r}")
        _check_amount(v, fl.cap, f"{fl.name!r}[{key!r}] value")
        _check_amount(p, fl.cap, f"{fl.name!r}[{key!r}] pending")
        fl.entries[key] = v
        if p:
            fl.pending[key] = p
        keys.append(key)
        prev = key
    digest.update(r.data[start:r.pos])
    q = r.u32(f"{fl.name!r} provenance count")
    for idx, who in _strict_pairs(r, q, c, _PAIR_U, f"{fl.name!r} provenance"):
        if who == 0:
            _corrupt(f"{fl.name!r} entry {idx}: last depositor 0")
        fl.last[keys[idx]] = who


def parse(data: bytes, verify_digest: bool = True) -> Snapshot:
    """Validates `data` in FORMAT.md's order and returns the decoded Snapshot."""
    data = bytes(data)
    if data[:len(MAGIC)] != MAGIC[:len(data)]:
        raise SnapshotError("magic", "not a field snapshot (no LOCIFLD magic)")
    if len(data) < 10:
        raise SnapshotError("truncated", f"{len(data)} bytes, too short for a version")
    version = struct.unpack_from("<H", data, 8)[0]
    if version != VERSION:
        raise SnapshotError("version", f"format version {version}; this reader knows "
                                       f"version {VERSION} only")
    if len(data) < HEADER:
        raise SnapshotError("truncated", f"{len(data)} bytes, the header needs {HEADER}")
    _, _, hsize, nfl, tick, seq, size, flags, dig = _HDR.unpack_from(data)
    if len(data) < size:
        raise SnapshotError("truncated", f"{len(data)} bytes of a {size}-byte snapshot")
    if hsize != HEADER or size < HEADER + TRAILER or len(data) > size:
        raise SnapshotError("corrupt", f"header size {hsize}, snapshot size {size}, "
                                       f"{len(data)} bytes given")
    crc = _U32.unpack_from(data, size - TRAILER)[0]
    if zlib.crc32(data[:size - TRAILER]) != crc:
        raise SnapshotError("checksum", "CRC-32 mismatch: the bytes were damaged")
    if flags != 0 or nfl > MAX_FLAVOURS:
        _corrupt(f"flags {flags:#x}, {nfl} flavours (at most {MAX_FLAVOURS})")
    digest = hashlib.sha256(struct.pack("<QI", tick, nfl))
    r = _Reader(data, size - TRAILER)
    r.pos = HEADER
    flavours: dict[str, Flavour] = {}
    for _ in range(nfl):
        raw = r.take(DESC, "flavour descriptor")
        digest.update(raw)
        kind, nlen, res, name16, w, h, E, G, cap, mn = _DESC.unpack(raw)
        if kind not in (GRID, KEYED) or not 1 <= nlen <= NAME_MAX or res \
                or any(name16[nlen:]) or 0 in name16[:nlen]:
            _corrupt(f"flavour descriptor at {r.pos - DESC}: kind {kind}, name length "
                     f"{nlen}")
        name = name16[:nlen].decode("utf-8", "replace")
        if name in flavours:
            _corrupt(f"two flavours named {name!r}")
        _check_params(name, kind, E, G, cap, mn)
        if kind == GRID and not (1 <= w <= GRID_MAX_SIDE and 1 <= h <= GRID_MAX_SIDE):
            _corrupt(f"grid {name!r} is {w}x{h} (sides 1..{GRID_MAX_SIDE})")
        if kind == KEYED and not (1 <= w <= KEYED_MAX_CAP and h == 0):
            _corrupt(f"keyed {name!r}: capacity {w}, h {h}")
        fl = Flavour("grid" if kind == GRID else "keyed", name, w, h, E, G, cap, mn)
        (_grid if kind == GRID else _keyed)(r, fl, digest)
        flavours[name] = fl
    if r.pos != r.end:
        _corrupt(f"{r.end - r.pos} stray bytes between the last section and the trailer")
    if verify_digest and digest.digest() != dig:
        raise SnapshotError("digest", "content digest does not match the content")
    return Snapshot(version, tick, seq, dig, size, flavours)


def pull(con, expr: str = "lo.F", mode: str = "binary", timeout: float = 120.0) -> bytes:
    """The snapshot bytes of the field `expr` evaluates to in the guest, pulled over
    `con` (a tools.guest console, already in the raw REPL: Console.raw_bytes says how) and
    checked with parse(): a line that damaged them raises SnapshotError."""
    data = con.raw_bytes(f"({expr}).snapshot()", mode, timeout)
    parse(data)      # CRC, rules and digest
    return data


def snapshot(con, expr: str = "lo.F", mode: str = "binary", timeout: float = 120.0) -> bytes:
    """As pull(), entering the raw REPL first and leaving it afterwards."""
    con.raw_enter()
    try:
        return pull(con, expr, mode, timeout)
    finally:
        con.raw_exit()


def replay_main(argv: list[str]) -> int:
    """fieldsnap.py replay START.snap JOURNAL [END.snap]"""
    import argparse
    import sys

    from tools.field import fieldjournal

    ap = argparse.ArgumentParser(
        prog="fieldsnap.py replay",
        description="Replay a journal export after a snapshot on the host (the field's C "
                    "core through cffi) and check the digest the guest recorded, and the "
                    "end snapshot's if one is given.")
    ap.add_argument("snapshot", help="the snapshot the journal starts from")
    ap.add_argument("journal", help="a journal export taken after that snapshot")
    ap.add_argument("end", nargs="?", help="a snapshot taken when the journal was exported")
    args = ap.parse_args(argv)
    try:
        with open(args.snapshot, "rb") as fh:
            snap = fh.read()
        with open(args.journal, "rb") as fh:
            jrn = fh.read()
        j = fieldjournal.parse(jrn)
        start = parse(snap)
        digest = fieldjournal.replay(snap, jrn)
        end = None
        if args.end:
            with open(args.end, "rb") as fh:
                end = parse(fh.read())
    except (OSError, ValueError) as e:
        print(f"replay: {e}", file=sys.stderr)
        return 1
    n = j.next_seq - start.journal_seq
    ticks = sum(1 for r in j.records if r.seq >= start.journal_seq and r.kind == "tick")
    print(f"replayed {n} records ({ticks} ticks) from tick {start.tick} to tick "
          f"{j.end_tick}: digest {digest.hex()[:16]} matches the journal's")
    if end is not None:
        if end.digest != digest or end.tick != j.end_tick:
            print(f"replay: {args.end} is tick {end.tick}, digest {end.digest.hex()[:16]}: "
                  "not the state the replay reached", file=sys.stderr)
            return 1
        print(f"and {args.end} (tick {end.tick}) has the same digest")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["replay"]:
        return replay_main(argv[1:])
    ap = argparse.ArgumentParser(
        description="Check and summarise field snapshot files; `replay SNAP JOURNAL "
                    "[END]` replays a journal export on the host and checks its digest.")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    status = 0
    for path in args.files:
        try:
            with open(path, "rb") as fh:
                s = parse(fh.read())
        except (OSError, SnapshotError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            status = 1
            continue
        print(f"{path}: tick {s.tick}, journal seq {s.journal_seq}, {s.size} B, "
              f"digest {s.digest.hex()[:16]}")
        for f in s.flavours.values():
            shape = f"{f.w}x{f.h}" if f.kind == "grid" else f"{len(f.entries)}/{f.w} keys"
            print(f"  {f.name:<15} {f.kind:<5} {shape:<12} mass {f.total():.6g}  "
                  f"E={f.E:g} G={f.G:g}")
    return status


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `tools` importable
    raise SystemExit(main())
