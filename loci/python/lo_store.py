# SPDX-License-Identifier: MIT
# The field on /data (the LOCIDATA partition): save(name) / load(name), autosave every N
# ticks keeping the last K, and the restore at boot. Files are in /data/field:
#   NAME.snap      a snapshot (loci/field/FORMAT.md)
#   NAME.journal   the journal export from the previous save of the same field to this one
#   NAME.prev.*    what the save before the last one of NAME wrote (load falls back to it)
#   auto-NNNNNNNN.*  autosaves, numbered in the order written; `autosave` their settings
# Every file is written to NAME.tmp, closed, then renamed over the old one: littlefs
# renames atomically, so a power cut leaves the old file or the new one, never half.
import os

import field

DIR = "/data/field"
CONFIG = DIR + "/autosave"
AUTO = "auto-"
_AUTO = {"ticks": 0, "keep": 3, "boot": True, "next": 0, "field": None, "saved": 0}


def _lo():
    import lo
    return lo


def _why(e):
    # MicroPython prints OSError(28, "text") as a tuple: the text, or the errno alone.
    a = getattr(e, "args", ())
    return a[1] if isinstance(e, OSError) and len(a) > 1 else str(e)


def _need_data():
    import storage
    if not storage.mounted:
        raise OSError(19, "no /data: the LOCIDATA partition is not mounted (README, "
                          "'Your data')")
    try:
        os.mkdir(DIR)
    except OSError as e:
        if e.errno != 17:   # EEXIST
            raise OSError(e.errno, "cannot make %s: %s" % (DIR, e)) from None


def _check_name(name):
    ok = isinstance(name, str) and 0 < len(name) <= 40 and name[0] != "."
    for c in name if ok else "":
        if not (c.isalpha() or c.isdigit() or c in "-_."):
            ok = False
    if not ok or name.endswith(".prev") or name.endswith(".tmp"):
        raise ValueError("save name %r: 1-40 letters, digits, '-', '_' or '.', not "
                         "ending in .prev or .tmp" % (name,))


def _storage():
    import storage
    return storage


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def _sync():
    import storage
    sync = getattr(storage, "sync", None)
    if sync is not None:
        sync()


