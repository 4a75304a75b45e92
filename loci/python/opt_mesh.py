# SPDX-License-Identifier: MIT
# The optimiser as Loci (issue 7, "the loop runs on itself"), runtime side: turns the
# profiler's counters into 'heat' traces and serves ctx.rewrite requests with opt's gates
# (vm/opt/README.md lists the optimiser's other parts). It serves code opt.trusted()
# accepts, and the Loci's own code (issue 20): that is gated by opt_locus, in a copy of a
# Locus's namespace under the Locus's budget, never in a live Locus.
import _prof
import field
import mesh as _mesh
import opt
import opt_env  # noqa: F401 - registers the Mesh's stand-in: env callbacks are candidates
import opt_locus

import kernel

HEAT, TRYING, OUTCOME = "heat", "trying", "opt"
# The heat of a whole pass, on one key: the optimiser Loci wake on it, so once every hot
# function is decided and the heat has faded they sleep instead of stepping every round.
WAKE, WAKE_KEY = "hot", "any"
KEYS = 64                 # keys per flavour: hot functions tracked at once
HEAT_UNIT = 1024          # calls + loop back-edges per unit of heat (the profiler's first
                          # hot threshold, LOCIOS_PROF_HOT_FIRST)
HEAT_CAP = 1000.0         # the most heat one producer pass deposits on a key
SWAPPED, REJECTED, GAVE_UP = 1.0, 0.25, 0.1   # what an outcome deposits on 'opt'
PATIENCE = 100            # serve passes a request may wait for its function to be called
LOG = 256                 # outcomes kept in Server.log
EVERY = 5                 # rounds between producer passes: a pass costs ~0.3-0.4 M guest
                          # cycles (opt.hot reads every profiler counter), more than a
                          # round of a few Loci; 5 gave the same first swap as 1 (round 8)
IDLE_MAX = 16             # an idle producer (nothing undecided got hotter) doubles its
                          # period up to this many times EVERY rounds; any heat resets it
LAST = [None]             # the server started last, for board()


def flavours(keys=KEYS):
    """The keyed flavours the optimiser needs; pass them to mesh.Mesh([...])."""
    return [field.keyed(HEAT, keys, E=0.1, min=0.01),      # fades within ~45 idle ticks
            field.keyed(TRYING, keys, E=0.2, min=0.05),    # a mark not kept up fades fast
            field.keyed(OUTCOME, keys, E=0.01, min=0.01),  # decisions stay up a while
            field.keyed(WAKE, 1, E=0.1, min=0.01)]         # fades as `heat` does


def manifest(name, look=8, min_heat=1.0, patience=200, rewrite=True):
    """An optimiser Locus: senses heat and outcomes, marks 'trying', may ask rewrites.
    It steps while a pass's heat is above min_heat (the `hot` trace), and at least every
    mesh.PATIENCE rounds, when it sees outcomes that came while it slept."""
    caps = [{"flavours": [HEAT, OUTCOME, WAKE], "ops": ["sense"]},
            {"flavours": [TRYING], "ops": ["sense", "deposit"], "rate": 100.0}]
    if rewrite:
        caps.append({"rewrite": True})
    return {"name": name, "module": "colonies.src_optimiser:SOURCE", "caps": caps,
            "budget": {"ops": 4000, "alloc": 8192, "deposits": 20},
            "wake": {"flavour": WAKE, "key": WAKE_KEY, "above": min_heat},
            "args": {"look": look, "min_heat": min_heat, "patience": patience,
                     "mark": 1.0}}


