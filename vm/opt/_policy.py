# SPDX-License-Identifier: MIT
# What the optimiser works on and when: which functions it may pick (trusted code, the
# profiler's hottest), one move at a time (record, then gate), the rules that roll a
# swap back, and the schedules that drive it (optimise passes, settle, auto).
import sys

import _prof
import _rw

import __main__
import kernel
import opt

from . import _experience, _gates, _journal, _source, _swap

done = {}  # id(bytecode owner fn) -> journal id of its last verdict
_keys = {}  # key (bytes) -> fn
_key_of = {}  # id(fn) -> key
_recording = None  # the function whose calls _rw is recording
_rec_passes = 0  # optimise() passes it has been recorded for without one replayable call
_eligible_memo = {}  # id(fn) -> (fn, bool); holding fn keeps its id from being reused
trusted_ns = []  # namespaces trust() added (e.g. a benchmark's exec() globals)
_unslotted = [0]
_auto = False
_last_pass = [0]
_native_walk = [0, []]  # back edges counted at the last walk for hot native code, its finds


# ---- what to work on ---------------------------------------------------------------------

def key(fn):
    """The field key (bytes, <= 15) naming fn in the 'heat' flavour."""
    k = _key_of.get(id(fn))
    if k is None:
        # Readable in top('heat'): the name's first 10 bytes and a serial number.
        k = ("%s.%x" % (_journal.name(fn)[:10], len(_keys) + 1)).encode()
        _keys[k] = fn
        _key_of[id(fn)] = k
    return k


def by_key(k):
    return _keys.get(bytes(k))


def trust(namespace):
    """Let the optimiser pick functions whose globals are `namespace` (a dict that is
    neither __main__'s nor a module's, e.g. one code was exec()'d in). Never a Locus's."""
    if not any(namespace is t for t in trusted_ns):
        trusted_ns.append(namespace)


def trusted(fn):
    """Whether fn's code is one the optimiser may pick: its globals are the console's
    (__main__), a module's, or a namespace trust() added. A Locus's functions live in a
    namespace of their own, and the gates replay calls with no budget: Locus code must
    never get here."""
    return _trusted(fn.__globals__)


def _trusted(g):
    return any(g is ns for ns in _namespaces())


def _namespaces():
    # The trusted namespaces: the console's, trust()ed ones, the modules'.
    yield __main__.__dict__
    yield from trusted_ns
    for m in sys.modules.values():
        d = getattr(m, "__dict__", None)
        if d is not None:
            yield d


# The optimiser's own modules besides this package: the optimiser Loci and their server,
# and the profiler's console helper.
OWN_MODULES = ("opt_mesh", "opt_locus", "prof")


def _own_code(g):
    # Whether g is the globals of the optimiser's own code: it is never its own
    # candidate, since the gates and swaps run it while they judge it.
    name = g.get("__name__", "")
    return name == "opt" or name.startswith("opt.") or name in OWN_MODULES


def _code_refusal(fn):
    # Why fn's code is not the optimiser's to take, or None. Code that is not a heap
    # block of its own (frozen, or a .mpy file's read in place) gets one here: only fn
    # then runs the copy, and its rewrites change only fn.
    g = fn.__globals__
    if _own_code(g):
        return "the optimiser's own code"
    if _source.is_frozen(fn):
        name = g.get("__name__", "")
        if not opt.FROZEN:
            return "frozen code, and opt.FROZEN is off"
        if name.split(".")[0] in opt.FROZEN_SKIP:
            return "module %s writes to disks or drives the console (opt.FROZEN_SKIP)" % name
    if not _source.own(fn):
        return "its code has no end to copy it by"
    return None


