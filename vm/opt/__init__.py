# SPDX-License-Identifier: MIT
# The optimiser's gates, journal, swap and rollback (issue 7): only a rewrite that
# verifies, behaves the same and measures faster replaces running code. See vm/README.md.
import binascii
import hashlib
import sys

import _prof
import _rw

import __main__
import kernel
import vm

# A candidate must be at least this much faster (new/old cycle ratio, median of the A/B
# rounds) to be swapped in. 2 %: under QEMU -icount reruns differ by ~0.04 %, and on TCG
# without -icount (or hardware) the A/B rounds interleave, so drift hits both sides.
MARGIN = 0.02
# A/B rounds (each runs every input once with old code, once with new, interleaved).
ROUNDS = 5
# Recorded calls kept per function, and how many calls the optimiser waits for.
INPUTS = 8
# A swapped function is rolled back when its guards missed more often than this share
# of its profiled activity (calls + loop iterations) since the swap, or than twice the
# rate they missed at while the swap measured faster, whichever is higher.
MISS_SHARE = 0.25
# Functions whose one call costs more than this many cycles are not A/B measured
# (the measurement itself would stall the console for too long); journaled as refused.
MAX_CALL_CYCLES = 2_000_000_000
# Past this many cycles a round, 3 A/B rounds instead of ROUNDS: -icount makes a
# round's cycles repeat exactly, and on hardware such long rounds average out noise.
LONG_ROUND = 50_000_000
# Passes a function may be recorded for with no call coming before it is given up.
PATIENCE = 4
# check() measures each live swap again on its recorded calls every this many passes,
# and rolls back one that is no longer faster than the original.
RECHECK_PASSES = 20
# Native twins are compiled only for defs whose source uses none of these: they need
# the class cell or the enclosing scope, which a def compiled on its own does not have.
NATIVE_REFUSE = ("super", "__class__", "nonlocal")
# A generator function's calls are compared (and timed) over at most this many items.
GEN_ITEMS = 100_000
# How many swaps vm/rewrite/mod/rw_watch.c watches for new exception types at once.
WATCH_MAX = 256

_journal = []
# swap id -> [fn, old digest, new digest, candidate, activity, misses, gate miss rate,
#             recorded inputs, passes since last measured]
_live = {}
_done = {}  # id(bytecode owner fn) -> journal id of its last verdict
_auto = False
_epoch = 0


def _digest(data):
    return binascii.hexlify(hashlib.sha256(data).digest()).decode()


def _name(fn):
    try:
        return fn.__name__
    except AttributeError:
        return repr(fn)


def _entry(fn, verdict, gate, old, new, edits, gain, detail="", kind="rewrite"):
    global _epoch
    _epoch += 1
    e = {
        "id": len(_journal) + 1,
        "epoch": _epoch,
        "function": _name(fn),
        "kind": kind,
        "old": old,
        "new": new,
        "rewrites": [(off, k) for off, _o, _n, k in edits],
        "gain": gain,
        "verdict": verdict,
        "gate": gate,
        "detail": detail,
    }
    _journal.append(e)
    return e


# ---- candidates: in-place rewrites, or a native twin ------------------------------------

class _Rewrite:
    # Head bytes rewritten in place (vm/rewrite): length-preserving, undone by restoring.
    kind = "rewrite"
    raises = ()  # the original's exception types on the gates' inputs (_gate_equivalent)

    def __init__(self, fn, edits, new):
        self.fn, self.edits, self.new = fn, edits, new

    def apply(self):
        _rw.apply(self.fn, self.edits)

    def undo(self):
        _rw.undo(self.fn)


class _Native:
    # The same def compiled by the x64 emitter; promotion reroutes fn's calls to it
    # (vm/rewrite/mod/rw_native.c) and leaves fn's bytecode untouched.
    kind = "native"
    edits = ()
    raises = ()

    def __init__(self, fn, twin, new):
        self.fn, self.twin, self.new = fn, twin, new

    def apply(self):
        _rw.promote(self.fn, self.twin)

    def undo(self):
        _rw.demote(self.fn)