class Server:
    """Runs after every round of mesh `m` (an env callback, outside every step): every
    `every` rounds deposits heat for the hottest functions, then serves the head of the
    rewrite queue: opt.attempt, and the outcome onto 'opt'."""

    def __init__(self, m, every=EVERY, n=8, loci=True):
        missing = [f for f in (HEAT, TRYING, OUTCOME, WAKE) if f not in m.layout]
        if missing:
            raise ValueError("opt_mesh: the mesh has no flavour %r (see flavours())"
                             % missing[0])
        self.m = m
        self.every = every
        self.n = n
        self.loci = loci          # whether the Loci's own code is a candidate too
        self.last = {}            # key -> the function's activity when last looked at
        self.waited = 0           # passes the queue's head has waited for recorded calls
        self.log = []             # (round, key, function, Locus id, verdict, gate, journal id)
        self.produced = 0         # producer passes, and their guest cycles
        self.produce_cycles = 0
        self.lost = 0             # heat deposits a full flavour refused
        self.first_swap = None    # the round of the first swap
        self.period = every       # rounds between producer passes now (see IDLE_MAX)
        self.next_pass = 0        # the round of the next producer pass
        LAST[0] = self
        m.env(self)

    def __call__(self, m):
        if m.rounds >= self.next_pass and m.rounds % self.every == 0:
            busy = self.produce() or m.rewrites or self.waited
            # Settled (nothing undecided got hotter): look less often, up to IDLE_MAX
            # times less; the optimiser's own cost then fades with it.
            self.period = self.every if busy else min(2 * self.period,
                                                      IDLE_MAX * self.every)
            self.next_pass = m.rounds + self.period
        self.serve()

    def produce(self):
        """Heat proportional to each hot function's activity since the last pass; returns
        how many functions got some."""
        t0 = kernel.cycles()
        f = self.m.field
        n = heated = 0
        total = 0.0
        counters = _prof.counters(True)   # read once, for both: only hot functions'
        hot = [h for h in opt.hot(2 * self.n, counters) if opt.trusted(h[1])]
        if self.loci:
            hot += opt_locus.hot(self.m, 2 * self.n, counters)
            hot.sort(key=lambda h: -h[2])
        for key, _fn, act in hot:
            if n >= self.n:
                break
            n += 1
            d = act - self.last.get(key, 0)
            self.last[key] = act
            if d > 0:
                heated += 1
                h = min(d / HEAT_UNIT, HEAT_CAP)
                try:
                    f.deposit(HEAT, key, h, _mesh.MESH_ID)
                    total += h
                except field.FieldError:
                    self.lost += 1
        if total > 0:
            # At least every key's heat: the optimiser Loci wake while any may be above
            # their min_heat.
            f.deposit(WAKE, WAKE_KEY, total, _mesh.MESH_ID)
        self.produced += 1
        if self.loci:
            opt_locus.refresh(self.m)   # Loci spawned since a step's twin was swapped in
            for e in opt_locus.check(self.m):   # twins whose copies raised a new type
                self._note(None, e["function"], None, e["verdict"], e["detail"], e["id"])
        if opt.swaps():
            opt.check()   # the rollback rules, for the swaps made here too
        self.produce_cycles += kernel.cycles() - t0
        return heated

    def serve(self):
        """Serves the queue's head: opt records one function's calls at a time, so the
        others wait. At most one request is gated per pass (the gates take many cycles)."""
        q = self.m.rewrites
        while q:
            key, lid = q[0]
            fn = opt.by_key(key)
            locus = fn is not None and self.loci and opt_locus.is_locus_code(self.m, fn)
            if key not in self.last or fn is None or not (locus or opt.trusted(fn)):
                # Not a key the producer gave heat to: nothing is run for it.
                q.pop(0)
                self._note(key, None, lid, "unknown key", None, None)
                continue
            try:
                e = opt_locus.attempt(self.m, fn) if locus else opt.attempt(fn)
            except Exception as x:  # noqa: BLE001 - a bad request must not stop the mesh
                q.pop(0)
                self.waited = 0
                self._outcome(key, REJECTED)
                self._note(key, fn, lid, "error", "%s: %s" % (type(x).__name__, x), None)
                return
            if e is None:
                self.waited += 1
                if self.waited <= PATIENCE:
                    return
                q.pop(0)
                self.waited = 0
                self._outcome(key, GAVE_UP)
                self._note(key, fn, lid, "gave up", "recording", None)
                continue
            q.pop(0)
            self.waited = 0
            self._outcome(key, SWAPPED if e["verdict"] == "swapped" else REJECTED)
            self._note(key, fn, lid, e["verdict"], e["gate"], e["id"])
            if e["verdict"] == "swapped" and self.first_swap is None:
                self.first_swap = self.m.rounds
            return

    def _outcome(self, key, amount):
        try:
            self.m.field.deposit(OUTCOME, key, amount, _mesh.MESH_ID)
        except field.FieldError:
            self.lost += 1

    def _note(self, key, fn, lid, verdict, gate, jid):
        name = fn if fn is None or type(fn) is str else fn.__name__
        self.log.append((self.m.rounds, key, name, lid, verdict, gate, jid))
        if len(self.log) > LOG:
            self.log.pop(0)

    def cost(self):
        """Mean guest cycles of one producer pass."""
        return self.produce_cycles // max(1, self.produced)


def start(m=None, n=2, seed=1, every=EVERY, console=True, loci=True):
    """A mesh with the optimiser's flavours (or `m`, which must have them), its server,
    and n optimiser Loci. Returns the server (its mesh is .m); console=True makes the
    mesh the one `lo` shows: then resume() runs it in the background, top('heat')."""
    if m is None:
        m = _mesh.Mesh(flavours(), seed=seed)
    s = Server(m, every, loci=loci)
    for i in range(n):
        m.spawn(manifest("optimiser-%d" % (i + 1)))
    if console:
        import lo_mesh
        lo_mesh.use_mesh(m)
    return s


def board(k=10):
    """The hottest keys with their function, heat, mark, outcome and last verdict."""
    s = LAST[0]
    if s is None:
        raise RuntimeError("no optimiser yet: opt_mesh.start(n=2)")
    f = s.m.field
    verdict = {}
    for e in s.log:
        verdict[e[1]] = "%s%s by %s" % (e[4], " (%s)" % e[5] if e[5] else "", e[3])
    keys = [kv[0] for kv in f.topk(HEAT, min(k, 20))]
    for kv in f.topk(OUTCOME, min(k, 20)):
        if kv[0] not in keys and len(keys) < k:
            keys.append(kv[0])
    print("%-6s %-16s %9s %7s %6s  %s" % ("key", "function", "heat", "trying", "opt",
                                          "verdict"))
    for key in keys:
        fn = opt.by_key(key)
        print("%-6s %-16s %9.3g %7.3g %6.3g  %s" % (
            key.decode(), fn.__name__[:16] if fn is not None else "?", f.sense(HEAT, key),
            f.sense(TRYING, key), f.sense(OUTCOME, key), verdict.get(key, "-")))
    print("round %d; queue %d; producer %d cycles a pass; first swap at round %s" % (
        s.m.rounds, len(s.m.rewrites), s.cost(), s.first_swap))