def _eligible(fn):
    # Plain bytecode (and generator) functions, frozen ones in a heap copy (_source.own),
    # and native functions whose def is kept, of trusted code other than the optimiser's
    # own, that delete no globals. The gates call them again:
    # the globals they store are saved first, compared after the old and the new code
    # ran, and put back (_gates).
    native = type(fn) is _source.NATIVE
    if (type(fn) not in _gates.PLAIN and not native) or id(fn) in done:
        return False
    memo = _eligible_memo.get(id(fn))
    if memo is not None and memo[0] is fn:
        return memo[1]
    try:
        if native:
            # Its only candidate is a twin (native code has no bytecode to rewrite).
            ok = (opt.native_promotion and _trusted(fn.__globals__)
                  and _source.def_source(fn) is not None)
        else:
            ok = _trusted(fn.__globals__) and _code_refusal(fn) is None
            _rw.start(fn)  # raises for code still not in a heap block of its own
        ok = ok and not _gates.names(fn)[2]
    except (ValueError, TypeError):
        ok = False
    _eligible_memo[id(fn)] = (fn, ok)
    return ok


def _native_hot():
    # [(activity, fn)] of native functions in trusted namespaces whose loops ran at least
    # NATIVE_HOT back edges (the profiler sees no native code: _rw counts its back edges
    # by where they are, vm/opt/mod/rw_native_glue.c). The namespaces are walked again
    # only once NATIVE_HOT more back edges were counted since the last walk.
    heat = _rw.native_heat()
    total = sum(n for _a, n in heat)
    if total < opt.NATIVE_HOT:
        return []
    if _native_walk[0] <= total < _native_walk[0] + opt.NATIVE_HOT:
        return [(a, fn) for a, fn in _native_walk[1] if id(fn) not in done]
    out = []
    seen = set()
    for ns in _namespaces():
        for fn in ns.values():
            if type(fn) is not _source.NATIVE or id(fn) in seen or id(fn) in done:
                continue
            seen.add(id(fn))
            a = _gates.native_activity(fn, heat)
            if a >= opt.NATIVE_HOT and _eligible(fn):
                out.append((a, fn))
    _native_walk[0], _native_walk[1] = total, out
    return out


def hot(n=8, counters=None):
    """[(key, fn, activity)] of the hottest undecided functions the profiler reported,
    and of the native functions whose loops ran hot. `counters`: a _prof.counters() the
    caller has just read (opt_mesh reads them once for this and opt_locus.hot)."""
    out = []
    for fn, calls, back, nhot in counters if counters is not None else _prof.counters(True):
        if nhot and _eligible(fn):
            out.append((calls + back, fn))
    out += _native_hot()
    out.sort(key=lambda t: -t[0])
    return [(key(fn), fn, a) for a, fn in out[:n]]


# ---- one move at a time ------------------------------------------------------------------

def consider(fn, profile="trusted", inputs=None, limits=None, twin=True):
    """Run the four gates on fn's rewrite candidate; swap it in if all pass. Returns the
    journal entry (also for rejections); fn then counts as decided for optimise().
    limits={"ops", "cycles", "alloc"}: replay and time every call under that budget and
    require the same ops counted (Locus code, loci/python/opt_locus.py). Such code is not
    marked decided here: its caller keeps its verdicts (by code, for every Locus), and
    `twin` says whether it may take a native twin (one that counts ops as the VM does)."""
    if limits is not None:
        return _swap.gate(fn, profile, inputs, limits, twin)
    return _decide(fn, _swap.gate(fn, profile, inputs, limits))


def attempt(fn, profile="trusted"):
    """One optimiser move on fn: start recording its calls if none are recorded yet
    (returns None; try again after it has run), else run the four gates (returns the
    journal entry). A function is decided once. One function is recorded at a time: a
    move on another function while one is recording waits (None)."""
    global _recording, _rec_passes
    if id(fn) in done:
        return _journal.entries[done[id(fn)] - 1]
    if _recording is not None and _recording is not fn:
        return None
    if _recording is None:
        why = _code_refusal(fn) if type(fn) in _gates.PLAIN else None
        if why is not None:
            return _decide(fn, _journal.add(fn, "rejected", "frozen", None, None, [], None,
                                            why, "any"))
        why = _experience.refusal(fn)
        if why is not None:
            return _decide(fn, _journal.add(fn, "rejected", "experience",
                                            _journal.code_digest(fn), None, [], None,
                                            why, "any"))
        try:
            _rw.record(fn, opt.INPUTS)
        except ValueError as e:
            return _decide(fn, _journal.add(fn, "rejected", "equivalent",
                                            _journal.code_digest(fn), None, [], None,
                                            str(e)))
        _recording, _rec_passes = fn, 0
        return None
    inputs = _gates.recorded(fn)
    if not inputs and len(_rw.recorded(fn)) == 0:
        _rec_passes += 1
        if _rec_passes < opt.PATIENCE:
            return None
    _rw.record(fn, 0)
    _recording = None
    if not inputs:
        return _decide(fn, _journal.add(fn, "rejected", "equivalent",
                                        _journal.code_digest(fn), None, [], None,
                                        "no replayable calls recorded"))
    return _decide(fn, _swap.gate(fn, profile, inputs))


