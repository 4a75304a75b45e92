# SPDX-License-Identifier: MIT
# Compiling Locus code into a namespace of its own: verified once per distinct source
# against the `locus` profile, then executed once per Locus in a fresh globals dict in
# which every name the code loads is bound, so no lookup falls through to builtins.
import builtins

import vm

# The built-ins a Locus may name. None of them reaches hardware, the kernel, the
# import machinery, the console or another Locus.
ALLOWED = (
    "abs", "all", "any", "bool", "bytearray", "bytes", "chr", "dict", "divmod",
    "enumerate", "filter", "float", "hash", "hex", "int", "isinstance", "iter", "len",
    "list", "map", "max", "min", "next", "ord", "pow", "range", "reversed", "round", "set",
    "sorted", "str", "sum", "tuple", "zip",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError",
    "KeyError", "LookupError", "NotImplementedError", "OverflowError", "RuntimeError",
    "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)
# C code iterating a range never polls the VM, so a Locus's ranges are bounded.
RANGE_MAX = 1 << 20
# What a Locus may import is the `locus` verifier profile's list (vm/verifier/vrf_profile.c).

_cache = {}


def bounded_range(*args):
    r = range(*args)
    if len(r) > RANGE_MAX:
        raise ValueError("range longer than %d" % RANGE_MAX)
    return r


def _builtin(name):
    return bounded_range if name == "range" else getattr(builtins, name)


def compile_locus(source, name):
    """(code, loaded names): verified code for `source`, cached by source text."""
    hit = _cache.get(source)
    if hit is not None:
        return hit
    code = compile(source, name, "exec")
    vm.verify(code, "locus")
    loaded, stored, deleted = vm.names(code)
    if deleted:
        raise ValueError("verify: code deletes global %r: a Locus may not" % (deleted[0],))
    for n in loaded:
        if n not in ALLOWED and n not in stored and n != "__name__":
            raise ValueError("verify: name %r is not available to a Locus" % (n,))
    hit = (code, loaded, stored)
    _cache[source] = hit
    return hit


def namespace(loaded, stored, name):
    """A fresh globals dict binding every name the code loads."""
    ns = {"__name__": name}
    for n in loaded:
        if n in ALLOWED and n not in stored:
            ns[n] = _builtin(n)
        elif n != "__name__":
            ns[n] = None
    return ns


def cache_size():
    return len(_cache)
