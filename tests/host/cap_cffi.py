# SPDX-License-Identifier: MIT
"""The capability table's C core (loci/cap/*.c) built for the host through cffi, cached
under build/host/cap/ by a hash of sources and flags, in two variants: UBSan (loaded in
this process) and ASan+UBSan (loaded in a child Python with libasan preloaded)."""

from __future__ import annotations

import hashlib
import importlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

from cap_model import REASONS, E, Scope

ROOT = Path(__file__).resolve().parents[2]
CAP = ROOT / "loci" / "cap"
SHA_DIR = ROOT / "build" / "micropython-1.25.0" / "lib" / "crypto-algorithms"
OUT = ROOT / "build" / "host" / "cap"
BASE = ["-std=c11", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
SANITIZE = {"ubsan": ["-fsanitize=undefined"], "asan": ["-fsanitize=address,undefined"]}
WARN = ["-Wall", "-Wextra", "-Werror"]
# The vendored SHA-256 is not held to our warnings (it uses uint32_t and memset without
# their headers), as in field_cffi.py.
SHA_EXTRA = ["-fPIC", "-include", "stdint.h", "-include", "string.h", "-w"]

# Structs are declared with "...;": cffi takes their layout from cap.h at build time.
CDEF = """
#define CAP_MAX_KEYS ...
#define CAP_KEY_MAX ...
#define CAP_REC_SIZE ...
#define CAP_NONE ...
typedef struct {
    uint32_t rights, flavours; uint8_t has_region, has_keys, has_io, has_mem, nkeys;
    uint8_t keylen[%(MAXK)d]; uint8_t keys[%(MAXK)d][%(KEY)d]; uint32_t x0, y0, w, h;
    double rate; uint64_t expires, io_lo, io_hi, mem_lo, mem_hi; ...;
} cap_scope_t;
typedef struct { uint64_t table; uint32_t slot, gen; ...; } cap_ref_t;
typedef struct {
    uint32_t gen; uint8_t live; uint32_t owner, parent, parent_gen; double used;
    cap_scope_t s; ...;
} cap_slot_t;
typedef struct {
    uint64_t id, now; uint32_t capacity, live; cap_slot_t *slots; uint32_t nfree;
    uint8_t *log; uint32_t audit_cap, audit_len; uint64_t seq; uint8_t head[32]; ...;
} cap_table_t;
typedef struct {
    uint32_t op, flavour; int64_t x, y; uint32_t w, h; const uint8_t *key; size_t keylen;
    double amount; uint64_t now; ...;
} cap_req_t;
typedef struct { ...; } cap_rec_t;
"""

# Function prototypes are read from cap.h itself, so the two cannot drift apart.
_PROTO = re.compile(r"^(?:const char \*|int |size_t |void )cap_\w+\([^;]*\);", re.M)


def _cdef() -> str:
    cfg = (CAP / "cap_config.h").read_text()

    def num(name):
        return int(re.search(rf"#define {name}\s+(\d+)", cfg).group(1))

    hdr = (CAP / "cap.h").read_text()
    protos = [re.sub(r"(\w+)\[[A-Z_]+\]", r"*\1", p) for p in _PROTO.findall(hdr)]
    return CDEF % {"MAXK": num("CAP_MAX_KEYS"), "KEY": num("CAP_KEY_MAX")} + "\n".join(protos)


def _digest(cdef: str, flags: list[str]) -> str:
    h = hashlib.sha256(cdef.encode() + " ".join(flags + SHA_EXTRA).encode())
    for p in sorted(CAP.glob("*.[ch]")) + [SHA_DIR / "sha256.c", SHA_DIR / "sha256.h"]:
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:12]


def build(variant: str = "ubsan", load: bool = True):
    """The cffi module (.ffi, .lib) of the core, built once per source change. The ASan
    variant can only be loaded where libasan came first (load=False builds it)."""
    import cffi

    cdef = _cdef()
    flags = BASE + SANITIZE[variant]
    modname = f"_cap_{variant}_" + _digest(cdef, flags)
    OUT.mkdir(parents=True, exist_ok=True)
    if str(OUT) not in sys.path:
        sys.path.insert(0, str(OUT))
    if list(OUT.glob(modname + ".*.so")):
        return importlib.import_module(modname) if load else None
    sha_obj = OUT / f"sha256_{modname}.o"
    subprocess.run(["gcc", *flags, *SHA_EXTRA, "-c", str(SHA_DIR / "sha256.c"), "-o",
                    str(sha_obj)], check=True)
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(modname, '#include "cap.h"\n', sources=[str(p) for p in sorted(CAP.glob("*.c"))],
                   include_dirs=[str(CAP), str(SHA_DIR)], extra_compile_args=flags + WARN,
                   extra_objects=[str(sha_obj)], extra_link_args=SANITIZE[variant])
    ffi.compile(tmpdir=str(OUT), verbose=False)
    return importlib.import_module(modname) if load else None


def asan_env() -> dict[str, str]:
    """Environment for a child Python that loads the ASan variant."""
    lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                         text=True, check=True).stdout.strip()
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    # CPython's own allocations are not ours to judge; the C core allocates nothing.
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
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
