#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the capability audit log a mesh exported to /data, on the host.

A mesh whose log rolls over writes each export to /data/audit/RUN/NNNNNN.audit
(loci/python/audit_store.py). Laid end to end in name order the files of a run are one
SHA-256 hash chain (loci/cap/README.md, "Audit log"): head = SHA-256(head || record),
from 32 zero bytes at record 0, and every export after the first opens with a
CHECKPOINT carrying the head over everything before it. This reads the records with its
own parser of the documented layout and recomputes the chain.

    tools/auditlog.py verify IMAGE [RUN] [--head HEX]   a run (default: every run) on an
                                                        image's /data
    tools/auditlog.py verify FILE... [--head HEX]       exported files, in the order given
    tools/auditlog.py show IMAGE RUN [-n N]  the last N records of a run
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REC = 88
HASH = 32
KINDS = {1: "GRANT", 2: "DERIVE", 3: "REFUSED", 4: "REVOKE", 5: "EXPIRE", 6: "RETIRE",
         7: "CHECKPOINT"}
CHECKPOINT = 7
_LAYOUT = struct.Struct("<QQBBHIIIIIIIIf32s")
assert _LAYOUT.size == REC


@dataclass(frozen=True)
class Record:
    seq: int
    tick: int
    kind: int
    version: int
    reason: int
    actor: int
    owner: int
    slot: int
    gen: int
    parent: int
    parent_gen: int
    rights: int
    aux: int
    amount: float
    data: bytes

    @property
    def kind_name(self) -> str:
        return KINDS.get(self.kind, f"kind{self.kind}")


def parse(buf: bytes, where: str = "export") -> list[Record]:
    """The records of one export; ValueError naming the first thing that is wrong."""
    if len(buf) % REC:
        raise ValueError(f"{where}: {len(buf)} bytes is not a whole number of "
                         f"{REC}-byte records")
    out = []
    for i in range(0, len(buf), REC):
        r = Record(*_LAYOUT.unpack_from(buf, i))
        if r.kind not in KINDS or r.version != 1:
            raise ValueError(f"{where}: record {i // REC} (seq {r.seq}): kind {r.kind}, "
                             f"layout version {r.version} are not known")
        if out and r.seq != out[-1].seq + 1:
            raise ValueError(f"{where}: record {i // REC}: seq {r.seq} follows "
                             f"{out[-1].seq}")
        out.append(r)
    return out


@dataclass
class Chain:
    records: int = 0
    first_seq: int | None = None
    next_seq: int = 0
    head: bytes = bytes(HASH)
    files: int = 0


def extend(chain: Chain, buf: bytes, where: str) -> Chain:
    """Append one export to the chain so far; ValueError where it breaks."""
    recs = parse(buf, where)
    if not recs:
        raise ValueError(f"{where}: empty")
    first = recs[0]
    if chain.files == 0:
        if first.seq == 0:
            head = bytes(HASH)
        elif first.kind == CHECKPOINT:
            head = first.data   # a run seen from its middle: trust its first checkpoint
        else:
            raise ValueError(f"{where}: starts at seq {first.seq} without a CHECKPOINT")
    else:
        if first.seq != chain.next_seq:
            raise ValueError(f"{where}: starts at seq {first.seq}, the chain is at "
                             f"{chain.next_seq} (a file missing?)")
        if first.kind != CHECKPOINT or first.data != chain.head:
            raise ValueError(f"{where}: its CHECKPOINT does not carry the head of the "
                             "files before it: the chain is broken there")
        head = chain.head
    # From the carried head, every record is chained in, the opening CHECKPOINT too
    # (the table chained it when the export before this one left it behind).
    raw = memoryview(buf)
    for i in range(len(recs)):
        head = hashlib.sha256(head + bytes(raw[i * REC:(i + 1) * REC])).digest()
    if chain.first_seq is None:
        chain.first_seq = first.seq
    chain.records += len(recs)
    chain.next_seq = recs[-1].seq + 1
    chain.head = head
    chain.files += 1
    return chain


