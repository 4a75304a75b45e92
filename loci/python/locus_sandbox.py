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

# Compiling runs at spawn and restart, outside the Locus's budget. With the parser and
# compiler linear in their input (vm/patches/0013, 0015) the length of the source bounds
# that work: 32 KiB of the worst nesting compiles in well under a guest second.
SOURCE_MAX = 32768
# Verified code is cached by source text; a flood of distinct sources empties the cache
# rather than growing it without end.
CACHE_MAX = 64

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
    if len(source) > SOURCE_MAX:
        raise ValueError("compile: source of %d characters (at most %d)"
                         % (len(source), SOURCE_MAX))
    try:
        code = compile(source, name, "exec")
    except (SyntaxError, RuntimeError, MemoryError) as e:
        # Every caller refuses a ValueError cleanly (spawn, a child's spawn, restart);
        # a compile error is the same kind of refusal.
        raise ValueError("compile: %s: %s" % (type(e).__name__, str(e)[:80])) from None
    vm.verify(code, "locus")
    loaded, stored, deleted = vm.names(code)
    if deleted:
        raise ValueError("verify: code deletes global %r: a Locus may not" % (deleted[0],))
    for n in loaded:
        if n not in ALLOWED and n not in stored and n != "__name__":
            raise ValueError("verify: name %r is not available to a Locus" % (n,))
    hit = (code, loaded, stored)
    if len(_cache) >= CACHE_MAX:
        _cache.clear()
    _cache[source] = hit
    return hit


def names_of(code):
    """(loaded, stored) of code compiled here: from the cache, which has them as they
    were before the optimiser rewrote any of the code in place (the verifier reads only
    the VM's own opcodes); else read from the code now."""
    for hit in _cache.values():
        if hit[0] is code:
            return hit[1], hit[2]
    loaded, stored, _deleted = vm.names(code)
    return loaded, stored


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
