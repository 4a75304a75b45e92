# SPDX-License-Identifier: MIT
"""Pure-Python reference model of the trace field (loci/field/), written from
loci/field/README.md and FORMAT.md rather than from the C. Every float32 operation of the C
is one float32 operation here too (f32() rounds a double result to single precision, which
for + - * of float32 operands is the correctly rounded float32 result), so model and C
agree bit for bit, not just within a tolerance. Also encodes snapshots byte for byte."""

import hashlib
import struct
import zlib

KEY_MAX = 15
NAME_MAX = 15
GRID, KEYED = 1, 2
DEPOSIT, TICK, WATCH, RESTORE = 1, 2, 3, 4
VERSION = 1
HEADER = 72
_F = struct.Struct("<f")


def f32(x):
    return _F.unpack(_F.pack(x))[0]


def key_order(key):
    """Keyed flavours are ordered by the zero-padded key bytes, then by length."""
    return (key.ljust(KEY_MAX, b"\0"), len(key))


class FieldError(Exception):
    """Raised with the C error code's name (e.g. 'FIELD_ERR_RANGE')."""


class Flavour:
    def __init__(self, kind, name, w, h, e, g, cap, mn):
        self.kind, self.name, self.w, self.h = kind, name, w, h
        self.e, self.g, self.cap, self.min = f32(e), f32(g), f32(cap), f32(mn)
        self.keep = f32(1.0 - self.e)
        self.share = f32(self.g * 0.25)
        stay = f32(1.0 - self.g)
        self.self_w = [f32(stay + f32(k * self.share)) for k in range(5)]
        self.deposited = 0.0
        self.clipped = 0.0
        self.stats = (0.0, 0.0, 0.0, 0.0, 0.0)
        if kind == GRID:
            self.cells = [0.0] * (w * h)
            self.pending = [0.0] * (w * h)
            self.last = [0] * (w * h)
        else:
            self.entries = {}    # key -> [value, pending, last]

    def add_pending(self, old, amount):
        s = f32(old + amount)
        if s > self.cap:
            self.clipped += s - self.cap
            s = self.cap
        self.deposited += amount
        return s

    def sorted_keys(self):
        return sorted(self.entries, key=key_order)

    def values(self):
        if self.kind == GRID:
            return list(self.cells)
        return [self.entries[k][0] for k in self.sorted_keys()]

    # -- tick ------------------------------------------------------------------------
    def tick(self):
        if self.kind == GRID:
            self._tick_grid()
        else:
            self._tick_keyed()
        self.deposited = 0.0
        self.clipped = 0.0

    def _commit(self, value, pending, acc):
        v = f32(value + pending)
        if v > self.cap:
            acc[0] += v - self.cap
            v = self.cap
        return f32(v * self.keep)

    def _tick_grid(self):
        w, h, n = self.w, self.h, self.w * self.h
        before = 0.0
        clip = [self.clipped]
        s = [0.0] * n
        for i in range(n):
            before += self.cells[i]
            s[i] = self._commit(self.cells[i], self.pending[i], clip)
        out = [0.0] * n
        dropped = after = 0.0
        for y in range(h):
            for x in range(w):
                i = y * w + x
                acc, walls = 0.0, 0
                for ok, j in ((x > 0, i - 1), (x + 1 < w, i + 1), (y > 0, i - w),
                              (y + 1 < h, i + w)):
                    if ok:
                        acc = f32(acc + s[j])
                    else:
                        walls += 1
                v = f32(f32(s[i] * self.self_w[walls]) + f32(self.share * acc))
                if v < self.min:
                    dropped += v
                    v = 0.0
                out[i] = v
                after += v
        self.cells = out
        self.pending = [0.0] * n
        self.stats = (before, self.deposited, clip[0], dropped, after)

    def _tick_keyed(self):
        before = dropped = after = 0.0
        clip = [self.clipped]
        for k in self.sorted_keys():
            ent = self.entries[k]
            before += ent[0]
            v = self._commit(ent[0], ent[1], clip)
            if not (v >= self.min and v > 0.0):
                dropped += v
                del self.entries[k]
                continue
            ent[0], ent[1] = v, 0.0
            after += v
        self.stats = (before, self.deposited, clip[0], dropped, after)

    # -- snapshot pieces -------------------------------------------------------------
    def descriptor(self):
        name = self.name.encode()
        return (struct.pack("<BBH", self.kind, len(name), 0) + name.ljust(16, b"\0")
                + struct.pack("<II4f", self.w, self.h, self.e, self.g, self.cap, self.min))

    def content(self):
        """(hashed bytes, provenance bytes) of this flavour in a snapshot."""
        if self.kind == GRID:
            body = struct.pack(f"<{len(self.cells)}f", *self.cells)
            pend = [(i, v) for i, v in enumerate(self.pending) if v != 0.0]
            body += struct.pack("<I", len(pend)) + b"".join(
                struct.pack("<If", i, v) for i, v in pend)
            prov = [(i, d) for i, d in enumerate(self.last) if d]
        else:
            keys = self.sorted_keys()
            body = struct.pack("<I", len(keys))
            for k in keys:
                v, p, _ = self.entries[k]
                body += bytes([len(k)]) + k.ljust(KEY_MAX, b"\0") + struct.pack("<ff", v, p)
            prov = [(i, self.entries[k][2]) for i, k in enumerate(keys) if self.entries[k][2]]
        tail = struct.pack("<I", len(prov)) + b"".join(struct.pack("<II", i, d) for i, d in prov)
        return self.descriptor() + body, tail


