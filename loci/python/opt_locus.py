# SPDX-License-Identifier: MIT
# Locus code as the optimiser's candidate (issue 20): the Loci's own functions through
# opt's four gates, with nothing of a live Locus touched while they are gated.
#   - Every Locus of one source runs one compiled code (locus_sandbox caches it), each in
#     its own namespace: a function is named by its code (`_rw.code_id`), and an in-place
#     rewrite of that code is a swap for every Locus running it, now and later.
#   - Calls are replayed in a copy of a Locus's namespace (its module code run again, its
#     state copied in) with a StandIn for ctx: the stand-in answers reads from the field
#     without changing it and records every call. Old and new code must make the same
#     calls with the same arguments, so the live field would see the same deposits.
#   - Every replay and timed call runs under the Locus's own budget, and old and new code
#     must count the same ops (opt._gates): the budget stops both at the same point.
#   - A step may take a native twin that counts ops as the VM does (vm/patches/0023):
#     each Locus then steps a copy of it bound to its own namespace (LociTwin). Other
#     Locus functions get no twin (opt._swap.NATIVE_BUDGET).
import _budget
import _prof
import _rw
import locus_sandbox
import mesh as _mesh
import opt

PROFILE = "locus"
# A Locus function is looked at once the profiler has counted this many calls and back
# edges for its code (its first hot event fires at 1,024).
HOT = 1024
# Seed of the stand-in's rand(): replays of one call draw the same numbers.
RAND_SEED = 0x9E3779B9

decided = {}  # code id -> the journal entry of its last verdict


def _plain(fn):
    return type(fn) in opt.PLAIN


def code_id(fn):
    """Where fn's code is (None for code the optimiser cannot rewrite)."""
    try:
        return _rw.code_id(fn)
    except (TypeError, ValueError):
        return None


def functions(m):
    """{code id: (fn, record)}: each function of a live Locus's code, with one Locus
    running it. One namespace is read per distinct source."""
    out = {}
    seen = set()   # codes, not their id()s: a heap address is a big int, made anew each time
    for r in m.loci.values():
        if r.state == "retired" or r.ns is None or r.code in seen:
            continue
        seen.add(r.code)
        for v in r.ns.values():
            if _plain(v) and v.__globals__ is r.ns:
                cid = code_id(v)
                if cid is not None and cid not in out:
                    out[cid] = (v, r)
    return out


def hot(m, n=8, counters=None):
    """[(key, fn, activity)]: the hottest undecided Locus functions by the profiler's
    counts, which are per code (one entry for all the Loci running it). `counters`: a
    _prof.counters() just read."""
    live = functions(m)
    out = []
    for f, calls, back, nhot in counters if counters is not None else _prof.counters(True):
        if not nhot or calls + back < HOT or not _plain(f):
            continue
        cid = code_id(f)
        if cid in live and cid not in decided:
            out.append((calls + back, live[cid][0]))
    out.sort(key=lambda t: -t[0])
    return [(opt.key(fn), fn, a) for a, fn in out[:n]]


def is_locus_code(m, fn):
    return _plain(fn) and code_id(fn) in functions(m)


def _copy(v, what):
    c = opt.copy_value(v)
    if c is None:
        raise ValueError("%s holds a %s, which a replay cannot copy" % (what, type(v).__name__))
    return c[0]


