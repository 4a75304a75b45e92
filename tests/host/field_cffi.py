# SPDX-License-Identifier: MIT
"""The trace field's C core (loci/field/*.c) built for the host through cffi
(tools/build/cffihost.py: declarations from field.h and field_internal.h, cached under
build/host/field/), plus the ASan driver of the snapshot parser."""

import subprocess

from tools.build import cffihost
from tools.field.fieldcore import FIELD, FLAGS, SHA, build, sources  # noqa: F401

# The snapshot parser under AddressSanitizer (which cannot be loaded into a running
# Python), in a native driver: every file through check, restore and diff.
ASAN_CHECK = r"""
#include <stdio.h>
#include "field.h"
static void check_file(const unsigned char *buf, size_t n) {
    static unsigned char arena[1 << 22];
    field_snap_info_t info;
    int rc = field_snapshot_check(buf, n, &info);
    field_t f;
    field_init(&f, arena, sizeof arena, 64, 8, 4);
    int rr = field_restore(&f, buf, n);
    uint32_t total = 0;
    field_diff_t d[4];
    int rd = field_diff(buf, n, buf, n, d, 4, &total);
    printf("%d %d %d %u\n", rc, rr, rd, total);
}
"""


def asan_driver():
    """Path of the ASan+UBSan driver, or None if this host cannot build one."""
    try:
        return cffihost.executable("field_asan", sources(), [FIELD, SHA.parent],
                                   check_file=ASAN_CHECK, flags=FLAGS, vendored=[SHA])
    except (OSError, subprocess.CalledProcessError):
        return None


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