class Field:
    def __init__(self, journal_cap=64, deps_cap=16, watch_cap=4):
        self.flavours = []
        self.tick_count = 0
        self.journal = []          # every record ever; the ring keeps the last journal_cap
        self.journal_cap = journal_cap
        self.deps = {}             # (id, flavour) -> [count, total]
        self.deps_cap = deps_cap
        self.overflow = [0, 0.0]
        self.watches = [None] * watch_cap

    # -- set-up ----------------------------------------------------------------------
    def add_grid(self, name, w, h, e=0.0, g=0.0, cap=1e30, mn=0.0):
        self.flavours.append(Flavour(GRID, name, w, h, e, g, cap, mn))
        return len(self.flavours) - 1

    def add_keyed(self, name, capacity, e=0.0, cap=1e30, mn=0.0):
        self.flavours.append(Flavour(KEYED, name, capacity, 0, e, 0.0, cap, mn))
        return len(self.flavours) - 1

    def _flavour(self, i, kind):
        if not 0 <= i < len(self.flavours):
            raise FieldError("FIELD_ERR_FLAVOUR")
        fl = self.flavours[i]
        if fl.kind != kind:
            raise FieldError("FIELD_ERR_KIND")
        return fl

    # -- deposits --------------------------------------------------------------------
    @staticmethod
    def _check(amount, who):
        if amount != amount or amount in (float("inf"), float("-inf")) or amount < 0:
            raise FieldError("FIELD_ERR_AMOUNT")
        if who == 0:
            raise FieldError("FIELD_ERR_DEPOSITOR")

    def _journal(self, **rec):
        rec.setdefault("tick", self.tick_count)
        rec["seq"] = len(self.journal)
        self.journal.append(rec)

    def _attribute(self, who, i, amount):
        if (who, i) in self.deps or len(self.deps) < self.deps_cap:
            d = self.deps.setdefault((who, i), [0, 0.0])
        else:
            d = self.overflow
        d[0] += 1
        d[1] += amount

    def deposit_cell(self, i, cell, amount, who):
        fl = self._flavour(i, GRID)
        if not 0 <= cell < fl.w * fl.h:
            raise FieldError("FIELD_ERR_RANGE")
        amount = f32(amount) if amount == amount and abs(amount) != float("inf") else amount
        self._check(amount, who)
        fl.pending[cell] = fl.add_pending(fl.pending[cell], amount)
        fl.last[cell] = who
        self._journal(kind=DEPOSIT, flavour=i, where=cell, key=b"", amount=amount,
                      depositor=who)
        self._attribute(who, i, amount)

    def deposit_xy(self, i, x, y, amount, who):
        fl = self._flavour(i, GRID)
        if not (0 <= x < fl.w and 0 <= y < fl.h):
            raise FieldError("FIELD_ERR_RANGE")
        self.deposit_cell(i, y * fl.w + x, amount, who)

    def deposit_key(self, i, key, amount, who):
        fl = self._flavour(i, KEYED)
        if not 1 <= len(key) <= KEY_MAX:
            raise FieldError("FIELD_ERR_KEY")
        amount = f32(amount) if amount == amount and abs(amount) != float("inf") else amount
        self._check(amount, who)
        if key not in fl.entries:
            if len(fl.entries) >= fl.w:
                raise FieldError("FIELD_ERR_FULL")
            fl.entries[key] = [0.0, 0.0, 0]
        ent = fl.entries[key]
        ent[1] = fl.add_pending(ent[1], amount)
        ent[2] = who
        self._journal(kind=DEPOSIT, flavour=i, where=0, key=key, amount=amount,
                      depositor=who)
        self._attribute(who, i, amount)

    # -- reads -----------------------------------------------------------------------
    def sense_xy(self, i, x, y):
        fl = self._flavour(i, GRID)
        if not (0 <= x < fl.w and 0 <= y < fl.h):
            raise FieldError("FIELD_ERR_RANGE")
        return fl.cells[y * fl.w + x]

    def sense_key(self, i, key):
        fl = self._flavour(i, KEYED)
        if not 1 <= len(key) <= KEY_MAX:
            raise FieldError("FIELD_ERR_KEY")
        return fl.entries[key][0] if key in fl.entries else 0.0

    def last_xy(self, i, x, y):
        fl = self._flavour(i, GRID)
        return fl.last[y * fl.w + x]

    def neighbourhood(self, i, x, y):
        fl = self._flavour(i, GRID)
        out, mask = [], 0
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                nx, ny = x + dx, y + dy
                if 0 <= nx < fl.w and 0 <= ny < fl.h:
                    mask |= 1 << len(out)
                    out.append(fl.cells[ny * fl.w + nx])
                else:
                    out.append(0.0)
        return out, mask

    def gradient(self, i, x, y):
        fl = self._flavour(i, GRID)
        best, d = fl.cells[y * fl.w + x], (0, 0)
        for dx, dy in ((0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)):
            nx, ny = x + dx, y + dy
            if 0 <= nx < fl.w and 0 <= ny < fl.h and fl.cells[ny * fl.w + nx] > best:
                best, d = fl.cells[ny * fl.w + nx], (dx, dy)
        return d

    def region(self, i, x0, y0, w, h):
        fl = self._flavour(i, GRID)
        if w < 1 or h < 1 or x0 + w > fl.w or y0 + h > fl.h:
            raise FieldError("FIELD_ERR_RANGE")
        total, best, arg = 0.0, fl.cells[y0 * fl.w + x0], y0 * fl.w + x0
        for y in range(y0, y0 + h):
            for x in range(x0, x0 + w):
                v = fl.cells[y * fl.w + x]
                total += v
                if v > best:
                    best, arg = v, y * fl.w + x
        return total, best, arg

    def total(self, i):
        total = 0.0
        for v in self.flavours[i].values():
            total += v
        return total

    def topk(self, i, k):
        """[(index, value, key)] largest first, ties to the lower index; zeros left out."""
        fl = self.flavours[i]
        if fl.kind == GRID:
            items = [(ix, v, b"") for ix, v in enumerate(fl.cells) if v > 0.0]
        else:
            keys = fl.sorted_keys()
            items = [(ix, fl.entries[kk][0], kk) for ix, kk in enumerate(keys)
                     if fl.entries[kk][0] > 0.0]
        return sorted(items, key=lambda t: (-t[1], t[0]))[:k]

    # -- tick, watches ---------------------------------------------------------------
    def watch_region(self, i, x0, y0, w, h, threshold):
        return self._add_watch(dict(flavour=i, region=(x0, y0, w, h), key=b"",
                                    threshold=f32(threshold)))

    def watch_key(self, i, key, threshold):
        return self._add_watch(dict(flavour=i, region=None, key=key,
                                    threshold=f32(threshold)))

    def _add_watch(self, w):
        slot = self.watches.index(None)
        w["metric"] = self._metric(w)
        w["above"] = w["metric"] >= w["threshold"]
        w["crossings"] = 0
        self.watches[slot] = w
        return slot

    def _metric(self, w):
        if w["region"] is None:
            return self.sense_key(w["flavour"], w["key"])
        return self.region(w["flavour"], *w["region"])[0]

    def tick(self):
        for fl in self.flavours:
            fl.tick()
        self.tick_count += 1
        self._journal(kind=TICK, flavour=0, where=0, key=b"", amount=0.0, depositor=0)
        for slot, w in enumerate(self.watches):
            if w is None:
                continue
            w["metric"] = self._metric(w)
            above = w["metric"] >= w["threshold"]
            if above != w["above"]:
                w["crossings"] += 1
                self._journal(kind=WATCH, flavour=w["flavour"], where=slot, key=w["key"],
                              amount=f32(w["metric"]), depositor=0, flags=int(above))
            w["above"] = above

    def invariant_holds(self, i, rel_tol=1e-5):
        fl = self.flavours[i]
        before, deposited, clipped, dropped, after = fl.stats
        expected = fl.keep * (before + deposited - clipped) - dropped
        return abs(after - expected) <= rel_tol * (before + deposited) + 1e-30

    # -- snapshots -------------------------------------------------------------------
    def _bodies(self):
        return [fl.content() for fl in self.flavours]

    def digest(self):
        h = hashlib.sha256(struct.pack("<QI", self.tick_count, len(self.flavours)))
        for hashed, _ in self._bodies():
            h.update(hashed)
        return h.digest()

    def snapshot(self, journal_seq=None):
        seq = len(self.journal) if journal_seq is None else journal_seq
        body = b"".join(a + b for a, b in self._bodies())
        size = HEADER + len(body) + 4
        head = (b"LOCIFLD\0" + struct.pack("<HHIQQII", VERSION, HEADER, len(self.flavours),
                                           self.tick_count, seq, size, 0) + self.digest())
        data = head + body
        return data + struct.pack("<I", zlib.crc32(data))


def parse_header(data):
    """The header fields of a snapshot as a dict (no validation beyond the length)."""
    magic, version, hsize, nfl, tick, seq, size, flags = struct.unpack_from(
        "<8sHHIQQII", data)
    return dict(magic=magic, version=version, header=hsize, nflavours=nfl, tick=tick,
                journal_seq=seq, size=size, flags=flags, digest=data[40:72])


def reseal(data):
    """Recompute the CRC of a (possibly edited) snapshot, so a test can reach the checks
    behind the checksum."""
    data = bytes(data)
    return data[:-4] + struct.pack("<I", zlib.crc32(data[:-4]))
