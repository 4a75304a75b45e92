# SPDX-License-Identifier: MIT
# Locus manifests: plain data checked field by field before anything is granted or
# compiled. A bad manifest is refused with a ValueError that names the field.
import _mesh
from locus_text import quoted, short

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
IDENT_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
IDENT_CHARS = IDENT_START + "0123456789"
MODULE_MAX = 64             # characters of a `module` field
OPS = ("sense", "deposit")
RESTART = ("never", "on-failure")
# cycles: TSC cycles per step, so that a long C built-in is stopped (vm/patches/0014).
# The colonies' Loci on default budgets step in at most 186,000 (-icount, where the TSC
# is 1 GHz: loci/README.md), so this is over 250 times the largest; under TCG without
# -icount the TSC is the host's (2.6 GHz here) and a guest instruction costs about 6 of
# its cycles, still 45 times. Garbage collections (0.2 s) are not counted against it
# (vm/budget). 0 = no limit, the widest (a child may not ask for it under a parent that
# has a limit).
CYCLES_DEFAULT = 50000000
# kept: heap bytes a Locus keeps from one step to the next (ctx.mem and its namespace,
# its code included), measured by _budget.kept, whose walk stops at 2 MiB.
BUDGET_DEFAULT = {"ops": 5000, "alloc": 32768, "deposits": 64, "cycles": CYCLES_DEFAULT,
                  "kept": 65536}
BUDGET_MAX = {"ops": 10000000, "alloc": 16 << 20, "deposits": 1000000, "cycles": 1 << 40,
              "kept": 1 << 21}
KEYS = ("name", "code", "module", "caps", "budget", "restart", "attend", "wake", "args")
CAP_KEYS = ("flavours", "ops", "region", "keys", "rate", "expires", "spawn", "io", "mem",
            "rewrite")
ARGS_DEPTH = 8


def _bad(field, why):
    raise ValueError("manifest: field '%s': %s" % (field, why))


def _int(field, v, lo, hi):
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        _bad(field, "must be an int in %d..%d" % (lo, hi))
    return v