class StandIn:
    """The ctx a Locus's calls are replayed with. It answers sense, around, gradient and
    top from the field as it is (reads only), takes deposits, moves and the rest as
    records, and draws rand() from its own seeded generator. Its state, which the
    equivalence gate compares, is the list of calls made, its position and its mem."""

    REPLAY = True   # opt._values copies it with copy() and compares state()

    def __init__(self, field, r=None):
        self._field = field
        if r is None:
            return
        self.id, self.name, self.tick = r.id, r.name, r.ctx.tick
        self.args = _copy(r.args, "ctx.args")
        self.mem = _copy(r.mem, "ctx.mem")
        self.pos = r.pos
        self._attend = r.attend
        self._seed = (RAND_SEED ^ r.id) & 0x3FFFFFFF
        self.calls = []

    def copy(self):
        c = StandIn(self._field)
        c.id, c.name, c.tick, c.pos, c._attend = self.id, self.name, self.tick, self.pos, \
            self._attend
        c.args, c.mem = _copy(self.args, "ctx.args"), _copy(self.mem, "ctx.mem")
        c._seed = self._seed
        c.calls = list(self.calls)
        return c

    def state(self):
        return (self.calls, self.pos, self.mem, self._seed)

    def __repr__(self):
        return "<ctx stand-in of Locus %d>" % self.id

    def _at(self, flavour, where):
        # Where a call with where=None reads: the key it attends to, else its position.
        if where is not None:
            return where
        a = self._attend
        if type(a) is dict and a.get("flavour") == flavour and "key" in a:
            return a["key"]
        return self.pos

    def sense(self, flavour, where=None):
        where = self._at(flavour, where)
        self.calls.append(("sense", flavour, where))
        return self._field.sense(flavour, where)

    def around(self, flavour, where=None):
        x, y = self._at(flavour, where)
        self.calls.append(("around", flavour, (x, y)))
        return self._field.neighbourhood(flavour, x, y)

    def gradient(self, flavour, where=None):
        x, y = self._at(flavour, where)
        self.calls.append(("gradient", flavour, (x, y)))
        return self._field.gradient(flavour, x, y)

    def top(self, flavour, k):
        self.calls.append(("top", flavour, k))
        return self._field.topk(flavour, min(int(k), 64))

    def deposit(self, flavour, amount, where=None):
        self.calls.append(("deposit", flavour, amount, where))
        return True

    def goto(self, x, y):
        self.calls.append(("goto", x, y))
        self.pos = (x, y)

    def rand(self):
        # xorshift32, 30 bits: any fixed sequence does, both sides draw the same.
        s = self._seed
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self._seed = s
        self.calls.append(("rand",))
        return s & 0x3FFFFFFF

    def random(self):
        return self.rand() / 1073741824.0

    def log(self, text):
        self.calls.append(("log", text))

    def spawn(self, manifest):
        self.calls.append(("spawn", _copy(manifest, "a manifest")))

    def retire(self):
        self.calls.append(("retire",))

    def rewrite(self, key):
        self.calls.append(("rewrite", key))

    def port_in(self, port, width=1):
        self.calls.append(("port_in", port, width))
        return 0

    def port_out(self, port, value, width=1):
        self.calls.append(("port_out", port, value, width))

    def mem_read(self, addr, n):
        self.calls.append(("mem_read", addr, n))
        return bytes(n if type(n) is int and 0 <= n <= 4096 else 0)


def _exec(code_ns):
    exec(code_ns[0], code_ns[1])


def replay_namespace(r):
    """A copy of record r's namespace: its module code run again in a fresh one (under
    the budget its start had), then a copy of each value r's code has stored since.
    Raises ValueError when a value cannot be copied faithfully."""
    loaded, stored = locus_sandbox.names_of(r.code)
    ns = locus_sandbox.namespace(loaded, stored, r.name)
    b = r.budget
    st, val, _ops, _cyc, _alloc = _budget.run(_exec, (r.code, ns), _mesh.INIT_OPS,
                                              b["cycles"] or opt.MAX_CALL_CYCLES, b["alloc"])
    if st != _budget.OK:
        raise ValueError("its module code did not run again (status %d: %r)" % (st, val))
    for k, v in r.ns.items():
        if ns.get(k) is v or (_plain(v) and v.__globals__ is r.ns):
            continue   # a built-in both bind, or a def of the code, made again above
        ns[k] = _copy(v, "its global %r" % k)
    return ns


def limits(r):
    b = r.budget
    return {"ops": b["ops"], "cycles": b["cycles"], "alloc": b["alloc"]}


def _runners(m, cid, n):
    # Up to n live records running code cid.
    out = []
    for r in m.loci.values():
        if r.state == "retired" or r.ns is None:
            continue
        for v in r.ns.values():
            if _plain(v) and v.__globals__ is r.ns and code_id(v) == cid:
                out.append(r)
                break
        if len(out) >= n:
            break
    return out


def _inputs(m, fn, ns, runners, lim):
    # The calls to gate fn on: for the step, a stand-in ctx of each runner; for another
    # function, the calls the step made of it, run on those stand-ins (under the budget).
    stand_ins = [(StandIn(m.field, r),) for r in runners]
    if fn is ns.get("step"):
        return stand_ins
    step = ns.get("step")
    if not _plain(step):
        return []
    _rw.record(fn, opt.INPUTS)
    try:
        for (s,) in stand_ins:
            before = {k: v for k, v in ns.items()}
            _budget.run(step, s.copy(), lim["ops"], lim["cycles"] or opt.MAX_CALL_CYCLES,
                        lim["alloc"])
            ns.update(before)
        return [tuple(a) for a in _rw.recorded(fn)]
    finally:
        _rw.record(fn, 0)


