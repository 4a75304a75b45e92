# SPDX-License-Identifier: MIT
# Copies and comparison of the values a replay passes in and gets back (the equivalence
# gate, vm/opt/_gates.py): what can be copied faithfully, and when two results are the same.

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
    if getattr(type(a), "REPLAY", False):
        return same(a.state(), b.state())
    try:
        return same(a.__dict__, b.__dict__)
    except AttributeError:
        return a == b