def _def_lines(fn):
    # (lines, index of fn's def line) in the source texts the lexer kept (_rw.sources(),
    # newest first), then in fn's file: the last 'def name(' at or before the line of
    # fn's first instruction, in a text of fn's file name. None when none has it.
    name = _name(fn)
    _n, file, line, _op = _prof.where(fn, 0)
    for src_name, data in _rw.sources() + [(file, None)]:
        if src_name != file:
            continue
        if data is None:
            # Last: a module imported from a file is read again (if it changed since,
            # gate 1's name check and gate 2 catch the difference).
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except (OSError, TypeError):
                return None
        try:
            # (Paste mode hands the lexer "\r" line ends, as a terminal sends them.)
            lines = data.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
        except UnicodeError:
            continue
        at = None
        for i in range(min(line, len(lines))):
            t = lines[i].lstrip()
            if t.startswith("def " + name + "(") or t.startswith("def " + name + " ("):
                at = i
        if at is not None:
            return lines, at
    return None


def _indent(ln):
    return len(ln) - len(ln.lstrip())


def _def_source(fn):
    """fn's def, dedented: its line and the lines indented deeper. None if not kept."""
    found = _def_lines(fn)
    if found is None:
        return None
    lines, at = found
    head = lines[at]
    indent = _indent(head)
    out = [head[indent:]]
    for ln in lines[at + 1:]:
        t = ln.strip()
        if t and _indent(ln) <= indent and not t.startswith("#"):
            break
        out.append(ln[indent:])
    return "\n".join(out).rstrip() + "\n"


def _nested(fn):
    # Whether fn's def sits inside another def: then every call of the outer function
    # makes a new function object from the same code, and a twin promoted for this one
    # object would not reach the next (an in-place rewrite of the shared code does).
    found = _def_lines(fn)
    if found is None:
        return False
    lines, at = found
    indent = _indent(lines[at])
    for ln in reversed(lines[:at]):
        t = ln.strip()
        if not t or t.startswith("#") or _indent(ln) >= indent:
            continue
        indent = _indent(ln)
        if t.startswith(("def ", "async def ")):
            return True
        if indent == 0:
            return False
    return False


def _compile_def(fn, src, native):
    # The function a def compiles to in a copy of fn's globals (so fn's namespace is not
    # touched); "<twin>" keeps the text out of _rw.sources().
    scratch = dict(fn.__globals__)
    text = ("@micropython.native\n" + src) if native else src
    exec(compile(text, "<twin>", "exec"), scratch)
    return scratch[_name(fn)]


def _native_candidate(fn, profile):
    # (candidate, None) or (None, (gate, why)). Gate 1 for native code: the same source,
    # compiled to bytecode, must pass the verifier under fn's profile and use exactly
    # fn's global names, so the twin is fn's code and holds no other capability. Its
    # loops poll (vm/patches/0008) like the bytecode's jumps.
    if type(fn) not in _PLAIN:
        return None, ("source", "not a plain function (a closure, or a method using super())")
    try:
        src = _def_source(fn)
    except (TypeError, ValueError):
        src = None
    if src is None:
        return None, ("source", "no kept source text defines it")
    for word in NATIVE_REFUSE:
        if word in src:
            return None, ("source", "uses '%s'" % word)
    if _nested(fn):
        return None, ("source", "a def inside a def: each call makes a new function object")
    try:
        twin_bc = _compile_def(fn, src, False)
        why = vm.check(twin_bc, profile)
        if why is None and vm.names(twin_bc) != _names(fn):
            why = "its source uses other globals than the running code"
        if why:
            return None, ("verify", why)
        twin = _compile_def(fn, src, True)
        new = _digest(_rw.machine_code(twin))
    except Exception as e:  # noqa: BLE001 - any failure to compile refuses the twin
        return None, ("compile", "%s: %s" % (type(e).__name__, e))
    return _Native(fn, twin, new), None


# ---- gate 1: verify ------------------------------------------------------------------

def _replacement(fn, edits):
    # The whole rewritten bytecode, as vm.check_replacement takes it: the function's
    # bytecode with each edit's head byte substituted after checking the old byte.
    code = bytearray(vm.bytecode(fn))
    base = _rw.start(fn)
    for off, old, new, _kind in edits:
        if code[base + off] != old:
            raise ValueError("opt: stale edit at offset %d" % off)
        code[base + off] = new
    return bytes(code)


