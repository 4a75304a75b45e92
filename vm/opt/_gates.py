# SPDX-License-Identifier: MIT
# The gates a candidate passes before it replaces running code: 1 verify (the verifier's
# replacement check), 2 equivalent (recorded calls replayed on the old and the new code),
# 3 faster (A/B rounds in guest cycles). Gate 4, the journal entry written before the
# swap, is in _swap.py. A candidate is anything with apply() and undo() (_swap.py).
import _budget
import _prof
import _rw

import kernel
import opt
import vm

from . import _source, _values

_MISSING = object()
names_memo = {}  # id(fn) -> (fn, vm.names(fn))


def _gen_fn():
    yield


# The functions the optimiser works on: plain bytecode functions and generator functions.
PLAIN = (type(lambda: None), type(_gen_fn))
_GENERATOR = type(_gen_fn())


def names(fn):
    # vm.names(fn), read once: the first read comes when fn is looked at as a candidate,
    # before any of its code (or its inner functions', which vm.names reads too and the
    # verifier cannot read once rewritten in place) is swapped. Raises as vm.names does.
    # A native function's are those of its def compiled to bytecode: the def in the kept
    # text its machine code was compiled from (_source).
    got = names_memo.get(id(fn))
    if got is None or got[0] is not fn:
        if type(fn) is _source.NATIVE:
            src = _source.def_source(fn)
            if src is None:
                raise ValueError("opt: no kept source text defines this native function")
            got = (fn, vm.names(_source.compile_def(fn, src, False)))
        else:
            got = (fn, vm.names(fn))
        names_memo[id(fn)] = got
    return got[1]


def source_refusal(fn, src, profile, free=()):
    # Gate 1 for code compiled from fn's kept source (a twin, or a callee inlined into
    # one): that source compiled to bytecode must pass the verifier under `profile` and
    # use exactly the names fn's running code uses, so the compiled code is fn's and
    # holds no other capability. None when it does, else why not. Raises as compiling
    # the source raises.
    code = _source.compile_def(fn, src, False, free=free)
    why = vm.check(code, profile)
    if why is None and vm.names(code) != names(fn):
        why = "its source uses other globals than the running code"
    return why


def _stored(fn):
    # The globals fn's code stores.
    try:
        return names(fn)[1]
    except (ValueError, TypeError):
        return ()


def _snap(fn):
    # The current values of the globals fn stores, to compare and to put back: a replay
    # or a timed run must leave the namespace as it found it.
    g = fn.__globals__
    return {n: g.get(n, _MISSING) for n in _stored(fn)}


def _put_back(fn, snap):
    g = fn.__globals__
    for n, v in snap.items():
        if v is _MISSING:
            g.pop(n, None)
        else:
            g[n] = v


def recorded(fn):
    # The calls _rw recorded for fn that can be replayed (their arguments copied).
    inputs = []
    for args in _rw.recorded(fn):
        if _values.clone(args) is not None:
            inputs.append(args)
    return inputs


def activity(fn):
    # fn's profiled calls + loop iterations so far (0 when the profiler has no slot for it).
    if _source.is_native_code(fn):
        return native_activity(fn, _rw.native_heat())
    cid = None
    for f, calls, back, _hot in _prof.counters():
        if f is fn:
            return calls + back
        # The profiler counts by code: its slot may name another function of fn's code
        # (every Locus of one source runs one code, loci/python/opt_locus.py).
        if type(f) is type(fn) and f.__name__ == fn.__name__:
            if cid is None:
                cid = _code_id(fn)
            if cid is not None and _code_id(f) == cid:
                return calls + back
    return 0


def _code_id(fn):
    try:
        return _rw.code_id(fn)
    except (TypeError, ValueError):
        return None


def native_activity(fn, heat):
    # The back edges counted in native function fn's machine code (_rw.native_heat()).
    span = _rw.native_span(fn)
    if span is None:
        return 0
    start, end = span[0], span[0] + span[1]
    return sum(n for at, n in heat if start <= at < end)


def misses(fn):
    # The in-place rewrite guards' misses: native code has none.
    try:
        return _rw.misses(fn)
    except TypeError:
        return 0


# ---- gate 1: verify ------------------------------------------------------------------

