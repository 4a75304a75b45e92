# SPDX-License-Identifier: MIT
# Deeply nested data built a level at a time (no recursion in Python), and every C path
# that walks it recursively: each must raise RuntimeError at the C stack limit, never
# reach the guard page under the main stack.
import json


def nest(kind, depth):
    x = 0
    for _ in range(depth):
        x = kind(x)
    return x


def tup(x):
    return (x,)


def lst(x):
    return [x]


def dct(x):
    return {"k": x}


def fset(x):
    return frozenset((x,))


DEPTH = 200000
PATHS = {
    "hash of a tuple": lambda: hash(nest(tup, DEPTH)),
    "tuple as a dict key": lambda: {nest(tup, DEPTH): 1},
    "frozenset hash": lambda: hash(nest(fset, DEPTH)),
    "tuple ==": lambda: nest(tup, DEPTH) == nest(tup, DEPTH),
    "list ==": lambda: nest(lst, DEPTH) == nest(lst, DEPTH),
    "dict ==": lambda: nest(dct, DEPTH) == nest(dct, DEPTH),
    "list <": lambda: nest(lst, DEPTH) < nest(lst, DEPTH),
    "tuple in list": lambda: nest(tup, DEPTH) in [nest(tup, DEPTH)],
    "repr of a list": lambda: repr(nest(lst, DEPTH)),
    "str of a dict": lambda: str(nest(dct, DEPTH)),
    "json.dumps": lambda: json.dumps(nest(lst, DEPTH)),
    "sorted": lambda: sorted([nest(lst, DEPTH), nest(lst, DEPTH)]),
    "max": lambda: max(nest(tup, DEPTH), nest(tup, DEPTH)),
}


def attempt(name):
    try:
        PATHS[name]()
    except RuntimeError as e:
        return "RuntimeError: %s" % e
    except MemoryError:
        return "MemoryError"
    return "no error"
