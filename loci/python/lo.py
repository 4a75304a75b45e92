# SPDX-License-Identifier: MIT
# Console helpers for the trace field, for a person at the REPL (sized by console()):
# `from lo import *`, then help(), show('food'), top('food'), who(x, y), journal(), watch(...)
from field import REPL, Field, grid, keyed
from field import diff as _diff

__all__ = ["use", "demo", "show", "top", "at", "who", "journal", "watch", "stats", "snap",
           "diff", "restore", "colour", "deposit", "tick", "console", "view", "live",
           "entries", "help", "F"]

F = None            # the field the helpers look at (use() sets it)
_COLOUR = [16]      # 16-colour cells; colour(256) for xterm-256, colour(False) for ASCII


def help(topic=None):  # noqa: A001 - the REPL's help, shadowed on purpose
    """help(): a tour of LociOS; help('field') and the other topics (lo_help)."""
    import lo_help
    lo_help.help(topic)


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
    """Heat maps in the 16 colours every colour terminal has (on, the default), in
    xterm-256 colours (colour(256): finer, twice the bytes) or in ASCII shades (off)."""
    _COLOUR[0] = 256 if on == 256 else (16 if on else 0)


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


def console(cols=None, rows=None):
    """The console size the helpers draw for, (columns, rows). console() asks once (the
    screen console's size, the serial terminal's by a cursor-position report, 80x24 if
    it does not answer); console(True) asks again; console(100, 40) sets it."""
    import lo_page
    if cols is True:
        return lo_page.size(True)
    if cols is not None:
        lo_page.set_size(cols, rows if rows is not None else lo_page.size()[1])
    return lo_page.size()


def _grid_info(f, name):
    info = [t for t in f.flavours() if t[0] == name]
    if not info:
        raise KeyError("unknown flavour %r" % (name,))
    if info[0][1] != "grid":
        raise TypeError("%r is keyed: try top(%r)" % (name, name))
    return info[0][2], info[0][3]