def replacement(fn, edits):
    # The whole rewritten bytecode, as vm.check_replacement takes it: the function's
    # bytecode with each edit's head byte substituted after checking the old byte.
    code = bytearray(vm.bytecode(fn))
    base = _rw.start(fn)
    for off, old, new, _kind in edits:
        if code[base + off] != old:
            raise ValueError("opt: stale edit at offset %d" % off)
        code[base + off] = new
    return bytes(code)


def verify(fn, edits, profile):
    return vm.check_replacement(fn, replacement(fn, edits), profile)


# ---- gate 2: equivalent ----------------------------------------------------------------

# What _budget.run raises when the replayed code starts a budgeted call of its own.
_NEST = "budgeted calls do not nest"


def _show(args):
    # The arguments as a refusal names them: a closure's free variables and a colony's
    # state can print as thousands of characters.
    r = repr(args)
    return r if len(r) <= 160 else r[:150] + " ...)"


def _call(fn_args):
    return _drain(fn_args[0](*fn_args[1]))


def _run(fn, args, cycles, limits=None):
    # (kind, value or exception type, output, lost output, args after the call, cycles
    # taken, ops counted). kind is "ret", "exc", "out" when the budget stopped the call,
    # or "nests" when the call started a budgeted call of its own. With `limits` (a
    # Locus's budget: ops, cycles, alloc; 0 is no limit) the call runs under those, its
    # cycles capped at `cycles`.
    ops_max, alloc_max = 0, 0
    if limits is not None:
        ops_max, alloc_max = limits["ops"], limits["alloc"]
        if limits["cycles"]:
            cycles = min(cycles, limits["cycles"])
    kernel.capture(True)
    try:
        if _budget.active():
            # Inside a budgeted call (which cannot nest): that budget bounds the replay.
            t0 = kernel.cycles()
            try:
                r = ("ret", _drain(fn(*args)))
            except Exception as e:  # noqa: BLE001 - the gate compares any exception type
                r = ("exc", type(e))
            took, ops = kernel.cycles() - t0, 0
        else:
            status, value, ops, took, _alloc = _budget.run(_call, (fn, args), ops_max, cycles,
                                                           alloc_max)
            if status == _budget.OK:
                r = ("ret", value)
            elif status == _budget.RAISED:
                if not isinstance(value, Exception):
                    raise value  # Ctrl-C (and SystemExit) stop the optimiser, as before
                if isinstance(value, RuntimeError) and _NEST in str(value):
                    r = ("nests", None)
                else:
                    r = ("exc", type(value))
            else:
                r = ("out", status)
    finally:
        out, lost = kernel.capture(False)
    return r[0], r[1], out, lost, args, took, ops


def _drain(r):
    # A generator function's result is what it yields (up to GEN_ITEMS items), compared
    # as a list; anything else is itself.
    if type(r) is not _GENERATOR:
        return r
    limit = opt.GEN_ITEMS
    items = []
    for x in r:
        items.append(x)
        if len(items) >= limit:
            break
    return items