def verify(exports: Iterable[tuple[str, bytes]], head: bytes | None = None) -> Chain:
    """The chain over the exports. Each file's link to the one before is checked; the
    last file's records are covered only by `head` (the mesh's own: the CHECKPOINT its
    live log opens with, which `lo.audit()` prints), since nothing after them says
    what they hashed to."""
    chain = Chain()
    for where, buf in exports:
        extend(chain, buf, where)
    if chain.files == 0:
        raise ValueError("no exported audit files")
    if head is not None and chain.head != head:
        raise ValueError(f"the chain ends at head {chain.head.hex()}, not {head.hex()}: "
                         "a record of the last file changed, or a file is missing at the end")
    return chain


def _image_runs(image: str) -> tuple[object, dict[str, list[str]]]:
    from tools import datafs

    fd = os.open(image, os.O_RDONLY)
    fs = datafs.open_fs(fd, datafs.find_data(fd))
    runs: dict[str, list[str]] = {}
    try:
        names = fs.listdir("/audit")
    except Exception:  # noqa: BLE001 - littlefs raises its own error for a missing dir
        names = []
    for run in sorted(names):
        files = sorted(f for f in fs.listdir(f"/audit/{run}") if f.endswith(".audit"))
        if files:
            runs[run] = [f"/audit/{run}/{f}" for f in files]
    return fs, runs


def _read(fs, path: str) -> bytes:
    with fs.open(path, "rb") as f:
        return f.read()


def _ends(head: bytes | None) -> str:
    return " (the head given)" if head else " (the last file is checked only with --head)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="recompute the hash chain")
    v.add_argument("paths", nargs="+", help="an image (and a run), or exported files")
    v.add_argument("--head", help="the head the chain must end at (hex; lo.audit() "
                   "prints the mesh's), which covers the last file's records too")
    s = sub.add_parser("show", help="the last records of a run")
    s.add_argument("image")
    s.add_argument("run")
    s.add_argument("-n", type=int, default=20)
    args = ap.parse_args(argv)
    try:
        head = None
        if args.command == "verify" and args.head:
            head = bytes.fromhex(args.head)
        if args.command == "verify" and all(p.endswith(".audit") for p in args.paths):
            c = verify(((p, Path(p).read_bytes()) for p in args.paths), head)
            print(f"chain ok: {c.files} files, {c.records} records, seq {c.first_seq}.."
                  f"{c.next_seq - 1}, head {c.head.hex()}{_ends(head)}")
            return 0
        image = args.paths[0] if args.command == "verify" else args.image
        fs, runs = _image_runs(image)
        want = args.paths[1:] if args.command == "verify" else [args.run]
        if not runs:
            print(f"auditlog.py: {image}: no audit exports in /data/audit", file=sys.stderr)
            return 1
        if args.command == "show":
            files = runs.get(args.run)
            if files is None:
                raise ValueError(f"no run {args.run} (runs: {', '.join(runs)})")
            recs = [r for f in files for r in parse(_read(fs, f), f)][-args.n:]
            for r in recs:
                print(f"{r.seq:8d} tick {r.tick:6d} {r.kind_name:10s} actor {r.actor} "
                      f"owner {r.owner} rights {r.rights:#x} aux {r.aux:#x} "
                      f"reason {r.reason}")
            return 0
        bad = 0
        for run in want or list(runs):
            if run not in runs:
                raise ValueError(f"no run {run} (runs: {', '.join(runs)})")
            try:
                c = verify(((f, _read(fs, f)) for f in runs[run]), head)
            except ValueError as e:
                print(f"run {run}: BROKEN: {e}")
                bad += 1
                continue
            print(f"run {run}: chain ok: {c.files} files, {c.records} records, seq "
                  f"{c.first_seq}..{c.next_seq - 1}, head {c.head.hex()}{_ends(head)}")
        return 1 if bad else 0
    except (OSError, ValueError) as e:
        print(f"auditlog.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