def _zoom_region(f, name, w, h, zoom):
    # 1/zoom of each side, centred on the hottest cell, kept inside the grid.
    hot = f.topk(name, 1)
    cx, cy = hot[0][0] if hot else (w // 2, h // 2)
    zw, zh = max(1, w // zoom), max(1, h // zoom)
    x0 = min(max(0, cx - zw // 2), w - zw)
    y0 = min(max(0, cy - zh // 2), h - zh)
    return x0, y0, zw, zh


def _show_keyed(f, name, width, rows):
    # A keyed flavour has no space to draw: its highest keys as bars instead.
    top_ = f.topk(name, min(rows, 20))
    hi = top_[0][1] if top_ else 0
    lines = []
    for key, v in top_:
        n = int(v / hi * (width - 32) + 0.5) if hi > 0 else 0
        lines.append("%-16s %10s %s" % (key.decode(), _num(v), "#" * max(n, 1)))
    lines.append("%s keyed t=%d  %d keys shown  mass %s" % (
        name, f.tick_count(), len(top_), _num(f.total(name))))
    return lines


def view(name, width=None, rows=None, region=None, zoom=None, ascii=None, fill=False,
         clear=False):
    """The lines show() prints (see show)."""
    import lo_page
    import lo_view
    f = _f()
    cols, lines = lo_page.size()
    width = width or cols - 1       # the last column is left free: some terminals wrap
    rows = rows or lines - 3        # room for the legend and the prompt
    if f.kind(name) == "keyed":
        return _show_keyed(f, name, width, rows)
    w, h = _grid_info(f, name)
    if zoom and not region:
        region = _zoom_region(f, name, w, h, int(zoom))
    x0, y0, rw, rh = region if region else (0, 0, w, h)
    if rw <= 0 or rh <= 0 or x0 < 0 or y0 < 0 or x0 + rw > w or y0 + rh > h:
        raise ValueError("region %r is not inside %dx%d" % (region, w, h))
    c, n = lo_view.fit(rw, rh, width, rows, zoomed=region is not None, fill=fill)

    def area(x, y, ww, hh):
        return f.region(name, x, y, ww, hh)

    means = lo_view.sample(area, x0, y0, rw, rh, c, n)
    colour_ = _COLOUR[0] if ascii is None else (0 if ascii else _COLOUR[0] or 16)
    out, lo_, hi = lo_view.picture(means, colour_, clear)
    where = "" if not region else "  region %d,%d %dx%d" % (x0, y0, rw, rh)
    out.append("%s %dx%d t=%d%s  min %s  max %s  mass %s" % (
        name, w, h, f.tick_count(), where, _num(lo_), _num(hi), _num(f.total(name))))
    # Grid cells per character, across and down: what one character stands for.
    out.append("%s  cell %.2gx%.2g" % (lo_view.scale(lo_, hi, colour_, _num), rw / c, rh / n))
    return out


def show(name, width=None, rows=None, region=None, zoom=None, ascii=None, fill=False):
    """Draws a grid flavour as a heat map of block means, sized to the console, with a
    legend and its scale; a keyed flavour as bars for its highest keys.
    region=(x, y, w, h) or zoom=k (1/k of each side around the hottest cell) magnify
    part of it; ascii=True draws shades for a terminal without colour; fill=True
    stretches the map over the whole console."""
    print("\n".join(view(name, width, rows, region, zoom, ascii, fill)))


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


def _locus_name(i):
    # A depositor id is a Locus id when a mesh owns the field: name it.
    import lo_mesh
    import mesh
    m = mesh.LAST[0]
    r = m.loci.get(i) if m is not None and m.field is F else None
    return lo_mesh.label(m, i, 16) if r is not None else _who(i)


def entries(n=10, locus=None, kind=None, flavour=None):
    """The last n journal records that match, oldest first, as dicts: seq, tick, kind,
    locus, flavour, where, amount, raw (the tuple field.journal(seq) returns). Filters
    look through the whole ring."""
    f = _f()
    i = f.info()
    names = f.names()
    first = i["journal_oldest"]
    if locus is None and kind is None and flavour is None:
        first = max(first, i["journal_next"] - n)
    out = []
    for q in range(first, i["journal_next"]):
        rec = f.journal(q)
        seq, t, k, fl, where, amount, dep, flags = rec
        if (kind is not None and k != kind) or (flavour is not None and names[fl] != flavour):
            continue
        if locus is not None and (k != "deposit" or dep != locus):
            continue
        out.append({"seq": seq, "tick": t, "kind": k, "locus": dep if k == "deposit" else None,
                    "flavour": names[fl], "where": where, "amount": amount, "raw": rec})
    return out[-n:] if n else []


def journal(n=10, locus=None, kind=None, flavour=None, raw=False):
    """The last n field journal records (at most 20) with named fields: tick, kind, the
    Locus that deposited, flavour, where, amount. journal(locus=7), journal(kind='watch'),
    journal(flavour='food') filter; raw=True prints the tuples (F.journal(seq) returns
    them). Says how many records the ring has lost."""
    f = _f()
    i = f.info()
    got = entries(min(n, 20), locus, kind, flavour)
    if raw:
        for d in got:
            print(" ", d["raw"])
    else:
        print("%6s %5s %-8s %-16s %-10s %-12s %10s" % ("seq", "tick", "kind", "Locus",
                                                      "flavour", "where", "amount"))
    for d in [] if raw else got:
        w, k = d["where"], d["kind"]
        if k == "deposit":
            w = w.decode() if isinstance(w, bytes) else "(%d, %d)" % w
            print("%6d %5d %-8s %-16s %-10s %-12s %10s" % (
                d["seq"], d["tick"], k, _locus_name(d["locus"]), d["flavour"][:10],
                w[:12], _num(d["amount"])))
        elif k == "watch":
            print("%6d %5d %-8s %-16s %-10s crossed %s at %s" % (
                d["seq"], d["tick"], k, "watch %d" % w, d["flavour"][:10],
                "up" if d["raw"][7] else "down", _num(d["amount"])))
        else:
            print("%6d %5d %s" % (d["seq"], d["tick"], k))
    print("journal: %d records, %d lost to the ring (capacity %d)" % (
        i["journal_next"], i["journal_lost"], i["journal_cap"]))


def _frame(what, rows):
    # One picture of a live view, at most `rows` lines, each erased before it is drawn:
    # a flavour's heat map, or what a function prints.
    import lo_page

    import kernel
    if isinstance(what, str):
        return view(what, rows=rows - 2, clear=True)   # the legend takes 2 lines
    kernel.capture(True)
    lo_page._one_screen[0] = True
    try:
        what()
    finally:
        lo_page._one_screen[0] = False
        text, _lost = kernel.capture(False)
    return ["\x1b[K" + x for x in text.decode().replace("\r", "").rstrip("\n").split("\n")][:rows]


def live(what="trail", every=10, rounds=None):
    """Redraw a view in place every `every` ticks while the mesh runs (or, with no mesh,
    the field ticks), like top: what is a grid flavour's name or a function that prints
    (ps, stats, lambda: top('food')). Any key stops it, and so does Ctrl-C; rounds=N
    stops after N ticks."""
    import sys

    import lo_page
    import mesh
    m = mesh.LAST[0]
    m = m if m is not None and m.field is F else None
    done, drawn = 0, 0
    try:
        while True:
            # A frame and its status line fill all but the last row, where the cursor
            # waits: nothing scrolls, so going back up lands on the frame's first line.
            lines = _frame(what, lo_page.size()[1] - 2)
            lines.append("\x1b[Ktick %d%s  (any key stops)" % (
                _f().tick_count(), "" if m is None else ", round %d" % m.rounds))
            if drawn:
                sys.stdout.write("\x1b[%dF" % drawn)   # back to the first line drawn
            sys.stdout.write("\n".join(lines) + "\x1b[J\n")   # LF goes out as CR LF
            drawn = len(lines)
            if (rounds is not None and done >= rounds) or (m is not None and m.halted):
                break
            if lo_page.key(0) is not None:
                break
            for _ in range(every if rounds is None else min(every, rounds - done)):
                if m is not None:
                    m.round()
                else:
                    _f().tick()
            done += every if rounds is None else min(every, rounds - done)
    except KeyboardInterrupt:
        sys.stdout.write("\x1b[0m\n")
        print("stopped at tick %d" % _f().tick_count())


def watch(flavour=None, target=None, threshold=None, every=10, rounds=None):
    """watch('trail') or watch(ps): a live view, redrawn every `every` ticks until a key
    (see live). watch('food', (x0, y0, w, h), 5.0) or watch('work', 'key', 2.0) -> id
    sets a watchpoint; watch() lists the watchpoints."""
    f = _f()
    if flavour is not None and target is None:
        return live(flavour, every, rounds)
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


# The field on /data: save(name), load(name), autosave(ticks, keep), saves().
from lo_store import autosave, load, save, saves  # noqa: E402,F401

__all__ += ["save", "load", "autosave", "saves"]

# The mesh's console commands (ps, spawn, kill, caps, audit, pause, step, resume, run...).
from lo_mesh import *  # noqa: E402,F403
from lo_mesh import __all__ as _mesh_all  # noqa: E402

__all__ += _mesh_all
