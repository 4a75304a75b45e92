# SPDX-License-Identifier: MIT
"""The capability table's C core (loci/cap/*.c) built for the host through cffi
(tools/build/cffihost.py: declarations from cap.h, cached under build/host/cap/), in two
variants: UBSan (loaded in this process) and ASan+UBSan (loaded in a child Python with
libasan preloaded)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from cap_model import REASONS, E, Scope

from tools.build import cffihost

ROOT = Path(__file__).resolve().parents[2]
CAP = ROOT / "loci" / "cap"


def build(variant: str = "ubsan", load: bool = True):
    """The cffi module (.ffi, .lib) of the core, built once per source change. The ASan
    variant can only be loaded where libasan came first (load=False builds it)."""
    return cffihost.build("cap", sorted(CAP.glob("*.c")), [CAP / "cap.h"],
                          vendored=[cffihost.SHA_DIR / "sha256.c"], variant=variant, load=load)


def asan_env() -> dict[str, str]:
    """Environment for a child Python that loads the ASan variant."""
    env = cffihost.asan_env()
    env["CAP_CFFI_VARIANT"] = "asan"
    return env


_MODS: dict[str, object] = {}


def module():
    variant = os.environ.get("CAP_CFFI_VARIANT", "ubsan")
    if variant not in _MODS:
        _MODS[variant] = build(variant)
    return _MODS[variant]


class CTable:
    """One cap_table_t in a cffi-owned arena, with the model's method signatures:
    results are reason names ('OK', 'REVOKED', ...) as in cap_model.REASONS."""

    def __init__(self, capacity: int, audit: int, ident: int):
        m = module()
        self.ffi, self.lib = m.ffi, m.lib
        size = self.lib.cap_arena_size(capacity, audit)
        # cffi's buffers are malloc'ed (16-aligned on x86_64 glibc); the core checks it.
        self.arena = self.ffi.new("uint8_t[]", size)
        self.t = self.ffi.new("cap_table_t *")
        rc = self.lib.cap_init(self.t, self.arena, size, capacity, audit, ident)
        if rc:
            raise ValueError(REASONS[rc])

    def _scope(self, sc: Scope):
        s = self.ffi.new("cap_scope_t *")
        s.rights, s.flavours, s.rate, s.expires = sc.rights, sc.flavours, sc.rate, sc.expires
        if sc.region is not None:
            s.has_region = 1
            s.x0, s.y0, s.w, s.h = sc.region
        if sc.keys is not None:
            s.has_keys, s.nkeys = 1, len(sc.keys)
            for i, k in enumerate(sc.keys[:4]):
                s.keylen[i] = len(k)
                s.keys[i][0:min(len(k), 15)] = list(k[:15])
        if sc.io is not None:
            s.has_io, s.io_lo, s.io_hi = 1, *sc.io
        if sc.mem is not None:
            s.has_mem, s.mem_lo, s.mem_hi = 1, *sc.mem
        return s

    def _ref(self, ref):
        r = self.ffi.new("cap_ref_t *")
        r.table, r.slot, r.gen = ref
        return r

    @property
    def now(self) -> int:
        return self.t.now

    @now.setter
    def now(self, v: int) -> None:
        self.t.now = v

    def grant(self, owner, scope: Scope, by=0):
        out = self.ffi.new("cap_ref_t *")
        rc = self.lib.cap_grant(self.t, owner, self._scope(scope), by, out)
        return REASONS[rc], ((out.table, out.slot, out.gen) if rc == 0 else None)

    def derive(self, ref, owner, scope: Scope, by):
        out = self.ffi.new("cap_ref_t *")
        rc = self.lib.cap_derive(self.t, self._ref(ref), owner, self._scope(scope), by, out)
        return REASONS[rc], ((out.table, out.slot, out.gen) if rc == 0 else None)

    def check(self, ref, owner, op, flavour=0, x=-1, y=-1, w=1, h=1, key=None, amount=0.0,
              now=0) -> str:
        r = self.ffi.new("cap_req_t *")
        r.op, r.flavour, r.x, r.y, r.w, r.h, r.amount, r.now = op, flavour, x, y, w, h, amount, now
        keybuf = None
        if key is not None:
            keybuf = self.ffi.new("uint8_t[]", list(key) or [0])
            r.key, r.keylen = keybuf, len(key)
        return REASONS[self.lib.cap_check(self.t, self._ref(ref), owner, r)]

    def epoch(self) -> None:
        self.lib.cap_epoch(self.t)

    def _count(self, fn, *args):
        n = self.ffi.new("uint32_t *")
        rc = fn(self.t, *args, n)
        return REASONS[rc], n[0]

    def revoke(self, ref, by=0):
        return self._count(self.lib.cap_revoke, self._ref(ref), by)

    def retire(self, owner, by=0):
        return self._count(self.lib.cap_retire, owner, by)

    def expire(self, now):
        return self._count(self.lib.cap_expire, now)

    def narrows(self, parent: Scope, child: Scope) -> str:
        return REASONS[self.lib.cap_scope_narrows(self._scope(parent), self._scope(child))]

    # ---- views --------------------------------------------------------------------
    def scope_of(self, i: int) -> Scope:
        s = self.t.slots[i].s
        return Scope(
            rights=s.rights, flavours=s.flavours,
            region=(s.x0, s.y0, s.w, s.h) if s.has_region else None,
            keys=tuple(bytes(s.keys[j])[:s.keylen[j]] for j in range(s.nkeys))
            if s.has_keys else None,
            rate=s.rate, expires=s.expires,
            io=(s.io_lo, s.io_hi) if s.has_io else None,
            mem=(s.mem_lo, s.mem_hi) if s.has_mem else None)

    def live(self) -> dict[int, tuple]:
        out = {}
        for i in range(self.t.capacity):
            s = self.t.slots[i]
            if s.live:
                out[i] = (s.gen, s.owner, s.parent, s.parent_gen, s.used, self.scope_of(i))
        return out

    @property
    def log(self) -> list[bytes]:
        size = self.t.audit_len * self.lib.CAP_REC_SIZE
        raw = bytes(self.ffi.buffer(self.t.log, size))
        n = self.lib.CAP_REC_SIZE
        return [raw[i:i + n] for i in range(0, size, n)]

    @property
    def head(self) -> bytes:
        return bytes(self.t.head)

    @property
    def seq(self) -> int:
        return self.t.seq

    def verify(self) -> bool:
        return bool(self.lib.cap_audit_verify(self.t))

    def export(self) -> bytes:
        size = max(self.t.audit_len * self.lib.CAP_REC_SIZE, 1)
        buf = self.ffi.new("uint8_t[]", size)
        n = self.ffi.new("size_t *")
        rc = self.lib.cap_audit_export(self.t, buf, size, n)
        if rc:
            raise ValueError(REASONS[rc])
        return bytes(self.ffi.buffer(buf, n[0]))

    def corrupt_log(self, offset: int, xor: int) -> None:
        """Flips bits in the live log's memory (the tests' tamper)."""
        self.t.log[offset] ^= xor


def chain(data: bytes) -> bytes | None:
    m = module()
    head = m.ffi.new("uint8_t[32]")
    rc = m.lib.cap_audit_chain(data, len(data), head)
    return bytes(head) if rc == 0 else None


def same_float(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


__all__ = ["CTable", "E", "asan_env", "build", "chain", "module", "same_float"]