def _write_tmp(path, data):
    """`data` to path.tmp, flushed and closed; returns that name. A full disk removes
    the temporary file and raises OSError(28) naming the file."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
    except OSError as e:
        _remove(tmp)
        if e.errno == 28:
            raise OSError(28, "/data is full: %s needs %d bytes (nothing was replaced)"
                          % (path, len(data))) from None
        raise OSError(e.errno, "writing %s: %s" % (tmp, e)) from None
    return tmp


def _write(path, data):
    os.rename(_write_tmp(path, data), path)


def _rotate(base):
    # The last save of `base` becomes base.prev, so that a damaged newest one still has
    # an older one to fall back to.
    for ext in (".snap", ".journal"):
        if _storage().exists(base + ext):
            os.rename(base + ext, base + ".prev" + ext)


def _save(f, base, rotate):
    snap = f.snap()
    jrn = f.journal_bytes(getattr(f, "_saved_seq", 0), snap.digest)
    jtmp = _write_tmp(base + ".journal", jrn)
    try:
        stmp = _write_tmp(base + ".snap", snap.data)
    except OSError:
        _remove(jtmp)
        raise
    if rotate:
        _rotate(base)
    os.rename(jtmp, base + ".journal")
    os.rename(stmp, base + ".snap")
    _sync()
    f._saved_seq = snap.seq
    return snap


def save(name):
    """Writes the field lo shows (lo.F) to /data/field/NAME.snap, with NAME.journal (the
    journal since its previous save); the last save of NAME is kept as NAME.prev."""
    _check_name(name)
    f = _lo()._f()
    _need_data()
    s = _save(f, DIR + "/" + name, True)
    print("saved %s: tick %d, %d bytes, digest %s" % (name, s.tick, len(s), s.hex()))
    return s


def _read(path):
    # read(n) of the known size: read() without one grows its buffer step by step, 60
    # times slower for a 1 MB snapshot (1.0 G guest cycles against 23 M).
    n = os.stat(path)[6]
    with open(path, "rb") as fh:
        return fh.read(n)


def _autos():
    # Autosave names, oldest first: numbered in the order they were written (not by
    # tick: a field restored or made anew starts its ticks again), zero-padded to sort.
    return sorted(n[:-5] for n in os.listdir(DIR) if n.startswith(AUTO) and n.endswith(".snap")
                  and n[len(AUTO):-5].isdigit())


def _candidates(name):
    if name is None:
        return list(reversed(_autos()))
    _check_name(name)
    return [name, name + ".prev"]


def _first_valid(name, quiet=False):
    """(name, Snapshot) of the first candidate whose bytes check (CRC, rules, digest);
    a damaged one is skipped with a message."""
    tried = []
    for c in _candidates(name):
        path = DIR + "/" + c + ".snap"
        try:
            data = _read(path)
        except OSError as e:
            tried.append("%s: %s" % (c, "missing" if e.errno == 2 else _why(e)))
            continue
        try:
            return c, field.Snapshot(data)
        except ValueError as e:
            tried.append("%s: %s" % (c, e))
            if not quiet:
                print("field: %s is damaged (%s); skipped" % (path, e))
    if name is None:
        raise OSError(2, "no valid autosave in %s%s" % (DIR, (": " + "; ".join(tried))
                                                         if tried else ""))
    raise OSError(2, "no saved field %r in %s (%s)" % (name, DIR, "; ".join(tried)))


def _load(name, quiet):
    lo = _lo()
    _need_data()
    got, snap = _first_valid(name, quiet)
    f = lo.F
    try:
        if f is None:
            raise field.FieldError("no field")
        f.restore(snap)
    except field.FieldError:
        f = lo.use(field.Field.from_snapshot(snap))
    f._saved_seq = f.info()["journal_next"]
    return got, snap, f


def load(name=None, quiet=False):
    """Reads /data/field/NAME.snap (NAME.prev if NAME is damaged; name=None: the newest
    valid autosave) into lo.F: in place if lo.F has the same flavours (a mesh using it
    goes on with the restored state), else into a new Field. Returns lo.F."""
    got, snap, f = _load(name, quiet)
    if not quiet:
        print("loaded %s: tick %d, digest %s" % (got, snap.tick, snap.hex()))
    return f


def saves():
    """[(name, tick, bytes, 'ok' or what is wrong)] of /data/field, oldest name first."""
    _need_data()
    out = []
    for n in sorted(os.listdir(DIR)):
        if not n.endswith(".snap"):
            continue
        data = _read(DIR + "/" + n)
        try:
            s = field.Snapshot(data)
            out.append((n[:-5], s.tick, len(data), "ok"))
        except ValueError as e:
            out.append((n[:-5], None, len(data), str(e)))
    return out


# ---- autosave -------------------------------------------------------------------------
def _auto_save(f):
    names = _autos()
    number = int(names[-1][len(AUTO):]) + 1 if names else 1
    _save(f, DIR + "/%s%08d" % (AUTO, number), False)
    _AUTO["saved"] += 1
    # Only now that the new one is written are the oldest beyond `keep` removed.
    names = _autos()
    for n in names[:max(0, len(names) - _AUTO["keep"])]:
        _remove(DIR + "/" + n + ".snap")
        _remove(DIR + "/" + n + ".journal")


def _hook(f):
    native = f.tick   # the class's method, bound (the hook is not installed yet)

    def tick(n=1):
        t = native(n)
        if t >= _AUTO["next"] and _AUTO["field"] is f:
            _AUTO["next"] = t - t % _AUTO["ticks"] + _AUTO["ticks"]
            try:
                _auto_save(f)
            except (OSError, MemoryError) as e:
                print("autosave at tick %d failed: %s" % (t, _why(e)))
        return t
    return tick


def _unhook():
    f = _AUTO["field"]
    _AUTO["field"] = None
    if f is not None:
        try:
            del f.tick
        except (AttributeError, KeyError):
            pass


def _write_config(ticks, keep, boot):
    _write(CONFIG, ("ticks=%d keep=%d boot=%d\n" % (ticks, keep, 1 if boot else 0)).encode())


def config():
    """The autosave settings recorded in /data ({'ticks', 'keep', 'boot'}), or None."""
    try:
        text = _read(CONFIG).decode()
    except OSError:
        return None
    d = {}
    for part in text.split():
        k, _, v = part.partition("=")
        if k in ("ticks", "keep", "boot") and v.isdigit():
            d[k] = int(v)
    if len(d) != 3 or d["ticks"] <= 0 or d["keep"] <= 0:
        return None
    d["boot"] = bool(d["boot"])
    return d


def autosave(ticks=100, keep=3, boot=True):
    """Every `ticks` ticks of lo.F (however it ticks: tick(), a mesh's round()), save it
    as /data/field/auto-NNNNNNNN (numbered in order) and keep the newest `keep`.
    boot=True also restores the newest valid one when LociOS next starts. autosave(0) or
    autosave(None) stops both."""
    if not ticks:
        _unhook()
        _AUTO["ticks"] = 0
        import storage
        if storage.mounted:
            _remove(CONFIG)
        print("autosave off")
        return None
    if not isinstance(ticks, int) or ticks < 0 or not isinstance(keep, int) or keep < 1:
        raise ValueError("autosave(ticks=N, keep=K): N >= 0 ticks and K >= 1 snapshots")
    f = _lo()._f()
    _need_data()
    _write_config(ticks, keep, boot)
    _arm(f, ticks, keep, boot)
    print("autosave every %d ticks to %s, keeping %d%s" % (
        ticks, DIR, keep, "; restored at boot" if boot else ""))


def _arm(f, ticks, keep, boot):
    _unhook()
    _AUTO.update(ticks=ticks, keep=keep, boot=boot, field=f)
    t = f.tick_count()
    _AUTO["next"] = t - t % ticks + ticks
    f.tick = _hook(f)   # an instance attribute: found before the class's method


def boot(quiet=False):
    """At start-up (port/modules/_boot.py): if autosave recorded boot=1, the newest valid
    autosave becomes lo.F and autosave goes on with the same settings. One line says what
    was restored; nothing is printed when there is nothing to do."""
    import storage
    if not storage.mounted:
        return None
    cfg = config()
    if cfg is None or not cfg["boot"]:
        return None
    try:
        got, snap, f = _load(None, quiet)
    except (OSError, ValueError, MemoryError) as e:
        print("field: no restore at boot: %s" % (_why(e),))
        return None
    _arm(f, cfg["ticks"], cfg["keep"], cfg["boot"])
    print("field: restored %s/%s.snap (tick %d, digest %s) into lo.F; autosave every %d "
          "ticks goes on (lo.autosave(0) stops it)" % (DIR, got, snap.tick, snap.hex(),
                                                      cfg["ticks"]))
    return f
