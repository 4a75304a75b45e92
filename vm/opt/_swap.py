# SPDX-License-Identifier: MIT
# Candidates and swaps: a function's candidates (its in-place rewrite, its native twin),
# each through every gate; the fastest that passes is journaled, then swapped in. The
# live swaps, and rolling one back.
import _budget
import _rw

import opt

from . import _experience, _gates, _inline, _journal, _source, _values

live = {}  # swap id (its journal entry's id) -> Swap


class Rewrite:
    # Head bytes rewritten in place (vm/rewrite): length-preserving, undone by restoring.
    kind = "rewrite"
    raises = ()  # the original's exception types on the gates' inputs (_gates.equivalent)

    def __init__(self, fn, edits, new):
        self.fn, self.edits, self.new = fn, edits, new

    def apply(self):
        _rw.apply(self.fn, self.edits)

    def undo(self):
        _rw.undo(self.fn)


class Native:
    # The same def compiled by the x64 emitter; promotion reroutes fn's calls to it
    # (vm/opt/mod/rw_promote.c) and leaves fn's bytecode untouched.
    kind = "native"
    edits = ()
    raises = ()

    def __init__(self, fn, twin, new, note=""):
        self.fn, self.twin, self.new = fn, twin, new
        self.note = note  # what the journal's entry adds to its detail when swapped

    def apply(self):
        _rw.promote(self.fn, self.twin)

    def undo(self):
        _rw.demote(self.fn)


class Swap:
    # A candidate swapped in, and what _policy.check() measures it against.
    def __init__(self, fn, old, cand, gate_rate, inputs, limits=None):
        self.fn = fn                        # the function
        self.old = old                      # SHA-256 of its opcodes before the swap
        self.new = cand.new                 # ... of the candidate's (machine code for a twin)
        self.cand = cand
        self.activity = _gates.activity(fn)  # its calls + loop iterations at the swap,
        self.misses = _gates.misses(fn)      # and its guards' misses
        self.gate_rate = gate_rate          # misses per unit of activity while measured
        self.inputs = inputs                # the calls it was gated on, to measure again
        self.passes = 0                     # check() passes since last measured
        self.limits = limits                # the budget its calls run under (Locus code)


def _counted_refusal(fn, src):
    # Why a def cannot get a twin that counts ops as the VM does, or None. The VM charges
    # an op at each entry of a frame: a generator's resumes and a handler's entry after
    # an exception are entries the twin does not charge.
    if _source.is_generator(fn):
        return "a generator: the VM charges an op at each resume"
    for word in COUNTED_REFUSE:
        if word in src:
            return "uses '%s': the VM charges an op at each handler's entry" % word.strip()
    if _source.has_generator_expression(src):
        return "a generator expression: the VM charges an op at each resume"
    return None


# _rw.float_mode's modes (vm/patches/0029).
FLOAT_PROBE, FLOAT_FEEDBACK = 1, 2


def _compile_twin(fn, src, count_ops, free, float_mode, inline):
    # (twin, (float sites, of them with a fast path, fast paths storing unboxed), calls
    # inlined): fn's native twin compiled in a float mode, and what that compile made.
    s0, inlined0 = _rw.float_stats(), _inline.made()
    twin = _source.compile_def(fn, src, True, True, count_ops, free, float_mode, inline)
    s1 = _rw.float_stats()
    return twin, (s1[0] - s0[0], s1[1] - s0[1], s1[3] - s0[3]), _inline.made() - inlined0


def _float_twin(fn, src, count_ops, free, inputs, limits, inline=()):
    # (twin, note, calls its compile inlined): the twin with float sites given fast paths
    # by type feedback. Compiled first to probe (each site passes its local leaves'
    # values to _rw before it runs), that twin replays fn's calls, on copies of their
    # arguments, each bounded by REPLAY_FLOOR cycles (and by `limits`, a Locus's budget);
    # then it is compiled again, and a site whose leaves held floats, small ints or both
    # on every call gets a fast path guarded by what each held. Gates 2 and 3 then judge
    # that twin like any other. `inline`: the callees it may inline (_inline.callees), in
    # both compiles, so the sites of their bodies get feedback too.
    if not opt.FLOAT_SITES or not inputs or (limits is not None and _budget.active()):
        # (Locus code is replayed only under its own budget, which cannot nest.)
        twin, _, inlined = _compile_twin(fn, src, count_ops, free, 0, inline)
        return twin, "", inlined
    probe, (sites, _, _), inlined = _compile_twin(fn, src, count_ops, free, FLOAT_PROBE, inline)
    if not sites:
        return probe, "", inlined  # with no site, no probe: the plain twin
    _rw.float_forget()
    cand = Native(fn, probe, None)
    for args in inputs:
        copy = _values.clone(args)
        before = _gates._snap(fn)
        cand.apply()
        try:
            _gates._run(fn, copy[0], opt.REPLAY_FLOOR, limits)
        finally:
            cand.undo()
            _gates._put_back(fn, before)
    ran = _rw.float_stats()[2]
    twin, (_, made, unboxed), inlined = _compile_twin(fn, src, count_ops, free, FLOAT_FEEDBACK,
                                                      inline)
    note = "float sites: %d, %d ran, %d with a fast path, %d storing unboxed" % (
        sites, ran, made, unboxed)
    return twin, note, inlined