def _num(field, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        _bad(field, "must be a number")
    return float(v)


def _rect(field, v, fl):
    if not isinstance(v, (tuple, list)) or len(v) != 4:
        _bad(field, "must be (x0, y0, w, h)")
    x0, y0, w, h = [_int(field, c, 0, 4096) for c in v]
    if w < 1 or h < 1 or x0 + w > fl[1] or y0 + h > fl[2]:
        _bad(field, "must be a non-empty rectangle inside the %dx%d grid" % (fl[1], fl[2]))
    return (x0, y0, w, h)


def _plain(field, v, depth=0):
    """A private copy of plain data, so no two Loci share a mutable object."""
    if depth > ARGS_DEPTH:
        _bad(field, "nested too deeply")
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    if isinstance(v, tuple):
        return tuple(_plain(field, x, depth + 1) for x in v)
    if isinstance(v, list):
        return [_plain(field, x, depth + 1) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                _bad(field, "keys must be str")
            out[k] = _plain("%s.%s" % (field, k), x, depth + 1)
        return out
    _bad(field, "must be plain data (None, bool, int, float, str, bytes, tuple, list, dict)")


def _ident(s):
    return s != "" and s[0] in IDENT_START and all(ch in IDENT_CHARS for ch in s)


def _module(v):
    """A frozen module's dotted name, optionally ':ATTR': it goes to __import__."""
    if not isinstance(v, str) or not 1 <= len(v) <= MODULE_MAX:
        return False
    mod, colon, attr = v.partition(":")
    if colon and not _ident(attr):
        return False
    return all(_ident(p) for p in mod.split("."))


def _key(field, k):
    if isinstance(k, str):
        k = k.encode()
    if not isinstance(k, bytes) or not 1 <= len(k) <= 15:
        _bad(field, "a key must be 1..15 bytes")
    return k


def _cap(i, c, flavours):
    field = "caps[%d]" % i
    if not isinstance(c, dict):
        _bad(field, "must be a dict")
    for k in c:
        if k not in CAP_KEYS:
            _bad("%s.%s" % (field, short(k, 24)), "unknown (known: %s)" % ", ".join(CAP_KEYS))
    out = {"flavours": (), "ops": (), "region": None, "keys": None, "rate": -1.0,
           "expires": None, "spawn": False, "io": None, "mem": None, "rewrite": False}
    fls = c.get("flavours", ())
    if not isinstance(fls, (tuple, list)):
        _bad(field + ".flavours", "must be a list of flavour names")
    for f in fls:
        if f not in flavours:
            _bad(field + ".flavours", "no flavour %s in this field" % quoted(f, 40))
    out["flavours"] = tuple(fls)
    ops = c.get("ops", ())
    if not isinstance(ops, (tuple, list)) or any(o not in OPS for o in ops):
        _bad(field + ".ops", "must be a list drawn from %s" % (OPS,))
    if fls and not ops:
        _bad(field + ".ops", "flavours granted with no operation")
    out["ops"] = tuple(ops)
    if c.get("region") is not None:
        grids = [flavours[f] for f in fls if flavours[f][0] == "grid"]
        if not grids:
            _bad(field + ".region", "needs a grid flavour")
        for g in grids:
            out["region"] = _rect(field + ".region", c["region"], g)
    if c.get("keys") is not None:
        ks = c["keys"]
        if not isinstance(ks, (tuple, list)) or not 1 <= len(ks) <= 4:
            _bad(field + ".keys", "must be a list of 1..4 key prefixes")
        out["keys"] = tuple(_key(field + ".keys", k) for k in ks)
    if "rate" in c and c["rate"] is not None:
        out["rate"] = _num(field + ".rate", c["rate"])
    if c.get("expires") is not None:
        out["expires"] = _int(field + ".expires", c["expires"], 1, 1 << 40)
    for flag in ("spawn", "rewrite"):
        if flag in c:
            if not isinstance(c[flag], bool):
                _bad(field + "." + flag, "must be True or False")
            out[flag] = c[flag]
    for rng in ("io", "mem"):
        if c.get(rng) is not None:
            v = c[rng]
            if not isinstance(v, (tuple, list)) or len(v) != 2:
                _bad(field + "." + rng, "must be (lo, hi)")
            lo = _int(field + "." + rng, v[0], 0, (1 << 64) - 1)
            hi = _int(field + "." + rng, v[1], lo, (1 << 64) - 1)
            out[rng] = (lo, hi)
    return out


def _attend(a, flavours, field="attend"):
    if not isinstance(a, dict) or "flavour" not in a:
        _bad(field, "must be a dict with a 'flavour'")
    f = a["flavour"]
    if f not in flavours:
        _bad(field + ".flavour", "no flavour %s in this field" % quoted(f, 40))
    kind, w, h = flavours[f]
    where = [k for k in ("at", "key", "region") if k in a]
    if len(where) != 1:
        _bad(field, "needs exactly one of 'at', 'key', 'region'")
    if where[0] == "at":
        p = a["at"]
        if kind != "grid" or not isinstance(p, (tuple, list)) or len(p) != 2:
            _bad(field + ".at", "must be (x, y) on a grid flavour")
        x = _int(field + ".at", p[0], 0, w - 1)
        y = _int(field + ".at", p[1], 0, h - 1)
        return {"flavour": f, "at": (x, y)}
    if where[0] == "key":
        if kind != "keyed":
            _bad(field + ".key", "needs a keyed flavour")
        return {"flavour": f, "key": _key(field + ".key", a["key"])}
    if kind != "grid":
        _bad(field + ".region", "needs a grid flavour")
    return {"flavour": f, "region": _rect(field + ".region", a["region"], flavours[f])}


def check(m, flavours):
    """The normalised manifest; `flavours` maps name -> (kind, w, h)."""
    # The common manifests are checked in C (loci/mod/mesh_manifest.c), which builds
    # what check_in_python builds, or answers None and leaves the manifest to it.
    out = _mesh.manifest(m, flavours, BUDGET_DEFAULT, BUDGET_MAX)
    return out if out is not None else check_in_python(m, flavours)


def check_in_python(m, flavours):
    """What a manifest may say: check()'s definition, and its errors."""
    if not isinstance(m, dict):
        raise ValueError("manifest: must be a dict")
    for k in m:
        if k not in KEYS:
            _bad(short(k, 24), "unknown (known: %s)" % ", ".join(KEYS))
    name = m.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 24 or any(
            ch not in NAME_CHARS for ch in name):
        _bad("name", "must be 1..24 characters of [A-Za-z0-9_.-]")
    if ("code" in m) == ("module" in m):
        _bad("code", "give exactly one of 'code' (source) or 'module' (frozen module)")
    if "code" in m and (not isinstance(m["code"], str) or not m["code"]):
        _bad("code", "must be Python source text")
    if "module" in m and not _module(m["module"]):
        _bad("module", "must be 'package.module' or 'package.module:ATTR' (identifiers)")
    caps = m.get("caps", ())
    if not isinstance(caps, (tuple, list)) or len(caps) > 8:
        _bad("caps", "must be a list of at most 8 grants")
    budget = dict(BUDGET_DEFAULT)
    b = m.get("budget", {})
    if not isinstance(b, dict):
        _bad("budget", "must be a dict")
    for k, v in b.items():
        if k not in BUDGET_DEFAULT:
            _bad("budget." + short(k, 24), "unknown (known: %s)" % ", ".join(BUDGET_DEFAULT))
        budget[k] = _int("budget." + k, v, 0 if k == "cycles" else 1, BUDGET_MAX[k])
    restart = m.get("restart", "never")
    if restart not in RESTART:
        _bad("restart", "must be one of %s" % (RESTART,))
    out = {"name": name, "code": m.get("code"), "module": m.get("module"),
           "caps": [_cap(i, c, flavours) for i, c in enumerate(caps)],
           "budget": budget, "restart": restart, "attend": None, "wake": None,
           "args": _plain("args", m.get("args", {}))}
    if m.get("attend") is not None:
        out["attend"] = _attend(m["attend"], flavours)
    if m.get("wake") is not None:
        w = m["wake"]
        if not isinstance(w, dict) or "above" not in w:
            _bad("wake", "must be a dict with 'above' and the attend keys")
        a = dict(w)
        above = _num("wake.above", a.pop("above"))
        out["wake"] = _attend(a, flavours, "wake")
        out["wake"]["above"] = above
    return out
