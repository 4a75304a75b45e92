# SPDX-License-Identifier: MIT
# Console helpers for the trace field, for a person at the serial REPL (80x24):
# `from lo import *`, then show('food'), top('food'), at(x, y), journal(), stats(), ...
from field import REPL, Field, grid, keyed
from field import diff as _diff

__all__ = ["use", "demo", "show", "top", "at", "who", "journal", "watch", "stats", "snap",
           "diff", "restore", "colour", "deposit", "tick", "F"]

F = None            # the field the helpers look at (use() sets it)
_COLOUR = [True]    # ANSI 256-colour cells; colour(False) for ASCII shades
SHADES = " .:-=+*#%@"
# Black -> dark red -> red -> orange -> yellow -> white, xterm-256 colour numbers.
RAMP = (16, 52, 88, 124, 160, 196, 202, 208, 214, 220, 226, 228, 230, 231)
WIDTH = 78
ROWS = 18


def use(f):
    """Make `f` the field the helpers show; returns it."""
    global F
    F = f
    return f


def _f():
    if F is None:
        raise RuntimeError("no field yet: use(Field([...])) or demo()")
    return F


def colour(on=True):
    """ANSI 256-colour heat maps (on) or ASCII shades (off)."""
    _COLOUR[0] = bool(on)


def _who(i):
    return "repl" if i == REPL else ("-" if i == 0 else str(i))


def _num(v):
    if v == 0:
        return "0"
    if 0.001 <= abs(v) < 100000:
        return "%.4g" % v
    return "%.3e" % v


