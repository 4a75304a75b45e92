# SPDX-License-Identifier: MIT
"""Host-side reader of trace-field journal exports (loci/field/FORMAT.md, "Journal
export", version 1), written from the format document: framing, CRC-32, every record
rule. And replay: a snapshot plus the journal exported after it, re-applied by the
field's own C core built for the host (tools/field/fieldcore.py), checked against the
digest the guest recorded.

    j = fieldjournal.parse(data)          # JournalError(code, message) if anything is off
    j.records[0].kind, j.digest, j.end_tick
    digest = fieldjournal.replay(snap, data)   # ReplayError if it does not arrive there
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

MAGIC = b"LOCIJRN\0"
VERSION = 1
HEADER = 80
RECORD = 40
TRAILER = 4
KEY_MAX = 15
MAX_FLAVOURS = 16
KINDS = {1: "deposit", 2: "tick", 3: "watch", 4: "restore"}

_HDR = struct.Struct("<8sHHHHQIIQQ32s")
_REC = struct.Struct("<BBHIQIfB15s")


class JournalError(ValueError):
    """A journal export the reader refuses; `code` is the C core's name for the same
    failure (truncated, magic, version, checksum, corrupt)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"journal {code}: {message}")
        self.code = code


class ReplayError(ValueError):
    """A replay refused or one that did not arrive at the recorded digest."""


@dataclass(frozen=True)
class Record:
    seq: int
    kind: str          # deposit, tick, watch, restore
    tick: int
    flavour: int
    depositor: int
    where: int         # grid cell index (deposit), watch id (watch)
    amount: float
    flags: int
    key: bytes         # keyed deposit or keyed watch


@dataclass
class Journal:
    first_seq: int
    lost: int
    end_tick: int
    digest: bytes
    size: int
    records: list[Record]

    @property
    def next_seq(self) -> int:
        return self.first_seq + len(self.records)


def _corrupt(msg: str):
    raise JournalError("corrupt", msg)


def _record(raw: bytes, seq: int, prev: int | None) -> Record:
    kind, flags, fl, who, tick, where, amount, klen, key = _REC.unpack(raw)
    bits = raw[20:24]
    if kind not in KINDS:
        _corrupt(f"record {seq}: kind {kind}")
    if klen > KEY_MAX or any(key[klen:]):
        _corrupt(f"record {seq}: key length {klen} or its padding not zero")
    name = KINDS[kind]
    same = prev is None or tick == prev
    if name == "deposit":
        ok = (same and flags == 0 and fl < MAX_FLAVOURS and who != 0 and math.isfinite(amount)
              and amount >= 0 and (klen == 0 or where == 0))
    elif name == "watch":
        ok = same and flags <= 1 and fl < MAX_FLAVOURS and who == 0
    else:
        ok = (flags == 0 and fl == 0 and who == 0 and where == 0 and bits == bytes(4)
              and klen == 0)
        if name == "tick":
            ok = ok and tick != 0 and (prev is None or tick == prev + 1)
    if not ok:
        _corrupt(f"record {seq} ({name} at tick {tick}) breaks the rules of its kind")
    return Record(seq, name, tick, fl, who, where, amount, flags, key[:klen])


def parse(data: bytes) -> Journal:
    """Validates `data` in FORMAT.md's order and returns the decoded Journal."""
    data = bytes(data)
    if data[:len(MAGIC)] != MAGIC[:len(data)]:
        raise JournalError("magic", "not a journal export (no LOCIJRN magic)")
    if len(data) < 10:
        raise JournalError("truncated", f"{len(data)} bytes, too short for a version")
    version = struct.unpack_from("<H", data, 8)[0]
    if version != VERSION:
        raise JournalError("version", f"format version {version}; this reader knows "
                                      f"version {VERSION} only")
    if len(data) < HEADER:
        raise JournalError("truncated", f"{len(data)} bytes, the header needs {HEADER}")
    (_, _, hsize, rsize, flags, first, count, size, lost, end_tick,
     digest) = _HDR.unpack_from(data)
    if len(data) < size:
        raise JournalError("truncated", f"{len(data)} bytes of a {size}-byte export")
    if hsize != HEADER or rsize != RECORD or size != HEADER + count * RECORD + TRAILER \
            or len(data) > size:
        raise JournalError("corrupt", f"header size {hsize}, record size {rsize}, {count} "
                                      f"records in {size} bytes, {len(data)} given")
    if zlib.crc32(data[:size - TRAILER]) != struct.unpack_from("<I", data, size - TRAILER)[0]:
        raise JournalError("checksum", "CRC-32 mismatch: the bytes were damaged")
    if flags != 0 or lost > first or first + count >= 1 << 64:
        _corrupt(f"flags {flags:#x}, first seq {first}, {lost} lost")
    records = []
    prev = None
    for i in range(count):
        off = HEADER + i * RECORD
        r = _record(data[off:off + RECORD], first + i, prev)
        if r.tick >= 1 << 63:
            _corrupt(f"record {r.seq}: tick {r.tick}")
        records.append(r)
        prev = r.tick
    if records and prev != end_tick:
        _corrupt(f"last record at tick {prev}, export says the field was at tick {end_tick}")
    return Journal(first, lost, end_tick, digest, size, records)


def replay(snap: bytes, jrn: bytes) -> bytes:
    """Restores `snap` into a field of the host-built C core, re-applies the records of
    `jrn` after the snapshot's journal position, and returns the resulting digest, which
    the C core has checked equals the one `jrn` recorded (ReplayError otherwise)."""
    from tools.field import fieldcore, fieldsnap

    s = fieldsnap.parse(snap)
    j = parse(jrn)
    if s.journal_seq < j.first_seq:
        raise ReplayError(f"the journal starts at seq {j.first_seq} (lost {j.lost}), after "
                          f"the snapshot's seq {s.journal_seq}: records are missing")
    if s.journal_seq > j.next_seq:
        raise ReplayError(f"the snapshot (seq {s.journal_seq}) is newer than the journal's "
                          f"end (seq {j.next_seq})")
    m = fieldcore.build()
    ffi, lib = m.ffi, m.lib
    n = j.next_seq - s.journal_seq
    jcap, deps, watches = max(16, n + 2), 64, 1
    arena = lib.field_base_size(jcap, deps, watches) + lib.FIELD_ALIGN
    for fl in s.flavours.values():
        if fl.kind == "grid":
            arena += lib.field_grid_size(fl.w, fl.h) + 3 * lib.FIELD_ALIGN
        else:
            arena += lib.field_keyed_size(fl.w) + lib.FIELD_ALIGN
    mem = ffi.new("uint8_t[]", arena)
    f = ffi.new("field_t *")
    if lib.field_init(f, mem, arena, jcap, deps, watches):
        raise ReplayError("field_init refused the replay field")
    rc = lib.field_replay_journal(f, snap, len(snap), jrn, len(jrn))
    out = ffi.new("uint8_t[32]")
    lib.field_digest(f, out)
    if rc:
        why = ffi.string(lib.field_err_name(rc)).decode()
        raise ReplayError(f"replay of {n} records from tick {s.tick}: {why} (reached tick "
                          f"{f.tick}, digest {bytes(out).hex()[:16]}; recorded tick "
                          f"{j.end_tick}, digest {j.digest.hex()[:16]})")
    return bytes(out)
