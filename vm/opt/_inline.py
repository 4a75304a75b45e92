# SPDX-License-Identifier: MIT
# The small functions a twin may inline (vm/patches/0030): the functions fn calls by a
# global name, and the methods of the classes in its globals that it calls by name, whose
# def the image keeps and whose body is one returned expression (or a choice of two: the
# emitter decides the shape). Each is named to the emitter with the very object a call
# must find: the twin compares the function about to be called with it before it runs
# the body instead (vm/opt/README.md, "Inlined calls").
import _rw

import opt

from . import _gates, _source

MAX_CALLEES = 8   # callees named for one twin
MAX_SOURCE = 1024  # characters of a callee's def: only small ones have an inlinable shape
_FUNCTION = _gates.PLAIN[0]


def method_names(src):
    """The names src calls as methods (`x.name(`), strings and comments skipped."""
    out = set()
    i, n = 0, len(src)
    while i < n:
        j = _source.past_literal(src, i)
        if j != i:
            i = j
            continue
        c = src[i]
        if c == ".":
            j = i + 1
            while j < n and (src[j].isalpha() or src[j].isdigit() or src[j] == "_"):
                j += 1
            k = j
            while k < n and src[k] == " ":
                k += 1
            if j > i + 1 and k < n and src[k] == "(" and not src[i + 1].isdigit():
                out.add(src[i + 1:j])
            i = j
            continue
        i += 1
    return out


def _methods(g, wanted):
    # {name: the one plain function the classes in g hold by that name}: a name two
    # different functions answer to is left out (the guard could serve only one).
    found = {}
    for v in list(g.values()):
        if type(v) is not type:
            continue
        for name in wanted:
            try:
                f = getattr(v, name)
            except AttributeError:
                continue
            if type(f) is _FUNCTION:
                found.setdefault(name, set()).add(f)
    return {k: next(iter(fs)) for k, fs in found.items() if len(fs) == 1}


def _callee_source(fn, callee, profile):
    # callee's def if it may be compiled into fn's twin, else None: kept in the image,
    # small, holding nothing the twins refuse, sharing fn's globals, and, compiled to
    # bytecode, passing the verifier under fn's profile with exactly the names its running
    # code uses (so the body inlined is the code the call would run, and holds no other
    # capability).
    if type(callee) is not _FUNCTION or callee.__globals__ is not fn.__globals__:
        return None
    try:
        src = _source.def_source(callee)
    except (TypeError, ValueError):
        return None
    if src is None or len(src) > MAX_SOURCE or "return" not in src:
        return None
    for word in opt.NATIVE_REFUSE:
        if word in src:
            return None
    try:
        if _gates.source_refusal(callee, src, profile) is not None:
            return None
    except Exception:  # noqa: BLE001 - a callee whose source does not compile is not inlined
        return None
    return src


def callees(fn, src, profile):
    """[(method, name, def name, function, def source)]: what fn's twin may inline."""
    g = fn.__globals__
    out = []
    try:
        loaded = _gates.names(fn)[0]
    except (TypeError, ValueError):
        return out
    wanted = [(False, n, g.get(n)) for n in loaded]
    wanted += [(True, n, f) for n, f in sorted(_methods(g, method_names(src)).items())]
    for method, name, f in wanted:
        if len(out) >= MAX_CALLEES:
            break
        csrc = _callee_source(fn, f, profile)
        if csrc is not None:
            def_name = "_inline_callee_%d_" % len(out)
            csrc = "def " + def_name + csrc[csrc.index("("):]
            out.append((method, name, def_name, f, csrc))
    return out


def made():
    """Calls inlined by native code compiled since boot."""
    return _rw.inline_stats()


def note(inline, n):
    # The journal's words for a twin compiled with these callees that inlined n calls.
    return "calls inlined: %d (callees: %s)" % (
        n, ", ".join(("." if c[0] else "") + c[1] for c in inline))
