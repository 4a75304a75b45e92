# SPDX-License-Identifier: MIT
# The trace field's Python API (frozen into the image): Field with declared flavours,
# Snapshot, diff, replay. The inner loops are C in the `_field` module (loci/mod).
import _field
from _field import FieldError  # noqa: F401  (re-exported: the field's ValueError)

REPL = _field.REPL      # depositor id used when none is given
KEYED_MAX = _field.KEYED_MAX    # keys a keyed flavour can hold
_CAP = 1e30


def grid(name, w, h, E=0.0, G=0.0, cap=_CAP, min=0.0):
    """A W x H float32 grid flavour; E evaporates, G diffuses (4-neighbour) per tick."""
    return ("grid", name, w, h, E, G, cap, min)


def keyed(name, capacity, E=0.0, cap=_CAP, min=0.0):
    """A sparse flavour of up to `capacity` keys (1-15 bytes) -> float."""
    return ("keyed", name, capacity, 0, E, 0.0, cap, min)


def _arena_bytes(specs, journal, depositors, watches):
    n = _field.base_size(journal, depositors, watches) + _field.ALIGN
    for s in specs:
        if s[0] == "grid":
            n += _field.grid_size(s[2], s[3]) + 3 * _field.ALIGN
        else:
            n += _field.keyed_size(s[2]) + _field.ALIGN
    return n


class Snapshot:
    """An immutable, content-addressed field state: `data` is the FORMAT.md byte string,
    validated on construction (FieldError names what is wrong with bad bytes)."""

    def __init__(self, data):
        data = bytes(data)
        info = _field.snap_info(data)
        self.data = data
        self.tick = info[2]
        self.seq = info[3]
        self.digest = info[5]

    def hex(self, n=8):
        return "".join("%02x" % b for b in self.digest[:n])

    def __eq__(self, other):
        return isinstance(other, Snapshot) and other.digest == self.digest

    def __hash__(self):
        return hash(self.digest)

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return "<Snapshot tick=%d %s %d B>" % (self.tick, self.hex(), len(self.data))


class Field(_field.Field):
    """A field of named flavours: Field([grid('food', 64, 64, E=0.1, G=0.5), ...]).

    Its memory is one block of the GC heap, sized from the flavours declared here and
    held for the life of the object (see loci/field/README.md, "In the guest")."""

    def __init__(self, flavours=(), journal=1024, depositors=64, watches=16, check=False):
        specs = [tuple(s) for s in flavours]
        super().__init__(_arena_bytes(specs, journal, depositors, watches), journal,
                         depositors, watches)
        self.sizes = (journal, depositors, watches)
        for s in specs:
            if s[0] == "grid":
                self.add_grid(s[1], s[2], s[3], s[4], s[5], s[6], s[7])
            elif s[0] == "keyed":
                self.add_keyed(s[1], s[2], s[4], s[6], s[7])
            else:
                raise FieldError("unknown flavour kind %r" % (s[0],))
        if check:
            self.set_check(True)

    @classmethod
    def from_snapshot(cls, snap, journal=1024, depositors=64, watches=16):
        """A new field with the snapshot's flavours and state."""
        snap = snap if isinstance(snap, Snapshot) else Snapshot(snap)
        specs = [(k, n, w, h, e, g, c, m) for (n, k, w, h, e, g, c, m)
                 in _field.snap_layout(snap.data)]
        f = cls(specs, journal, depositors, watches)
        f.restore(snap)
        return f

    def __repr__(self):
        parts = []
        for t in self.flavours():
            if t[1] == "grid":
                parts.append("%s %dx%d" % (t[0], t[2], t[3]))
            else:
                parts.append("%s keyed %d" % (t[0], t[2]))
        return "<Field t=%d: %s>" % (self.tick_count(), ", ".join(parts))

    def names(self):
        return [t[0] for t in self.flavours()]

    def kind(self, name):
        for t in self.flavours():
            if t[0] == name:
                return t[1]
        raise KeyError("unknown flavour %r" % (name,))

    def snap(self):
        return Snapshot(self.snapshot())

    def restore(self, snap):
        """Back to a snapshot's state; the layout must match (FieldError otherwise)."""
        self.load(snap.data if isinstance(snap, Snapshot) else snap)

    def replay(self, snap):
        """A new field: `snap` plus this field's journal since it; same digest as self."""
        snap = snap if isinstance(snap, Snapshot) else Snapshot(snap)
        dst = Field.from_snapshot(snap, *self.sizes)
        dst.replay_from(self, snap.data)
        return dst

    def tick_count(self):
        return self.info()["tick"]

    def stats(self):
        """Per flavour: mass, entropy (bits), hottest cells/keys; and the journal."""
        out = {}
        for name, kind, w, h, e, g, _cap, _mn, count in self.flavours():
            out[name] = {"kind": kind, "size": (w, h) if kind == "grid" else (count, w),
                         "mass": self.total(name), "entropy": self.entropy(name),
                         "top": self.topk(name, 3), "E": e, "G": g}
        i = self.info()
        out["journal"] = {"next": i["journal_next"], "lost": i["journal_lost"],
                          "cap": i["journal_cap"]}
        return out


def diff(a, b, limit=100):
    """(total, [(flavour name, where, value in a, value in b)]) for two snapshots."""
    a = a.data if isinstance(a, Snapshot) else a
    b = b.data if isinstance(b, Snapshot) else b
    names = [t[0] for t in _field.snap_layout(a)]
    total, rows = _field.diff(a, b, limit)
    return total, [(names[r[0]], r[1], r[2], r[3]) for r in rows]