def demo(seed=1, ticks=20, size=32):
    """A small field to look at: food and trail grids, a keyed 'work' layer."""
    f = use(Field([grid("food", size, size, E=0.02, G=0.2),
                   grid("trail", size, size, E=0.1, G=0.5, min=1e-4),
                   keyed("work", 64, E=0.05, min=0.01)]))
    s = seed
    for t in range(ticks):
        for _ in range(8):
            s = (s * 1103515245 + 12345) & 0x7FFFFFFF
            x, y = s % size, (s >> 8) % size
            f.deposit("trail", (x, y), 1.0 + (s >> 20) % 4, 100 + s % 3)
        f.deposit("food", (size // 4, size // 3), 20.0, 7)
        f.deposit("food", (3 * size // 4, 2 * size // 3), 10.0, 8)
        f.deposit("work", "task%d" % (t % 5), 1.0 + t % 3, 200 + t % 2)
        f.tick()
    return f


def deposit(flavour, where, amount, who=REPL):
    _f().deposit(flavour, where, amount, who)


def tick(n=1):
    return _f().tick(n)


def _blocks(f, name, width, rows):
    info = [t for t in f.flavours() if t[0] == name]
    if not info:
        raise KeyError("unknown flavour %r" % (name,))
    w, h = info[0][2], info[0][3]
    if info[0][1] != "grid":
        raise TypeError("%r is keyed: try top(%r)" % (name, name))
    # One character per block; a character is about twice as tall as wide.
    bw = max(1, -(-w // width))
    bh = max(1, -(-h // rows), bw * 2 if h > rows else 1)
    cols, lines = -(-w // bw), -(-h // bh)
    grid_ = []
    for r in range(lines):
        y0 = r * bh
        hh = min(bh, h - y0)
        row = []
        for c in range(cols):
            x0 = c * bw
            ww = min(bw, w - x0)
            row.append(f.region(name, x0, y0, ww, hh)[0] / (ww * hh))
        grid_.append(row)
    return grid_, w, h, bw, bh


def _show_keyed(f, name, width, rows):
    # A keyed flavour has no space to draw: its highest keys as bars instead.
    top_ = f.topk(name, min(rows, 20))
    hi = top_[0][1] if top_ else 0
    for key, v in top_:
        n = int(v / hi * (width - 32) + 0.5) if hi > 0 else 0
        print("%-16s %10s %s" % (key.decode(), _num(v), "#" * max(n, 1)))
    print("%s keyed t=%d  %d keys shown  mass %s" % (
        name, f.tick_count(), len(top_), _num(f.total(name))))


def show(name, width=WIDTH, rows=ROWS):
    """Draws a grid flavour as a heat map (block means), with a legend; a keyed flavour
    as bars for its highest keys."""
    f = _f()
    if f.kind(name) == "keyed":
        return _show_keyed(f, name, width, rows)
    g, w, h, bw, bh = _blocks(f, name, width, rows)
    lo_ = min(min(r) for r in g)
    hi = max(max(r) for r in g)
    span = hi - lo_
    out = []
    for row in g:
        if _COLOUR[0]:
            line = []
            for v in row:
                i = 0 if span <= 0 else int((v - lo_) / span * (len(RAMP) - 1) + 0.5)
                line.append("\x1b[48;5;%dm " % RAMP[i])
            out.append("".join(line) + "\x1b[0m")
        else:
            out.append("".join(
                SHADES[0 if span <= 0 else int((v - lo_) / span * (len(SHADES) - 1) + 0.5)]
                for v in row))
    print("\n".join(out))
    print("%s %dx%d t=%d  block %dx%d  min %s  max %s  mass %s" % (
        name, w, h, f.tick_count(), bw, bh, _num(lo_), _num(hi), _num(f.total(name))))


def top(name, k=10):
    """The k highest cells or keys of a flavour, with who deposited there last."""
    f = _f()
    k = min(k, 20)
    print(" #  %-16s %12s  %s" % ("where", "value", "last"))
    for i, (where, v) in enumerate(f.topk(name, k)):
        label = where.decode() if isinstance(where, bytes) else "(%d, %d)" % where
        print("%2d  %-16s %12s  %s" % (i + 1, label, _num(v), _who(f.last(name, where))))


def at(x, y):
    """Every grid flavour at one cell: value, pending state, last depositor."""
    f = _f()
    for t in f.flavours():
        if t[1] == "grid" and x < t[2] and y < t[3]:
            print("%-15s %12s  last %s" % (t[0], _num(f.sense(t[0], (x, y))),
                                            _who(f.last(t[0], (x, y)))))


def who(x, y=None, flavour=None):
    """Who made this trail? who(x, y) for grid cells, who('key') for keyed flavours:
    the last depositor per flavour and that depositor's totals."""
    f = _f()
    totals = f.depositors()
    for t in f.flavours():
        if flavour is not None and t[0] != flavour:
            continue
        if y is None and t[1] == "keyed":
            d = f.last(t[0], x)
        elif y is not None and t[1] == "grid" and x < t[2] and y < t[3]:
            d = f.last(t[0], (x, y))
        else:
            continue
        fi = f.names().index(t[0])
        c = [r for r in totals if r[0] == d and r[1] == fi]
        extra = " (%d deposits, %s in all)" % (c[0][2], _num(c[0][3])) if c else ""
        print("%-15s last %s%s" % (t[0], _who(d), extra))


def journal(n=10):
    """The last n journal records; says how many the ring has lost."""
    f = _f()
    i = f.info()
    names = f.names()
    first = max(i["journal_oldest"], i["journal_next"] - min(n, 20))
    for q in range(first, i["journal_next"]):
        seq, t, kind, fl, where, amount, dep, flags = f.journal(q)
        if kind == "deposit":
            w = where.decode() if isinstance(where, bytes) else "(%d, %d)" % where
            print("%6d t=%-5d deposit %-10s %-12s %10s by %s" % (
                seq, t, names[fl], w, _num(amount), _who(dep)))
        elif kind == "watch":
            print("%6d t=%-5d watch %d on %s crossed %s at %s" % (
                seq, t, where, names[fl], "up" if flags else "down", _num(amount)))
        else:
            print("%6d t=%-5d %s" % (seq, t, kind))
    print("journal: %d records, %d lost to the ring (capacity %d)" % (
        i["journal_next"], i["journal_lost"], i["journal_cap"]))


def watch(flavour=None, target=None, threshold=None):
    """watch('food', (x0, y0, w, h), 5.0) or watch('work', 'key', 2.0) -> id;
    watch() lists the watchpoints."""
    f = _f()
    if flavour is not None:
        return f.watch(flavour, target, threshold)
    names = f.names()
    for wid, fl, tgt, thr, crossings, metric, above in f.watches():
        print("%2d %-10s %-20s >= %-8s now %-10s %s, %d crossings" % (
            wid, names[fl], tgt, _num(thr), _num(metric), "above" if above else "below",
            crossings))


def stats():
    """Per flavour: mass, entropy, hottest cells; and journal loss."""
    s = _f().stats()
    j = s.pop("journal")
    print("%-12s %-6s %11s %8s  %s" % ("flavour", "kind", "mass", "entropy", "hottest"))
    for name in _f().names():
        d = s[name]
        hot = ", ".join((w.decode() if isinstance(w, bytes) else "%d,%d" % w) + "=" + _num(v)
                        for w, v in d["top"])
        print("%-12s %-6s %11s %8.3f  %s" % (name, d["kind"], _num(d["mass"]), d["entropy"],
                                              hot[:38]))
    print("tick %d; journal %d records, %d lost (capacity %d)" % (
        _f().tick_count(), j["next"], j["lost"], j["cap"]))


def snap():
    return _f().snap()


def diff(a, b, n=10):
    """Prints the cells/keys that differ between two snapshots (first n of them)."""
    total, rows = _diff(a, b, min(n, 20))
    for name, where, va, vb in rows:
        w = where.decode() if isinstance(where, bytes) else "(%d, %d)" % where
        print("%-12s %-16s %12s -> %-12s %+.4g" % (name, w, _num(va), _num(vb), vb - va))
    print("%d changed%s" % (total, " (first %d shown)" % len(rows) if total > len(rows) else ""))


def restore(s):
    _f().restore(s)


# The mesh's console commands (ps, spawn, kill, caps, audit, pause, step, resume, run...).
from lo_mesh import *  # noqa: E402,F403
from lo_mesh import __all__ as _mesh_all  # noqa: E402

__all__ += _mesh_all