def native_candidate(fn, profile, count_ops=False, inputs=(), limits=None):
    # (candidate, None) or (None, (gate, why)). Gate 1 for native code: the same source,
    # compiled to bytecode, must pass the verifier under fn's profile and use exactly
    # fn's global names, so the twin is fn's code and holds no other capability. Its
    # loops poll (vm/patches/0008) like the bytecode's jumps. `inputs` (fn's recorded
    # calls) and `limits` (their budget) give the twin's float sites type feedback.
    if type(fn) not in _gates.PLAIN and type(fn) is not _source.NATIVE:
        return None, ("source", "not a plain function (a closure, or a method using super())")
    try:
        src = _source.def_source(fn)
    except (TypeError, ValueError):
        src = None
    if src is None:
        return None, ("source", "no kept source text defines it")
    for word in opt.NATIVE_REFUSE:
        if word in src:
            return None, ("source", "uses '%s'" % word)
    try:
        free = () if type(fn) is _source.NATIVE else _source.free_order(fn, src)
    except ValueError as e:
        return None, ("source", "a closure's function: %s" % e)
    if _source.nested(fn) and not free:
        # (A closure's function is promoted all the same: a colony's env callback is
        # made once and called every round.)
        return None, ("source", "a def inside a def: each call makes a new function object")
    if count_ops:
        why = _counted_refusal(fn, src)
        if why:
            return None, ("budget", why)
    try:
        why = _gates.source_refusal(fn, src, profile, free)
        if why:
            return None, ("verify", why)
        # (A twin that counts ops enters every frame the VM enters: it inlines nothing.)
        inline = _inline.callees(fn, src, profile) if opt.INLINE and not count_ops and not free \
            else ()
        twin, note, inlined = _float_twin(fn, src, count_ops, free, inputs, limits, inline)
        if inline:
            note = "; ".join(x for x in (note, _inline.note(inline, inlined)) if x)
        new = _journal.digest(_rw.machine_code(twin))
    except Exception as e:  # noqa: BLE001 - any failure to compile refuses the twin
        return None, ("compile", "%s: %s" % (type(e).__name__, e))
    return Native(fn, twin, new, note), None


# The in-place rewrites of budgeted (Locus) code and of code whose calls take a live Mesh:
# not the per-site caches. Their calls are gated with a stand-in (for ctx,
# loci/python/opt_locus.py; for the Mesh, loci/python/opt_env.py), another type than the
# live object, so a method cache the gates measured hitting misses on every live call: the
# task colony's worker step, measured 3.6 % faster by the gates with them, made 39,224
# guard misses in 2,000 live steps and ran 2 % slower than not swapped.
BUDGETED_KINDS = tuple(k for k in _rw.KINDS if k != "cache")


def _candidate(fn, old, profile, kind, inputs, limits=None, stand_ins=False):
    # The candidate of this kind if it passes gate 1, else the journal entry saying why.
    # `stand_ins`: its calls are replayed with a stand-in for a live argument (a Mesh),
    # which the per-site caches would be measured on and then miss on every live call.
    # `limits`: a Locus's budget (its code is budgeted).
    budgeted = limits is not None
    if kind == "native":
        cand, refused = native_candidate(fn, profile, budgeted, inputs, limits)
        if cand is None:
            return _journal.add(fn, "rejected", refused[0], old, None, [], None, refused[1],
                                "native")
        return cand
    code = _rw.code(fn)
    edits = _rw.plan(fn, BUDGETED_KINDS) if budgeted or stand_ins else _rw.plan(fn)
    if not edits:
        return _journal.add(fn, "rejected", "plan", old, old, [], None, "nothing to rewrite")
    start = _rw.start(fn)
    new = _journal.digest(_gates.replacement(fn, edits)[start:start + len(code)])
    why = _gates.verify(fn, edits, profile)
    if why:
        return _journal.add(fn, "rejected", "verify", old, new, edits, None, why)
    return Rewrite(fn, edits, new)


# Words whose code a twin cannot count ops for as the VM does (_counted_refusal).
COUNTED_REFUSE = ("try:", "except", "finally", "with ", "yield")
# Why budgeted code other than a Locus's step gets no twin (loci/python/opt_locus.py).
NATIVE_BUDGET = ("only a Locus's step gets a twin: the mesh calls it, so each Locus's"
                 " step can be given a copy bound to its namespace")


