# SPDX-License-Identifier: MIT
"""The trace field's C core (loci/field/*.c) built for the host through cffi, cached under
build/host/field/ by a hash of sources, declarations and flags; plus the ASan driver."""

import hashlib
import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIELD = ROOT / "loci" / "field"
SHA_DIR = ROOT / "build" / "micropython-1.25.0" / "lib" / "crypto-algorithms"
OUT = ROOT / "build" / "host" / "field"
# -ffp-contract=off: no fused multiply-add, so tick() rounds exactly like the guest and
# like tests/host/field_model.py. UBSan works inside a cffi module; ASan does not.
CFLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
          "-fsanitize=undefined", "-fno-sanitize-recover=all"]
# The vendored SHA-256 is compiled from MicroPython's tree, not held to our warnings
# (it uses uint32_t and memset without including their headers), as boot/boot.mk does.
SHA_FLAGS = ["-std=c11", "-O1", "-fPIC", "-include", "stdint.h", "-include", "string.h",
             "-w"]

CDEF_TYPES = """
typedef struct { float evaporation, diffusion, cap, min; } field_params_t;
typedef struct { uint8_t len; uint8_t key[%(KEY)d]; float value; float pending;
                 uint32_t last; } field_entry_t;
typedef struct { double before, deposited, clipped, dropped, after; } field_tick_stats_t;
typedef struct {
    uint8_t kind; uint8_t name_len; char name[%(NAME1)d]; uint32_t w, h; field_params_t p;
    float keep, share, self_w[5]; float *cells, *pending; uint32_t *last;
    field_entry_t *entries; uint32_t count; double deposited, clipped;
    field_tick_stats_t stats;
} field_flavour_t;
typedef struct {
    uint64_t seq; uint64_t tick; uint32_t depositor; uint32_t where; float amount;
    uint16_t flavour; uint8_t kind; uint8_t flags; uint8_t keylen; uint8_t key[%(KEY)d];
} field_record_t;
typedef struct { uint32_t id; uint16_t flavour; uint16_t pad; uint64_t count;
                 double total; } field_depositor_t;
typedef struct {
    uint8_t used; uint8_t above; uint16_t flavour; uint32_t x0, y0, w, h; uint8_t keylen;
    uint8_t key[%(KEY)d]; float threshold; uint32_t crossings; double metric;
} field_watch_t;
typedef struct {
    uint8_t *arena; size_t arena_size, arena_used; uint64_t tick; uint32_t nflavours;
    field_flavour_t fl[%(MAXFL)d]; field_record_t *journal; uint32_t journal_cap;
    uint64_t journal_next; uint64_t journal_lost; field_depositor_t *deps;
    uint32_t deps_cap, deps_count; field_depositor_t deps_overflow; field_watch_t *watches;
    uint32_t watch_cap; int check_invariant; double invariant_tol;
} field_t;
typedef struct { uint32_t flavour, index; uint8_t keylen; uint8_t key[%(KEY)d];
                 float a, b; } field_diff_t;
typedef struct { uint32_t index; float value; uint8_t keylen; uint8_t key[%(KEY)d];
               } field_hit_t;
typedef struct { uint16_t version; uint32_t nflavours; uint64_t tick, journal_seq;
                 uint32_t size; uint8_t digest[32]; } field_snap_info_t;
"""

# Function prototypes are read from field.h itself, so the two cannot drift apart.
_PROTO = re.compile(r"^(?:const char \*|int |size_t |uint64_t )field_\w+\([^;]*\);", re.M)