def equivalent(fn, cand, inputs, limits=None):
    # None, or why not. Also keeps, in cand.raises, the exception types the original
    # raised: once swapped, any other type escaping a call rolls the swap back
    # (_policy.check, vm/opt/mod/rw_watch.c). With `limits` (Locus code) both sides run
    # under that budget and must count the same ops: a Locus's ops budget has to stop
    # the new code exactly where it stops the old.
    cand.raises = []
    if not inputs:
        return "no replayable inputs recorded or generated"
    if limits is not None and _budget.active():
        return "a budgeted call is running: Locus code is replayed only under its own budget"
    for args in inputs:
        a, b = _values.clone(args), _values.clone(args)
        before = _snap(fn)
        cand.undo()
        try:
            old = _run(fn, a[0], opt.MAX_CALL_CYCLES, limits)
            old_g = _snap(fn)
            _put_back(fn, before)
            # Under a Locus's budget, running out of ops is an outcome to compare: the
            # new code must run out too, at the same op, having made the same calls.
            if old[0] == "out" and (limits is None or old[1] != _budget.OPS):
                if limits is not None:
                    return "args %s: the original ran out of the Locus's budget (status %d)" % (
                        _show(args), old[1])
                return "args %s: the original took more than %d cycles" % (
                    _show(args), opt.MAX_CALL_CYCLES)
            missing = _values.unanswered(a[0])
            if missing is not None:
                return "args %s: its replay asked the stand-in for %s, which it cannot" \
                    " answer" % (_show(args), missing)
            if old[0] == "nests":
                return "args %s: it runs budgeted calls itself, so it cannot be replayed" \
                    " under a budget" % (_show(args),)
            cand.apply()
            limit = opt.REPLAY_FACTOR * old[5] + opt.REPLAY_FLOOR
            new = _run(fn, b[0], limit, limits)
            new_g = _snap(fn)
        finally:
            cand.undo()
            _put_back(fn, before)
        if new[0] == "out" and not (old[0] == "out" and new[1] == old[1]):
            if limits is not None:
                return "args %s: the new code ran out of its replay budget (status %d)" % (
                    _show(args), new[1])
            return "args %s: the new code ran out of its replay budget (%d cycles)" % (
                _show(args), limit)
        if not _values.same(old_g, new_g):
            return "args %s: the globals it stores differ after the call" % (_show(args),)
        if old[0] != new[0]:
            return "args %s: old %s, new %s" % (_show(args), old[0], new[0])
        if old[0] == "exc" and old[1] is not new[1]:
            return "args %s: old raised %s, new %s" % (_show(args), old[1].__name__,
                                                        new[1].__name__)
        if old[0] == "exc" and old[1] not in cand.raises:
            cand.raises.append(old[1])
        if old[0] == "ret" and not _values.same(old[1], new[1]):
            return "args %s: old returned %r, new %r" % (_show(args), old[1], new[1])
        if old[2] != new[2] or old[3] != new[3]:
            return "args %s: printed output differs" % (_show(args),)
        if not _values.same(old[4], new[4]):
            return "args %s: arguments after the call differ" % (_show(args),)
        if limits is not None and old[6] != new[6]:
            return "args %s: old counted %d ops, new %d" % (_show(args), old[6], new[6])
    return None


# ---- gate 3: faster --------------------------------------------------------------------

def _time(fn, inputs, limits=None):
    # Cycles to run every input once (on fresh copies; copying is outside the timing), or
    # None when a call ran out of `limits` (Locus code: each call under that budget).
    copies = [_values.clone(a)[0] for a in inputs]
    before = _snap(fn)
    kernel.capture(True)
    try:
        t0 = kernel.cycles()
        if limits is None:
            for args in copies:
                try:
                    _drain(fn(*args))
                except Exception:  # noqa: BLE001,S110 - equivalence already compared them
                    pass
        else:
            ops, cycles, alloc = limits["ops"], limits["cycles"] or opt.MAX_CALL_CYCLES, \
                limits["alloc"]
            for args in copies:
                status = _budget.run(_call, (fn, args), ops, cycles, alloc)[0]
                if status not in (_budget.OK, _budget.RAISED, _budget.OPS):
                    return None  # (equivalence compared the others: the same on both)
        return kernel.cycles() - t0
    finally:
        kernel.capture(False)
        _put_back(fn, before)


def faster(fn, cand, inputs, rounds=None, limits=None):
    # (failure or None, median new/old ratio) over `rounds` A/B rounds (opt.ROUNDS when
    # None). Rounds alternate which side runs first. With `limits`, every call runs
    # under that budget (Locus code).
    if rounds is None:
        rounds = opt.ROUNDS
    ratios = []
    for i in range(rounds):
        if i >= rounds:
            break
        cand.undo()
        if i & 1:
            cand.apply()
            tn = _time(fn, inputs, limits)
            cand.undo()
            to = _time(fn, inputs, limits)
        else:
            to = _time(fn, inputs, limits)
            cand.apply()
            tn = _time(fn, inputs, limits)
            cand.undo()
        if to is None or tn is None:
            return "a call ran out of the Locus's budget while timed", None
        if to > opt.MAX_CALL_CYCLES * len(inputs):
            return "too slow to measure (%d cycles a round)" % to, None
        if to > opt.LONG_ROUND:
            rounds = min(rounds, 3)
        ratios.append(tn / to if to else 1.0)
    ratios.sort()
    ratio = ratios[len(ratios) // 2]
    if ratio > 1.0 - opt.MARGIN:
        return "new/old %.4f, not below %.2f" % (ratio, 1.0 - opt.MARGIN), ratio
    return None, ratio