def _gate_verify(fn, edits, profile):
    return vm.check_replacement(fn, _replacement(fn, edits), profile)


# ---- gate 2: equivalent ----------------------------------------------------------------

_VALUE_TYPES = (type(None), bool, int, float, complex, str, bytes, range)


def _clone(x, depth=0):
    # A copy the function may mutate freely; None when x is not something the gate can
    # copy faithfully (then the recorded call is not replayed).
    if depth > 8:
        return None
    t = type(x)
    if t in _VALUE_TYPES:
        return (x,)
    if t in (tuple, list, set):
        items = []
        for v in x:
            c = _clone(v, depth + 1)
            if c is None:
                return None
            items.append(c[0])
        return (t(items),)
    if t is bytearray:
        return (bytearray(x),)
    if t is dict:
        d = {}
        for k, v in x.items():
            c = _clone(v, depth + 1)
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
            c = _clone(v, depth + 1)
            if c is None:
                return None
            setattr(y, k, c[0])
        return (y,)
    except (AttributeError, TypeError):
        return None


def _same(a, b):
    if type(a) is not type(b):
        return False
    if type(a) is float and a != a:
        return b != b
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        # (MicroPython's dict views do not compare by content.)
        return len(a) == len(b) and all(k in b and _same(a[k], b[k]) for k in a)
    if type(a) in _VALUE_TYPES or type(a) in (set, bytearray):
        return a == b
    try:
        return _same(a.__dict__, b.__dict__)
    except AttributeError:
        return a == b


def _run(fn, args):
    # (kind, value or exception type, output, args after the call)
    kernel.capture(True)
    try:
        try:
            r = ("ret", _drain(fn(*args)))
        except Exception as e:  # noqa: BLE001 - the gate compares any exception type
            r = ("exc", type(e))
    finally:
        out, lost = kernel.capture(False)
    return r[0], r[1], out, lost, args


def _drain(r):
    # A generator function's result is what it yields (up to GEN_ITEMS items), compared
    # as a list; anything else is itself.
    if type(r) is not _GENERATOR:
        return r
    items = []
    for x in r:
        items.append(x)
        if len(items) >= GEN_ITEMS:
            break
    return items


_MISSING = object()
_names_memo = {}  # id(fn) -> (fn, vm.names(fn))


def _names(fn):
    # vm.names(fn), read once: the first read comes when fn is looked at as a candidate,
    # before any of its code (or its inner functions', which vm.names reads too and the
    # verifier cannot read once rewritten in place) is swapped. Raises as vm.names does.
    got = _names_memo.get(id(fn))
    if got is None or got[0] is not fn:
        got = _names_memo[id(fn)] = (fn, vm.names(fn))
    return got[1]


def _stored(fn):
    # The globals fn's code stores.
    try:
        return _names(fn)[1]
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


def _gate_equivalent(fn, cand, inputs):
    # Also keeps, in cand.raises, the exception types the original raised: once swapped,
    # any other type escaping a call rolls the swap back (check(), rw_watch.c).
    cand.raises = []
    if not inputs:
        return "no replayable inputs recorded or generated"
    for args in inputs:
        a, b = _clone(args), _clone(args)
        before = _snap(fn)
        cand.undo()
        try:
            old = _run(fn, a[0])
            old_g = _snap(fn)
            _put_back(fn, before)
            cand.apply()
            new = _run(fn, b[0])
            new_g = _snap(fn)
        finally:
            cand.undo()
            _put_back(fn, before)
        if not _same(old_g, new_g):
            return "args %r: the globals it stores differ after the call" % (args,)
        if old[0] != new[0]:
            return "args %r: old %s, new %s" % (args, old[0], new[0])
        if old[0] == "exc" and old[1] is not new[1]:
            return "args %r: old raised %s, new %s" % (args, old[1].__name__, new[1].__name__)
        if old[0] == "exc" and old[1] not in cand.raises:
            cand.raises.append(old[1])
        if old[0] == "ret" and not _same(old[1], new[1]):
            return "args %r: old returned %r, new %r" % (args, old[1], new[1])
        if old[2] != new[2] or old[3] != new[3]:
            return "args %r: printed output differs" % (args,)
        if not _same(old[4], new[4]):
            return "args %r: arguments after the call differ" % (args,)
    return None