def _cdef():
    cfg = (FIELD / "field_config.h").read_text()

    def num(name):
        return int(re.search(rf"#define {name}\s+(\d+)", cfg).group(1))

    hdr = (FIELD / "field.h").read_text()
    enum = re.search(r"enum field_err \{(.*?)\};", hdr, re.S).group(1)
    codes = re.findall(r"^\s+(FIELD_(?:OK|ERR_\w+))", enum, re.M)
    # cffi wants numeric array sizes; a parameter array is a pointer anyway.
    protos = [re.sub(r"(\w+)\[[A-Z_]+\]", r"*\1", p) for p in _PROTO.findall(hdr)]
    consts = "".join(f"#define {n} ...\n" for n in (
        "FIELD_MAX_FLAVOURS", "FIELD_NAME_MAX", "FIELD_KEY_MAX", "FIELD_GRID_MAX_SIDE",
        "FIELD_KEYED_MAX_CAP", "FIELD_SNAP_VERSION", "FIELD_SNAP_HEADER", "FIELD_SNAP_DESC",
        "FIELD_SNAP_ENTRY", "FIELD_DIGEST_SIZE"))
    types = CDEF_TYPES % {"KEY": num("FIELD_KEY_MAX"), "NAME1": num("FIELD_NAME_MAX") + 1,
                          "MAXFL": num("FIELD_MAX_FLAVOURS")}
    return (consts + "enum field_err { " + ", ".join(c + " = ..." for c in codes) + " };\n"
            + "enum field_kind { FIELD_GRID = 1, FIELD_KEYED = 2 };\n"
            + "enum field_rec_kind { FIELD_REC_DEPOSIT = 1, FIELD_REC_TICK, FIELD_REC_WATCH,"
            + " FIELD_REC_RESTORE };\n" + types + "\n".join(protos)
            + "\nuint32_t field_crc32(uint32_t crc, const uint8_t *p, size_t n);\n")


def sources():
    return sorted(FIELD.glob("*.c"))


def _digest(cdef):
    h = hashlib.sha256(cdef.encode() + " ".join(CFLAGS + SHA_FLAGS).encode())
    for p in sorted(FIELD.glob("*.[ch]")) + [SHA_DIR / "sha256.c", SHA_DIR / "sha256.h"]:
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:12]


def build():
    """The cffi module (.ffi, .lib) of the field core, built once per source change."""
    import cffi

    cdef = _cdef()
    modname = "_field_" + _digest(cdef)
    OUT.mkdir(parents=True, exist_ok=True)
    if str(OUT) not in sys.path:
        sys.path.insert(0, str(OUT))
    try:
        return importlib.import_module(modname)
    except ImportError:
        pass
    sha_obj = OUT / f"sha256_{modname}.o"
    subprocess.run(["gcc", *SHA_FLAGS, "-c", str(SHA_DIR / "sha256.c"), "-o", str(sha_obj)],
                   check=True)
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(modname, '#include "field.h"\n'
                   "uint32_t field_crc32(uint32_t crc, const uint8_t *p, size_t n);\n",
                   sources=[str(p) for p in sources()], include_dirs=[str(FIELD), str(SHA_DIR)],
                   extra_compile_args=CFLAGS, extra_objects=[str(sha_obj)],
                   extra_link_args=["-fsanitize=undefined"])
    ffi.compile(tmpdir=str(OUT), verbose=False)
    return importlib.import_module(modname)


