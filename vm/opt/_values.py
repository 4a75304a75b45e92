# SPDX-License-Identifier: MIT
# Copies and comparison of the values a replay passes in and gets back (the equivalence
# gate, vm/opt/_gates.py): what can be copied faithfully, and when two results are the same.
import _rw

VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes, range)


def clone(x, depth=0):
    # A copy the function may mutate freely, as a 1-tuple; None when x is not something
    # the gate can copy faithfully (then the recorded call is not replayed).
    if depth > 8:
        return None
    t = type(x)
    if t in VALUE_TYPES:
        return (x,)
    if t in (tuple, list, set):
        items = []
        for v in x:
            c = clone(v, depth + 1)
            if c is None:
                return None
            items.append(c[0])
        return (t(items),)
    if t is bytearray:
        return (bytearray(x),)
    if t is CELL:
        # A closure's free variable, as its bytecode function takes it: a new cell holding
        # a copy, so the replay writes the copy and not the live closure's variable.
        c = clone(_rw.cell_get(x), depth + 1)
        return None if c is None else (_rw.cell(c[0]),)
    make = STAND_INS.get(t)
    if make is not None:
        # A live object a replay must not touch (a Mesh, for a colony's env callback):
        # the stand-in registered for its type answers reads and records writes.
        return (make(x),)
    if getattr(t, "REPLAY", False):
        # A stand-in that knows how to copy itself (the ctx a Locus's calls are replayed
        # with, loci/python/opt_locus.py): what it answered and recorded is its state.
        return (x.copy(),)
    if t is dict:
        d = {}
        for k, v in x.items():
            c = clone(v, depth + 1)
            if c is None:
                return None
            d[k] = c[0]
        return (d,)
    return _clone_instance(x, t, depth)


CELL = type(_rw.cell(None))
# type -> a function making a stand-in (a REPLAY object) for a live object of that type;
# loci/python/opt_env.py registers the Mesh's.
STAND_INS = {}


def has_stand_in(args):
    # Whether a copy of args puts a stand-in in place of a live argument.
    return any(type(x) in STAND_INS or getattr(type(x), "REPLAY", False) for x in args)


def unanswered(args):
    # What a replay asked of a stand-in among args that the stand-in cannot answer (its
    # `missing`), or None. Such a replay proves nothing: old and new code would both
    # have failed at the same point.
    for x in args:
        if getattr(type(x), "REPLAY", False):
            why = getattr(x, "missing", None)
            if why is not None:
                return why
    return None


def _clone_instance(x, t, depth):
    # An instance of a Python class with no native base: a new object of the same class
    # with copies of its attributes (its __init__ is not run again).
    try:
        if t.__bases__ != (object,) or not isinstance(x.__dict__, dict):
            return None
        y = object.__new__(t)
        for k, v in x.__dict__.items():
            c = clone(v, depth + 1)
            if c is None:
                return None
            setattr(y, k, c[0])
        return (y,)
    except (AttributeError, TypeError):
        return None


def same(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is float and a != a:
        return b != b
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        # (MicroPython's dict views do not compare by content.)
        return len(a) == len(b) and all(k in b and same(a[k], b[k]) for k in a)
    if type(a) in VALUE_TYPES or type(a) in (set, bytearray):
        return a == b
    if type(a) is CELL:
        return same(_rw.cell_get(a), _rw.cell_get(b))
    if getattr(type(a), "REPLAY", False):
        return same(a.state(), b.state())
    try:
        return same(a.__dict__, b.__dict__)
    except AttributeError:
        return a == b