def attempt(m, fn):
    """One optimiser move on Locus function fn: the gates on its code, in a copy of a
    Locus's namespace, with the calls that Locus's step makes. Returns the journal entry,
    or None while opt records another function (try again later)."""
    cid = code_id(fn)
    if cid in decided:
        return decided[cid]
    if opt.recording() is not None:
        return None
    runners = _runners(m, cid, opt.INPUTS)
    if not runners:
        raise ValueError("no live Locus runs %s's code" % fn.__name__)
    r = runners[0]
    ns = replay_namespace(r)
    twin = [v for v in ns.values() if _plain(v) and v.__globals__ is ns and code_id(v) == cid]
    if not twin:
        raise ValueError("%s is not a def of its Locus's code" % fn.__name__)
    lim = limits(r)
    fn2 = twin[0]
    step = fn2 is ns.get("step")
    e = opt.consider(fn2, PROFILE, _inputs(m, fn2, ns, runners, lim), lim, twin=step)
    if e["verdict"] == "swapped" and e["kind"] == "native":
        s = opt.live_swap(e["id"])
        s.cand = LociTwin(s.cand, m, cid)
        s.cand.refresh()  # the copy of the promoted twin is in place: now every Locus's
    decided[cid] = e
    return e


class LociTwin:
    """A step's twin swapped in for every Locus running its code: the gates promoted the
    step of the namespace copy; each live Locus's record steps a copy of the twin bound
    to its own namespace (`_rw.rebind`), and Loci spawned later get theirs at the next
    refresh(). Undone, every record steps its own bytecode step again."""

    kind = "native"
    edits = ()

    def __init__(self, inner, m, cid):
        self.inner, self.m, self.cid = inner, m, cid
        self.new, self.raises, self.fn = inner.new, inner.raises, inner.fn
        self.copies = []  # (record, the twin copy its step_fn was set to)
        self.mesh_at = None  # the mesh's (next_id, retired) at the last refresh
        self.seen = None  # the first exception type a copy raised that the gates never saw
        if _on_raise not in m.raise_hooks:
            m.raise_hooks.append(_on_raise)

    def apply(self):
        self.inner.apply()
        self.refresh()

    def refresh(self):
        # Only a spawn, a retirement or a restart makes a record that steps its bytecode
        # step: with none since the last refresh, there is nothing to walk.
        at = (self.m.next_id, self.m.retired)
        if at == self.mesh_at:
            return
        self.mesh_at = at
        twin = self.inner.twin
        for r in _runners(self.m, self.cid, len(self.m.loci)):
            if r.step_fn is r.ns.get("step"):
                c = _rw.rebind(twin, r.ns)
                r.step_fn = c
                self.copies.append((r, c))

    def undo(self):
        self.inner.undo()
        for r, c in self.copies:
            if r.step_fn is c:
                r.step_fn = r.ns.get("step") if r.ns is not None else None
        self.copies = []
        self.mesh_at = None


def _twins(m=None):
    # (swap id, LociTwin) of every live step twin, of mesh m's Loci when m is given.
    return [(sid, s.cand) for sid, s in opt.live_swaps()
            if type(s.cand) is LociTwin and (m is None or s.cand.m is m)]


def refresh(m):
    """Give Loci spawned since a step's twin was swapped in their copy of it."""
    for _sid, c in _twins(m):
        if c.copies:
            c.refresh()


def _on_raise(r, exc):
    # A Locus's step raised (mesh.raise_hooks): note the type if it came out of a twin's
    # copy and is one the twin's gates never saw raised, as the watch does for every
    # other swap (vm/opt/mod/rw_watch.c; the mesh calls a copy directly, not through a
    # promoted function's call slot).
    if not isinstance(exc, Exception):
        return
    for _sid, c in _twins():
        if c.seen is None and type(exc) not in c.raises and \
                any(r is rec and r.step_fn is copy for rec, copy in c.copies):
            c.seen = type(exc)


def check(m):
    """Roll back each step twin of mesh m whose copies raised an exception type its
    gates never saw (what opt.check() does for the swaps it watches). Returns the
    rollback entries."""
    return [opt.rollback(sid, "raised %s, a type its gates never saw" % c.seen.__name__)
            for sid, c in _twins(m) if c.seen is not None]