def _kinds(fn, budgeted=False, twin=True):
    # The candidate kinds to gate, in order: the one an earlier boot swapped in first
    # (_experience), so that when it passes again the other is not gated at all. A native
    # function has one: its twin from the second tier. Budgeted (Locus) code: its
    # in-place rewrite, and a twin that counts ops as the VM does when `twin`.
    if type(fn) is _source.NATIVE:
        return ["native"], None
    if budgeted:
        return (["rewrite", "native"] if twin and opt.native_promotion else ["rewrite"]), None
    kinds = ["rewrite", "native"] if opt.native_promotion else ["rewrite"]
    h = _experience.hint(fn)
    first = h and h["swapped"]
    if first in kinds and first != kinds[0]:
        kinds.remove(first)
        kinds.insert(0, first)
    return kinds, first


def _reject(fn, cand, old, gate, gain, why):
    return _journal.add(fn, "rejected", gate, old, cand.new, cand.edits, gain, why, cand.kind)


def gate(fn, profile, inputs, limits=None, twin=True):
    # Every candidate (the in-place rewrite, the native twin) goes through the gates on
    # its own; of those that pass, the fastest is swapped in and the others are journaled
    # as rejected. Returns the swap's entry, else the last rejection. With `limits` (a
    # Locus's budget) gates 2 and 3 run every call under it (_gates).
    old = _journal.code_digest(fn)
    if inputs is None:
        inputs = _gates.recorded(fn)
    inputs = [a for a in inputs if _values.clone(a) is not None]
    stand_ins = any(_values.has_stand_in(a) for a in inputs)
    last = None
    passed = []  # (ratio, candidate, gate miss rate)
    kinds, hinted = _kinds(fn, limits is not None, twin)
    if limits is not None and opt.native_promotion and not twin:
        last = _journal.add(fn, "rejected", "budget", old, None, [], None, NATIVE_BUDGET,
                            "native")
    for kind in kinds:
        if passed and passed[0][1].kind == hinted:
            break  # the kind an earlier boot swapped in passed again: done
        cand = _candidate(fn, old, profile, kind, inputs, limits, stand_ins)
        if type(cand) is dict:
            last = cand
            continue
        try:
            why = _gates.equivalent(fn, cand, inputs, limits)
        except RuntimeError as e:
            # The swap itself cannot be made (the promotion table is full).
            cand.undo()
            last = _reject(fn, cand, old, "swap", None, str(e))
            continue
        if why:
            last = _reject(fn, cand, old, "equivalent", None, why)
            continue
        m0, a0 = _gates.misses(fn), _gates.activity(fn)
        why, ratio = _gates.faster(fn, cand, inputs, None, limits)
        # The guards' miss rate on the recorded calls: a swap is rolled back only if its
        # guards later miss clearly more often than they did when it measured faster.
        # Old and new code ran the same calls and loop iterations (gate 2), so the new
        # code's share of the activity is half of it.
        gate_rate = (_gates.misses(fn) - m0) / max((_gates.activity(fn) - a0) / 2, 1)
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
    detail = "" if watched else ("not watched for new exception types: %d swaps are"
                                 % opt.WATCH_MAX)
    if hinted == cand.kind:
        detail = ("gated first: swapped in an earlier boot" + ("; " if detail else "")
                  + detail)
    note = getattr(cand, "note", "")
    if note:
        detail = detail + ("; " if detail else "") + note
    e = _journal.add(fn, "swapped", None, old, cand.new, cand.edits, round(1 / ratio, 4),
                     detail, kind=cand.kind)
    s = Swap(fn, old, cand, gate_rate, inputs, limits)
    cand.apply()
    live[e["id"]] = s
    return e


def rollback(swap_id, reason="console"):
    """Restore the original bytes of swap `swap_id`; checks the digest matches."""
    if swap_id not in live:
        raise ValueError("opt.rollback: no live swap %r (see opt.swaps())" % (swap_id,))
    s = live.pop(swap_id)
    fn, cand = s.fn, s.cand
    _rw.unwatch(fn)
    cand.undo()
    got = _journal.code_digest(fn)
    verdict = "rolled back" if got == s.old else "rollback digest mismatch"
    return _journal.add(fn, verdict, None, s.new, got, cand.edits, None, reason, cand.kind)


def live_swap(swap_id):
    """The Swap in place under journal id `swap_id` (its candidate, .cand, may be
    wrapped by the caller that asked for it: loci/python/opt_locus.py), or None."""
    return live.get(swap_id)


def live_swaps():
    """[(id, Swap)] of the swaps in place."""
    return sorted(live.items())


def swaps():
    """[(id, function, rewrites, gain)] of the swaps in place now; rewrites is the
    number of in-place rewrites, or 'native' for a promoted function."""
    return [(sid, _journal.name(s.fn), s.cand.kind if s.cand.kind != "rewrite"
             else len(s.cand.edits), _journal.entries[sid - 1]["gain"])
            for sid, s in sorted(live.items())]