# ---- gate 3: faster --------------------------------------------------------------------

def _time(fn, inputs):
    # Cycles to run every input once (on fresh copies; copying is outside the timing).
    copies = [_clone(a)[0] for a in inputs]
    before = _snap(fn)
    kernel.capture(True)
    try:
        t0 = kernel.cycles()
        for args in copies:
            try:
                _drain(fn(*args))
            except Exception:  # noqa: BLE001,S110 - equivalence already compared them
                pass
        return kernel.cycles() - t0
    finally:
        kernel.capture(False)
        _put_back(fn, before)


def _gate_faster(fn, cand, inputs, rounds=ROUNDS):
    # (failure or None, median new/old ratio). Rounds alternate which side runs first.
    ratios = []
    for i in range(rounds):
        if i >= rounds:
            break
        cand.undo()
        if i & 1:
            cand.apply()
            tn = _time(fn, inputs)
            cand.undo()
            to = _time(fn, inputs)
        else:
            to = _time(fn, inputs)
            cand.apply()
            tn = _time(fn, inputs)
            cand.undo()
        if to > MAX_CALL_CYCLES * len(inputs):
            return "too slow to measure (%d cycles a round)" % to, None
        if to > LONG_ROUND:
            rounds = min(rounds, 3)
        ratios.append(tn / to if to else 1.0)
    ratios.sort()
    ratio = ratios[len(ratios) // 2]
    if ratio > 1.0 - MARGIN:
        return "new/old %.4f, not below %.2f" % (ratio, 1.0 - MARGIN), ratio
    return None, ratio


# ---- the pipeline ----------------------------------------------------------------------

def _activity(fn):
    for f, calls, back, _hot in _prof.counters():
        if f is fn:
            return calls + back
    return 0


def _recorded(fn):
    inputs = []
    for args in _rw.recorded(fn):
        if _clone(args) is not None:
            inputs.append(args)
    return inputs


def consider(fn, profile="trusted", inputs=None):
    """Run the four gates on fn's rewrite candidate; swap it in if all pass. Returns the
    journal entry (also for rejections); fn then counts as decided for optimise()."""
    return _decide(fn, _consider(fn, profile, inputs))


def _consider(fn, profile, inputs):
    # Every candidate (the in-place rewrite, the native twin) goes through the gates on
    # its own; of those that pass, the fastest is swapped in and the others are journaled
    # as rejected. Returns the swap's entry, else the last rejection.
    old = _digest(_rw.code(fn))
    if inputs is None:
        inputs = _recorded(fn)
    inputs = [a for a in inputs if _clone(a) is not None]
    last = None
    passed = []  # (ratio, candidate, gate miss rate)
    for cand in _candidates(fn, old, profile):
        if type(cand) is dict:
            last = cand
            continue
        try:
            why = _gate_equivalent(fn, cand, inputs)
        except RuntimeError as e:
            # The swap itself cannot be made (the promotion table is full).
            cand.undo()
            last = _reject(fn, cand, old, "swap", None, str(e))
            continue
        if why:
            last = _reject(fn, cand, old, "equivalent", None, why)
            continue
        m0, a0 = _rw.misses(fn), _activity(fn)
        why, ratio = _gate_faster(fn, cand, inputs)
        # The guards' miss rate on the recorded calls: a swap is rolled back only if its
        # guards later miss clearly more often than they did when it measured faster.
        # Old and new code ran the same calls and loop iterations (gate 2), so the new
        # code's share of the activity is half of it.
        gate_rate = (_rw.misses(fn) - m0) / max((_activity(fn) - a0) / 2, 1)
        if why:
            last = _reject(fn, cand, old, "faster", ratio and round(1 / ratio, 4), why)
            continue
        passed.append((ratio, cand, gate_rate))
    if not passed:
        return last
    passed.sort(key=lambda t: t[0])
    ratio, cand, gate_rate = passed[0]
    for r, other, _g in passed[1:]:
        _reject(fn, other, old, "faster", round(1 / r, 4),
                "passed, but the %s candidate measured faster (%.3fx)" % (cand.kind, 1 / ratio))
    # Watched for exception types the original never raised from here on (check()).
    watched = _rw.watch(fn, cand.raises)
    # Gate 4: the entry is written before the code changes.
    e = _entry(fn, "swapped", None, old, cand.new, cand.edits, round(1 / ratio, 4),
               "" if watched else "not watched for new exception types: %d swaps are" % WATCH_MAX,
               kind=cand.kind)
    live = [fn, old, cand.new, cand, _activity(fn), _rw.misses(fn), gate_rate, inputs, 0]
    cand.apply()
    _live[e["id"]] = live
    return e


def _reject(fn, cand, old, gate, gain, why):
    return _entry(fn, "rejected", gate, old, cand.new, cand.edits, gain, why, cand.kind)


def _candidates(fn, old, profile):
    # The candidates that pass gate 1, or the journal entries of those that do not.
    out = []
    code = _rw.code(fn)
    edits = _rw.plan(fn)
    if not edits:
        out.append(_entry(fn, "rejected", "plan", old, old, [], None, "nothing to rewrite"))
    else:
        new = _digest(_replacement(fn, edits)[_rw.start(fn):_rw.start(fn) + len(code)])
        why = _gate_verify(fn, edits, profile)
        if why:
            out.append(_entry(fn, "rejected", "verify", old, new, edits, None, why))
        else:
            out.append(_Rewrite(fn, edits, new))
    if native_promotion:
        cand, refused = _native_candidate(fn, profile)
        if cand is None:
            out.append(_entry(fn, "rejected", refused[0], old, None, [], None, refused[1],
                              "native"))
        else:
            out.append(cand)
    return out


# Whether the optimiser also tries native twins (set False to measure rewrites alone).
native_promotion = True


# ---- what to work on, and one move at a time -------------------------------------------

_FUNCTION = type(_digest)


def _gen_fn():
    yield


_GEN_FUNCTION = type(_gen_fn)
_GENERATOR = type(_gen_fn())
_PLAIN = (_FUNCTION, _GEN_FUNCTION)
_keys = {}  # key (bytes) -> fn
_key_of = {}  # id(fn) -> key
_recording = None  # the function whose calls _rw is recording
_rec_passes = 0  # optimise() passes it has been recorded for without one replayable call


def key(fn):
    """The field key (bytes, <= 15) naming fn in the 'heat' flavour."""
    k = _key_of.get(id(fn))
    if k is None:
        # Readable in top('heat'): the name's first 10 bytes and a serial number.
        k = ("%s.%x" % (_name(fn)[:10], len(_keys) + 1)).encode()
        _keys[k] = fn
        _key_of[id(fn)] = k
    return k


def by_key(k):
    return _keys.get(bytes(k))


_eligible_memo = {}  # id(fn) -> (fn, bool); holding fn keeps its id from being reused


_trusted_ns = []  # namespaces trust() added (e.g. a benchmark's exec() globals)


def trust(namespace):
    """Let the optimiser pick functions whose globals are `namespace` (a dict that is
    neither __main__'s nor a module's, e.g. one code was exec()'d in). Never a Locus's."""
    if not any(namespace is t for t in _trusted_ns):
        _trusted_ns.append(namespace)


def _trusted(g):
    # Console code (__main__) or a module's. A Locus's functions live in a namespace of
    # their own, and the gates replay calls with no budget: Locus code must never get here.
    if g is __main__.__dict__ or any(g is t for t in _trusted_ns):
        return True
    for m in sys.modules.values():
        if g is getattr(m, "__dict__", None):
            return True
    return False


def _eligible(fn):
    # Plain bytecode (and generator) functions on the heap, of trusted code, that delete
    # no globals. The gates call them again: the globals they store are saved first,
    # compared after the old and the new code ran, and put back (_snap, _put_back).
    if type(fn) not in _PLAIN or id(fn) in _done:
        return False
    memo = _eligible_memo.get(id(fn))
    if memo is not None:
        return memo[1]
    try:
        _rw.start(fn)
        names = _names(fn)
        ok = _trusted(fn.__globals__) and not names[2]
    except (ValueError, TypeError):
        ok = False
    _eligible_memo[id(fn)] = (fn, ok)
    return ok


def hot(n=8):
    """[(key, fn, activity)] of the hottest undecided functions the profiler reported."""
    out = []
    for fn, calls, back, nhot in _prof.counters():
        if nhot and _eligible(fn):
            out.append((calls + back, fn))
    out.sort(key=lambda t: -t[0])
    return [(key(fn), fn, a) for a, fn in out[:n]]


def attempt(fn, profile="trusted"):
    """One optimiser move on fn: start recording its calls if none are recorded yet
    (returns None; try again after it has run), else run the four gates (returns the
    journal entry). A function is decided once. One function is recorded at a time: a
    move on another function while one is recording waits (None)."""
    global _recording, _rec_passes
    if id(fn) in _done:
        return _journal[_done[id(fn)] - 1]
    if _recording is not None and _recording is not fn:
        return None
    if _recording is None:
        try:
            _rw.record(fn, INPUTS)
        except ValueError as e:
            return _decide(fn, _entry(fn, "rejected", "equivalent", _digest(_rw.code(fn)),
                                      None, [], None, str(e)))
        _recording, _rec_passes = fn, 0
        return None
    inputs = _recorded(fn)
    if not inputs and len(_rw.recorded(fn)) == 0:
        _rec_passes += 1
        if _rec_passes < PATIENCE:
            return None
    _rw.record(fn, 0)
    _recording = None
    if not inputs:
        return _decide(fn, _entry(fn, "rejected", "equivalent", _digest(_rw.code(fn)), None,
                                  [], None, "no replayable calls recorded"))
    return _decide(fn, _consider(fn, profile, inputs))


def _decide(fn, e):
    _done[id(fn)] = e["id"]
    return e


def optimise(n=8, profile="trusted"):
    """One pass: gate the function being recorded if its calls came, else start recording
    the hottest undecided one; then roll back swaps whose guards keep missing. Returns
    the new verdicts."""
    out = []
    _evict()
    if _recording is not None:
        e = attempt(_recording, profile)
        if e is None:
            check()
            return out
        out.append(e)
    for _k, fn, _a in hot(n):
        e = attempt(fn, profile)
        if e is None:
            break
        out.append(e)
    check()
    return out


_unslotted = [0]


def _evict():
    # Exits the profiler could not count (stats 'unslotted': a full probe window during
    # a collection) mean new code may be invisible: start counting afresh. Live swaps
    # keep their miss baselines; their activity baselines restart from zero.
    n = _prof.stats()["unslotted"]
    if n > _unslotted[0]:
        _prof.reset()
        n = 0
        for v in _live.values():
            v[4] = 0
    _unslotted[0] = n


def settle(run, rounds=16, n=8, profile="trusted"):
    """Alternate optimise() and run() until the n hottest functions are decided (or
    `rounds` passes): what a benchmark's ON phase does after its warm-up. Ends with a
    pass after a run, so the last run's counts are looked at."""
    out = []
    for _ in range(rounds):
        out += optimise(n, profile)
        run()
        if _recording is None and not hot(n):
            break
    stop_recording()
    return out


def stop_recording():
    """Cancel a recording in progress (its function stays undecided). While one is on,
    every call pays the frame-enter hook's compare."""
    global _recording
    if _recording is not None:
        _rw.record(_recording, 0)
        _recording = None


def rollback(swap_id, reason="console"):
    """Restore the original bytes of swap `swap_id`; checks the digest matches."""
    if swap_id not in _live:
        raise ValueError("opt.rollback: no live swap %r (see opt.swaps())" % (swap_id,))
    fn, old, new, cand = _live.pop(swap_id)[:4]
    _rw.unwatch(fn)
    cand.undo()
    got = _digest(_rw.code(fn))
    verdict = "rolled back" if got == old else "rollback digest mismatch"
    return _entry(fn, verdict, None, new, got, cand.edits, None, reason, cand.kind)


def check():
    """Roll back swaps whose guards keep failing, whose function let an exception type
    escape that its gates never saw raised, and (every RECHECK_PASSES calls) swaps that
    no longer measure faster on their recorded calls. Returns the rollback entries."""
    out = []
    for sid in list(_live):
        live = _live[sid]
        new_exc = _rw.raised(live[0])
        if new_exc is not None:
            out.append(rollback(sid, "raised %s, a type its gates never saw" % new_exc.__name__))
            continue
        live[8] += 1
        if live[8] >= RECHECK_PASSES:
            live[8] = 0
            cand = live[3]
            cand.undo()
            why, ratio = _gate_faster(live[0], cand, live[7], 3)
            cand.apply()
            if ratio is not None and ratio > 1.0:
                out.append(rollback(sid, "regressed: new/old %.4f on its recorded calls" % ratio))
                continue
        fn, _old, _new, cand, act0, miss0, gate_rate = live[:7]
        if cand.kind != "rewrite":
            continue
        misses = _rw.misses(fn) - miss0
        active = _activity(fn) - act0
        if active < 0:
            # The profiler gave fn's slot to another function (or was reset): its counts
            # restarted from zero, so restart the comparison too.
            _live[sid][4], _live[sid][5] = _activity(fn), _rw.misses(fn)
            continue
        if misses > 64 and misses > max(MISS_SHARE, 2 * gate_rate) * max(active, 1):
            why = "guards missed %d times in %d calls+iterations" % (misses, active)
            out.append(rollback(sid, why))
    return out


def forget(namespace):
    """Roll back every live swap of a function whose globals are `namespace`, and stop
    trusting it: for code about to be dropped (a benchmark's exec() namespace), so its
    functions and native twins are not kept alive by the optimiser. Returns the rollback
    entries."""
    out = [rollback(sid, "forgotten") for sid, v in sorted(_live.items())
           if v[0].__globals__ is namespace]
    for i in range(len(_trusted_ns) - 1, -1, -1):
        if _trusted_ns[i] is namespace:
            _trusted_ns.pop(i)
    for memo in (_eligible_memo, _names_memo):
        for k in [k for k, v in memo.items() if v[0].__globals__ is namespace]:
            del memo[k]
    return out


def swaps():
    """[(id, function, rewrites, gain)] of the swaps in place now; rewrites is the
    number of in-place rewrites, or 'native' for a promoted function."""
    return [(sid, _name(v[0]), v[3].kind if v[3].kind != "rewrite" else len(v[3].edits),
             _journal[sid - 1]["gain"]) for sid, v in sorted(_live.items())]


def journal(n=20):
    """The last n journal entries (dicts): id, epoch, function, kind ('rewrite' or
    'native'), old and new SHA-256 (of the opcodes; of the machine code for a native
    twin), rewrites [(offset, kind)], gain (old/new cycles), verdict, gate, detail."""
    return _journal[-n:]


def log(n=10):
    """Print the last n journal entries, one line each."""
    for e in _journal[-n:]:
        print("%3d %4d %-12s %-10s %-16s %-7s %-7s %2d rewrites %s %s" % (
            e["id"], e["epoch"], e["verdict"], e["gate"] or "-", e["function"], e["kind"],
            "%.3fx" % e["gain"] if e["gain"] else "-", len(e["rewrites"]),
            e["old"][:12], e["detail"]))


# auto(True): one optimise() pass at most this often while the console waits for input.
AUTO_PERIOD_MS = 500
_last_pass = [0]


def _idle():
    now = kernel.uptime_ms()
    if now - _last_pass[0] >= AUTO_PERIOD_MS:
        _last_pass[0] = now
        optimise()


def auto(flag=None):
    """auto(True/False): run the optimiser on its own while the console waits for input
    (one pass every AUTO_PERIOD_MS: record, gate, swap, and roll back swaps whose guards
    keep missing). It takes the REPL's idle hook, which lo.resume() also uses: the last
    one switched on wins; with a mesh running, opt_mesh.start() runs the optimiser as
    Loci instead. auto() returns the setting."""
    global _auto
    if flag is not None:
        _auto = bool(flag)
        kernel.idle(_idle if _auto else None)
    return _auto


def aggressive(flag):
    """Testing mode: rewrite every function at its first call, verify gate only."""
    _rw.aggressive(flag)