# A native driver for the snapshot parser under AddressSanitizer (which cannot be
# loaded into a running Python): each file is copied into a buffer of exactly its size.
ASAN_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "field.h"
int main(int argc, char **argv) {
    static unsigned char arena[1 << 22];
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) return 2;
        fseek(fp, 0, SEEK_END); long n = ftell(fp); fseek(fp, 0, SEEK_SET);
        unsigned char *buf = malloc(n ? (size_t)n : 1);
        if (n && fread(buf, 1, (size_t)n, fp) != (size_t)n) return 2;
        fclose(fp);
        field_snap_info_t info;
        int rc = field_snapshot_check(buf, (size_t)n, &info);
        field_t f;
        field_init(&f, arena, sizeof arena, 64, 8, 4);
        int rr = field_restore(&f, buf, (size_t)n);
        uint32_t total = 0;
        field_diff_t d[4];
        int rd = field_diff(buf, (size_t)n, buf, (size_t)n, d, 4, &total);
        printf("%d %d %d %u\n", rc, rr, rd, total);
        free(buf);
    }
    return 0;
}
"""


def asan_driver():
    """Path of the ASan+UBSan driver, or None if this host cannot build one."""
    if shutil.which("gcc") is None:
        return None
    OUT.mkdir(parents=True, exist_ok=True)
    src = OUT / "field_asan.c"
    exe = OUT / "field_asan"
    src.write_text(ASAN_DRIVER)
    sha_obj = OUT / "sha256_asan.o"
    flags = ["-std=c11", "-O1", "-g", "-fsanitize=address,undefined",
             "-fno-sanitize-recover=all"]
    steps = [["gcc", *flags, "-include", "stdint.h", "-include", "string.h", "-w", "-c",
              str(SHA_DIR / "sha256.c"), "-o", str(sha_obj)],
             ["gcc", *flags, "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
              "-I", str(FIELD), "-I", str(SHA_DIR), str(src),
              *[str(p) for p in sources()], str(sha_obj), "-o", str(exe)]]
    for cmd in steps:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return None
    return exe


_MOD = None


def module():
    global _MOD
    if _MOD is None:
        _MOD = build()
    return _MOD


class FieldError(Exception):
    """A nonzero return code; .code is the enum name, e.g. 'FIELD_ERR_RANGE'."""

    def __init__(self, code, number):
        super().__init__(code)
        self.code = code
        self.number = number


def err_name(number):
    lib = module().lib
    for name in dir(lib):
        if (name == "FIELD_OK" or name.startswith("FIELD_ERR_")) and getattr(lib, name) == number:
            return name
    return f"?{number}"


def check(rc):
    if rc != 0:
        raise FieldError(err_name(rc), rc)


class CField:
    """A thin test handle around one field_t in its own cffi-owned arena."""

    def __init__(self, arena_size=1 << 20, journal_cap=64, deps_cap=16, watch_cap=4):
        m = module()
        self.ffi, self.lib = m.ffi, m.lib
        self.arena = self.ffi.new("uint8_t[]", arena_size)
        self.f = self.ffi.new("field_t *")
        check(self.lib.field_init(self.f, self.arena, arena_size, journal_cap, deps_cap,
                                  watch_cap))

    def params(self, e, g, cap, mn):
        p = self.ffi.new("field_params_t *")
        p.evaporation, p.diffusion, p.cap, p.min = e, g, cap, mn
        return p

    def add_grid(self, name, w, h, e=0.0, g=0.0, cap=1e30, mn=0.0):
        idx = self.ffi.new("uint32_t *")
        check(self.lib.field_add_grid(self.f, name.encode(), w, h, self.params(e, g, cap, mn),
                                      idx))
        return idx[0]

    def add_keyed(self, name, capacity, e=0.0, cap=1e30, mn=0.0):
        idx = self.ffi.new("uint32_t *")
        check(self.lib.field_add_keyed(self.f, name.encode(), capacity,
                                       self.params(e, 0.0, cap, mn), idx))
        return idx[0]

    def find(self, name):
        idx = self.ffi.new("uint32_t *")
        check(self.lib.field_find(self.f, name.encode(), idx))
        return idx[0]

    def deposit_cell(self, i, cell, amount, who):
        check(self.lib.field_deposit_cell(self.f, i, cell, amount, who))

    def deposit_xy(self, i, x, y, amount, who):
        check(self.lib.field_deposit_xy(self.f, i, x, y, amount, who))

    def deposit_key(self, i, key, amount, who):
        check(self.lib.field_deposit_key(self.f, i, key, len(key), amount, who))

    def sense_xy(self, i, x, y):
        out = self.ffi.new("float *")
        check(self.lib.field_sense_xy(self.f, i, x, y, out))
        return out[0]

    def sense_key(self, i, key):
        out = self.ffi.new("float *")
        check(self.lib.field_sense_key(self.f, i, key, len(key), out))
        return out[0]

    def last_xy(self, i, x, y):
        out = self.ffi.new("uint32_t *")
        check(self.lib.field_last_xy(self.f, i, x, y, out))
        return out[0]

    def last_key(self, i, key):
        out = self.ffi.new("uint32_t *")
        check(self.lib.field_last_key(self.f, i, key, len(key), out))
        return out[0]

    def neighbourhood(self, i, x, y):
        out = self.ffi.new("float[9]")
        mask = self.ffi.new("uint32_t *")
        check(self.lib.field_neighbourhood(self.f, i, x, y, out, mask))
        return list(out), mask[0]

    def gradient(self, i, x, y):
        dx, dy = self.ffi.new("int *"), self.ffi.new("int *")
        check(self.lib.field_gradient(self.f, i, x, y, dx, dy))
        return dx[0], dy[0]

    def region(self, i, x0, y0, w, h):
        s, mx, arg = self.ffi.new("double *"), self.ffi.new("float *"), self.ffi.new("uint32_t *")
        check(self.lib.field_region(self.f, i, x0, y0, w, h, s, mx, arg))
        return s[0], mx[0], arg[0]

    def total(self, i):
        s = self.ffi.new("double *")
        check(self.lib.field_total(self.f, i, s))
        return s[0]

    def topk(self, i, k):
        out = self.ffi.new("field_hit_t[]", max(k, 1))
        n = self.ffi.new("uint32_t *")
        check(self.lib.field_topk(self.f, i, k, out, n))
        return [(out[j].index, out[j].value, bytes(out[j].key)[:out[j].keylen])
                for j in range(n[0])]

    def tick(self):
        check(self.lib.field_tick(self.f))

    def invariant_holds(self, i, rel_tol=1e-5):
        rc = self.lib.field_check_invariant(self.f, i, rel_tol)
        if rc not in (0, self.lib.FIELD_ERR_INVARIANT):
            check(rc)
        return rc == 0

    def stats(self, i):
        s = self.f.fl[i].stats
        return (s.before, s.deposited, s.clipped, s.dropped, s.after)

    def values(self, i):
        fl = self.f.fl[i]
        if fl.kind == self.lib.FIELD_GRID:
            return list(self.ffi.unpack(fl.cells, fl.w * fl.h))
        return [fl.entries[j].value for j in range(fl.count)]

    def keys(self, i):
        fl = self.f.fl[i]
        return [bytes(fl.entries[j].key)[:fl.entries[j].len] for j in range(fl.count)]

    def digest(self):
        out = self.ffi.new("uint8_t[32]")
        check(self.lib.field_digest(self.f, out))
        return bytes(out)

    def snapshot(self):
        size = self.lib.field_snapshot_size(self.f)
        buf = self.ffi.new("uint8_t[]", size)
        n = self.ffi.new("size_t *")
        check(self.lib.field_snapshot(self.f, buf, size, n))
        return bytes(self.ffi.buffer(buf, n[0]))

    def restore(self, data):
        check(self.lib.field_restore(self.f, data, len(data)))

    def replay(self, src, snap):
        check(self.lib.field_replay(self.f, src.f, snap, len(snap)))

    def journal(self, seq):
        r = self.ffi.new("field_record_t *")
        check(self.lib.field_journal_get(self.f, seq, r))
        return dict(seq=r.seq, tick=r.tick, depositor=r.depositor, where=r.where,
                    amount=r.amount, flavour=r.flavour, kind=r.kind, flags=r.flags,
                    key=bytes(r.key)[:r.keylen])

    def depositor(self, who, i):
        t, c = self.ffi.new("double *"), self.ffi.new("uint64_t *")
        check(self.lib.field_depositor_total(self.f, who, i, t, c))
        return c[0], t[0]

    def watch_region(self, i, x0, y0, w, h, threshold):
        out = self.ffi.new("uint32_t *")
        check(self.lib.field_watch_region(self.f, i, x0, y0, w, h, threshold, out))
        return out[0]

    def watch_key(self, i, key, threshold):
        out = self.ffi.new("uint32_t *")
        check(self.lib.field_watch_key(self.f, i, key, len(key), threshold, out))
        return out[0]


def snapshot_check(data):
    m = module()
    info = m.ffi.new("field_snap_info_t *")
    rc = m.lib.field_snapshot_check(data, len(data), info)
    return err_name(rc), info


def diff(a, b, cap=4096):
    m = module()
    out = m.ffi.new("field_diff_t[]", cap)
    total = m.ffi.new("uint32_t *")
    check(m.lib.field_diff(a, len(a), b, len(b), out, cap, total))
    return total[0], [(out[j].flavour, out[j].index, bytes(out[j].key)[:out[j].keylen],
                       out[j].a, out[j].b) for j in range(min(total[0], cap))]