def _decide(fn, e):
    done[id(fn)] = e["id"]
    return e


def recording():
    """The function whose calls are being recorded, or None."""
    return _recording


def stop_recording():
    """Cancel a recording in progress (its function stays undecided). While one is on,
    every call pays the frame-enter hook's compare."""
    global _recording
    if _recording is not None:
        _rw.record(_recording, 0)
        _recording = None


# ---- the rules that roll a swap back -----------------------------------------------------

def check():
    """Roll back swaps whose guards keep failing, whose function let an exception type
    escape that its gates never saw raised, and (every RECHECK_PASSES calls) swaps that
    no longer measure faster on their recorded calls. Returns the rollback entries."""
    out = []
    for sid in list(_swap.live):
        s = _swap.live[sid]
        new_exc = _rw.raised(s.fn)
        if new_exc is not None:
            out.append(_swap.rollback(sid, "raised %s, a type its gates never saw"
                                      % new_exc.__name__))
            continue
        s.passes += 1
        if s.passes >= opt.RECHECK_PASSES:
            s.passes = 0
            cand = s.cand
            cand.undo()
            why, ratio = _gates.faster(s.fn, cand, s.inputs, 3, s.limits)
            cand.apply()
            if ratio is not None and ratio > 1.0:
                out.append(_swap.rollback(sid, "regressed: new/old %.4f on its recorded calls"
                                          % ratio))
                continue
        fn = s.fn
        if s.cand.kind != "rewrite":
            continue
        misses = _gates.misses(fn) - s.misses
        active = _gates.activity(fn) - s.activity
        if active < 0:
            # The profiler gave fn's slot to another function (or was reset): its counts
            # restarted from zero, so restart the comparison too.
            s.activity, s.misses = _gates.activity(fn), _gates.misses(fn)
            continue
        if misses > 64 and misses > max(opt.MISS_SHARE, 2 * s.gate_rate) * max(active, 1):
            why = "guards missed %d times in %d calls+iterations" % (misses, active)
            out.append(_swap.rollback(sid, why))
    return out


def _evict():
    # Exits the profiler could not count (stats 'unslotted': a full probe window during
    # a collection) mean new code may be invisible: start counting afresh. Live swaps
    # keep their miss baselines; their activity baselines restart from zero.
    n = _prof.stats()["unslotted"]
    if n > _unslotted[0]:
        _prof.reset()
        n = 0
        for s in _swap.live.values():
            s.activity = 0
    _unslotted[0] = n


def forget(namespace):
    """Roll back every live swap of a function whose globals are `namespace`, and stop
    trusting it: for code about to be dropped (a benchmark's exec() namespace), so its
    functions and native twins are not kept alive by the optimiser. Returns the rollback
    entries."""
    out = [_swap.rollback(sid, "forgotten") for sid, s in sorted(_swap.live.items())
           if s.fn.__globals__ is namespace]
    for i in range(len(trusted_ns) - 1, -1, -1):
        if trusted_ns[i] is namespace:
            trusted_ns.pop(i)
    for memo in (_eligible_memo, _gates.names_memo):
        for k in [k for k, v in memo.items() if v[0].__globals__ is namespace]:
            del memo[k]
    _native_walk[:] = [0, []]  # it may hold the namespace's functions
    return out


# ---- passes: on demand, until settled, or while the console waits ------------------------

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


def _idle():
    now = kernel.uptime_ms()
    if now - _last_pass[0] >= opt.AUTO_PERIOD_MS:
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
