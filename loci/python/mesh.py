# SPDX-License-Identifier: MIT
# The Loci mesh: spawns Loci from manifests, grants their capabilities, and schedules
# them by the traces at their attention. Nothing calls a Locus but round() below.
import _budget
import _cap
import _mesh
import audit_store
import field
import locus_manifest
import locus_sandbox
import locus_text
from _mesh import Record

MESH_ID = field.REPL          # depositor id of the console, the mesh and colony set-ups
FIRST_ID = 2
MAX_STRIKES = 3               # a third failed step retires a Locus
MAX_RESTARTS = 3              # restart "on-failure": at most this many re-spawns
BACKOFF_MAX = 64              # rounds; a strike backs off 2**strikes rounds, capped
AGE_WEIGHT = 0.01             # activation gained per round without a step
PATIENCE = 50                 # a Locus waiting on a wake condition steps at least this often
INIT_OPS = 20000              # budget of a Locus's module code and init(ctx)
ABORT_CAP = 1                 # _budget.abort codes
ABORT_DEPOSITS = 2
TOMB = "tomb"
REWRITE_QUEUE = 64            # ctx.rewrite requests pending at once (one per key)
REWRITE_EACH = 8              # of which one lineage's
AUDIT_SPARE = 4               # the audit log rolls over when less than 1/4 of it is free
AUDIT_FILE_RECORDS = 4096     # ... or at this many records when it goes to /data
LINEAGE_SHARE = 4             # one console-spawned Locus's descendants: max_loci / this
LAST = [None]                 # the mesh made last, for the console (lo_mesh)

_STATUS = {_budget.OPS: "ops budget exhausted", _budget.CYCLES: "cycle budget exhausted",
           _budget.ALLOC: "allocation budget exhausted"}


def _narrower(a, b):
    """The narrower of two budget limits, where 0 means no limit."""
    if a == 0:
        return b
    if b == 0 or a < b:
        return a
    return b


class Mesh:
    def __init__(self, flavours=(), seed=1, epoch=10, journal=4096, max_loci=1024,
                 caps=None, audit=65536, steps_per_round=0, audit_dir="auto"):
        # A tomb for every Locus the mesh can hold, as far as a keyed flavour goes (past
        # that, a retirement whose tomb finds no slot is counted in tombs_lost).
        tombs = min(max(256, max_loci), field.KEYED_MAX)
        specs = list(flavours) + [field.keyed(TOMB, tombs, E=0.001, min=0.01)]
        self.field = field.Field(specs, journal=journal, depositors=2 * max_loci + 16)
        self.caps = _cap.Table(capacity=caps or 4 * max_loci + 64, audit=audit)
        self.layout = {}
        self.index = {}
        self.keyed_mask = 0
        for i, t in enumerate(self.field.flavours()):
            self.layout[t[0]] = (t[1], t[2], t[3])
            self.index[t[0]] = i
            if t[1] == "keyed":
                self.keyed_mask |= 1 << i
        self.seed = seed
        self.rng = (seed * 2246822519) & 0xFFFFFFFF or 1
        self.epoch = epoch
        self.max_loci = max_loci
        self.steps_per_round = steps_per_round
        self.loci = {}
        self.next_id = FIRST_ID
        self.rounds = 0
        self.steps = 0
        self.failed = 0
        self.paused = True
        self.envs = []
        self.raise_hooks = []         # fn(record, exception) for a step that raised
        self.respawns = []
        self.starting = []
        self.last_order = []          # ids stepped in the last round, in order
        self.tombs_lost = 0
        self.retired = 0              # records kept for ps()/info(); not counted as live
        self.halted = None
        self.now = 0                  # the field's tick, cached: ctx calls read it often
        self.rewrites = []            # [key, Locus id] from ctx.rewrite; opt_mesh serves them
        self.audit_cap = audit
        self.audit_prev = None        # the records exported at the last roll-over
        self.audit_rolls = 0
        # Where exports are kept: "auto" is /data/audit when /data is mounted; None keeps
        # only the last one (audit_prev).
        if audit_dir == "auto":
            audit_dir = audit_store.ROOT if audit_store.data_mounted() else None
        self.audit_store = audit_store.AuditStore(audit_dir) if audit_dir else None
        self.audit_unsaved = 0        # exports that could not be written (audit_error says why)
        self.audit_error = None
        self.cap_errors = 0           # table operations refused even after a roll-over
        self.contained = 0            # steps that made the mesh itself raise (see round)
        # Per flavour: live console-spawned Loci holding a deposit grant on it. Each
        # such lineage (a Locus and its descendants) gets an equal share of the slots.
        self.holders = [0] * len(self.index)
        LAST[0] = self

    # ---- console side ------------------------------------------------------------
    @property
    def tick(self):
        return self.field.tick_count()

    def spawn(self, manifest):
        """Spawn a Locus from a manifest with console authority; returns its id."""
        # The common case is C (loci/mod/mesh_spawn.c); the rest, and every refusal, is
        # _spawn_in_python, which it calls before anything has happened.
        return _mesh.spawn(self, manifest)

    def _spawn_in_python(self, manifest):
        man = locus_manifest.check(manifest, self.layout)
        self._room()
        code, loaded, stored = self._code(man)
        self._roll_audit()
        rec = Record(self.next_id, man, self.seed)
        self.next_id += 1
        try:
            _mesh.grant(self, rec, None)
        except ValueError:
            self._quiet(self.caps.retire, rec.id)
            raise
        rec.last_round = self.rounds
        _mesh.enter(self, rec)
        _mesh.start(self, rec, code, loaded, stored, True)
        return rec.id

    def kill(self, lid):
        """Retire a Locus now (no restart); its deposits stay in the field."""
        self._retire(self._rec(lid), "killed from the console", failure=False)

    def replace(self, lid, source):
        """New code for a Locus: same id, capabilities, attention and ctx.mem."""
        rec = self._rec(lid)
        code, loaded, stored = locus_sandbox.compile_locus(source, rec.name)
        rec.man = dict(rec.man, code=source, module=None)
        _mesh.start(self, rec, code, loaded, stored, False)

    def env(self, fn):
        """Call fn(mesh) after every field tick, with console authority."""
        self.envs.append(fn)

    def ps(self):
        return [r.row() for r in sorted(self.loci.values(), key=lambda r: r.id)]

    def info(self, lid):
        r = self._rec(lid)
        d = r.row()
        d.update({"error": r.error, "log": list(r.log), "dump": r.dump,
                  "restarts": r.restarts, "parent": r.parent, "pos": r.pos,
                  "budget": dict(r.budget), "fails": r.fails,
                  "caps": [self.caps.info(c) for c in self.caps.held(r.id)],
                  "dropped": r.dropped})
        return d

    def live(self):
        return [r.id for r in self.loci.values() if r.state != "retired"]

    def run(self, rounds, every=0, fn=None):
        """Run `rounds` rounds; fn(mesh) every `every` rounds may return True to stop."""
        for i in range(rounds):
            self.round()
            if self.halted:
                break
            if fn is not None and every and (i + 1) % every == 0 and fn(self):
                break
        return self.rounds

    # ---- scheduling --------------------------------------------------------------
    def _value(self, a, pos):
        if a is None:
            return 0.0
        if "key" in a:
            return self.field.sense(a["flavour"], a["key"])
        if "region" in a:
            x0, y0, w, h = a["region"]
            return self.field.region(a["flavour"], x0, y0, w, h)[0]
        return self.field.sense(a["flavour"], pos if pos is not None else a["at"])

    def round(self):
        """One round: activation from the traces, steps in that order, then the tick."""
        if self.halted:
            raise RuntimeError(self.halted)
        now = self.now = self.tick
        self.rounds += 1
        rn = self.rounds
        self._roll_audit()
        if self.respawns:
            self._do_respawns(rn)
        self._quiet(self.caps.expire, now)
        # In C (loci/mod/modmesh.c): each record's state, its wake condition, its
        # activation (the trace it attends to, plus AGE_WEIGHT a round of age) and a
        # draw from self.rng; the records in order of (-activation, draw), at most
        # steps_per_round of them when that is set; then each step as _step() takes it,
        # under its budget, with the accounting; _after_step() (settle, strikes,
        # retirement) only when there is something to do. An Exception out of either is
        # a hole in the runtime, not in the Locus's budget: it must not stop the
        # neighbours' steps, so it goes to _contain(). The loop stops after a step that
        # halted the mesh. last_order gets the ids stepped, in order.
        n = _mesh.run_round(self, rn, AGE_WEIGHT, PATIENCE, self.steps_per_round, now,
                            self.last_order)
        self.field.tick()
        self.now = now + 1
        if self.epoch and self.now % self.epoch == 0:
            self.caps.epoch()
            for r in self.loci.values():
                r.deposits = 0
        for fn in self.envs:
            fn(self)
        return n

    def _contain(self, r, x):
        self.contained += 1
        why = "mesh error in its step: " + locus_text.exception(x)
        try:
            self._fail(r, why)
        except Exception:
            r.state = "retired"
            r.error = why

    def _step(self, r, now):
        if r.step_fn is None:
            self._retire(r, "no step function", failure=False)
            return
        _mesh.set_tick(r.ctx, now)
        r.last_round = self.rounds
        b = r.budget
        first_new = self.next_id
        st, val, ops, cyc, alloc = _budget.run(r.step_fn, r.ctx, b["ops"], b["cycles"],
                                               b["alloc"])
        self.steps += 1
        r.steps += 1
        r.ops += ops
        r.ops_last = ops
        r.alloc = alloc
        r.cycles = cyc
        # What it keeps can have grown by at most what it allocated: measure only when
        # that bound passes its budget.
        r.kept_bound += alloc
        self._after_step(r, st, val, first_new)

    def _after_step(self, r, st, val, first_new):
        # What follows a step: start the children it spawned, then its outcome. With
        # nothing spawned or starting, status OK, kept_bound within budget.kept and no
        # retirement asked, this does nothing (modmesh.c's steps() skips the call then).
        b = r.budget
        if st == _budget.RAISED and self.raise_hooks:
            for hook in self.raise_hooks:   # opt_locus watches its twins' raises
                hook(r, val)
        if self.next_id != first_new or self.starting:
            self._settle(first_new)
        if st == _budget.OK:
            if r.kept_bound > b["kept"] and self._kept_over(r):
                return
            if r.retire_asked:
                self._retire(r, "retired itself", failure=False)
            return
        if st == _budget.RAISED and isinstance(val, KeyboardInterrupt):
            raise val
        if st == _budget.CYCLES:
            self._starved(r, self._why(r, st, val))
            return
        self._fail(r, self._why(r, st, val))

    def _kept_over(self, r):
        """Measure what the Locus keeps across steps (its ctx.mem, its ctx.args, which
        it may fill too, and its namespace; not what it shares with the mesh); a strike
        when that is above budget.kept."""
        limit = r.budget["kept"]
        kept = _budget.kept((r.mem, r.args, r.ns), (r.ctx, locus_sandbox.bounded_range),
                            limit)
        r.kept = r.kept_bound = kept
        if kept <= limit:
            return False
        self._fail(r, "keeps more than %d bytes across steps (budget.kept)" % limit)
        return True

    def _why(self, r, st, val):
        # Outside every budget: locus_text never calls str() on the Locus's values.
        if st == _budget.RAISED:
            return "raised " + locus_text.exception(val)
        if st == _budget.ABORTED:
            why = r.pending_error or "aborted (%s)" % locus_text.short(val)
            r.pending_error = None
            return why
        return "%s (%s)" % (_STATUS.get(st, "stopped"), self._limit(r, st))

    def _limit(self, r, st):
        b = r.budget
        if st == _budget.OPS:
            return "%d ops" % b["ops"]
        if st == _budget.ALLOC:
            return "%d bytes" % b["alloc"]
        return "%d cycles" % b["cycles"]

    def _fail(self, r, why):
        self.failed += 1
        r.fails += 1
        r.strikes += 1
        r.error = why
        r.add_log(self.tick, "strike %d: %s" % (r.strikes, why))
        if r.strikes >= MAX_STRIKES:
            self._retire(r, why, failure=True)
        else:
            r.backoff_until = self.rounds + min(BACKOFF_MAX, 1 << r.strikes)
            r.state = "backoff"

    def _starved(self, r, why):
        """A step that ran its whole cycles budget (by default 250 times the largest
        step of any colony Locus) held every neighbour up for that long: a second and a
        third chance would cost them as much again, and a restart would start over.
        So it is retired at once and not restarted, and a descendant's stop is a strike
        on its lineage's root, so that no lineage can starve the mesh more than
        MAX_STRIKES times (each of its children costs at most one budget)."""
        self.failed += 1
        r.fails += 1
        r.strikes += 1
        r.add_log(self.tick, "strike %d: %s" % (r.strikes, why))
        self._retire(r, why + ": retired at once, not restarted", failure=False)
        root = self.loci.get(r.root)
        if root is not None and root is not r and root.state != "retired":
            self._fail(root, "its descendant %d ran out of cycles" % r.id)

    # ---- birth and death ---------------------------------------------------------
    # A record's grants, its entry into the mesh and its start (its code and init under
    # its budget) are C: _mesh.grant, _mesh.enter, _mesh.start (loci/mod/mesh_spawn.c).
    def _room(self):
        if len(self.loci) - self.retired + len(self.starting) >= self.max_loci:
            raise ValueError("spawn: the mesh is full (%d live Loci)" % self.max_loci)

    def _code(self, man):
        src = man["code"]
        if src is None:
            mod, _, attr = man["module"].partition(":")
            try:
                src = getattr(__import__(mod, None, None, (attr or "SOURCE",)),
                              attr or "SOURCE")
            except (ImportError, AttributeError):
                src = None
            if not isinstance(src, str):
                raise ValueError("manifest: field 'module': no frozen source %s"
                                 % locus_text.short(man["module"]))
        return locus_sandbox.compile_locus(src, man["name"])

    def _derive_for(self, parent, child, rights, kw):
        last = None
        for cap, prights, pmask in parent.caps:
            if prights & rights != rights or pmask & kw["flavours"] != kw["flavours"]:
                continue
            try:
                return self.caps.derive(cap, child, rights, kw["flavours"], kw["region"],
                                        kw["keys"], kw["rate"], kw["expires"], kw["io"],
                                        kw["mem"])
            except ValueError as e:
                last = e
        raise ValueError("spawn: no capability of Locus %d covers the grant (%s)"
                         % (parent.id, last or "rights or flavours not held"))

    def _settle(self, first_new):
        """After a budgeted call: start the children it spawned. A budget stop inside
        ctx.spawn() can land between grants, before the child was queued: whatever was
        granted to a child that never came to be is taken back."""
        if self.next_id != first_new:
            queued = [e[0].id for e in self.starting]
            for lid in range(first_new, self.next_id):
                if lid not in queued and lid not in self.loci:
                    self._quiet(self.caps.retire, lid)
        while self.starting:
            rec, code, loaded, stored = self.starting.pop(0)
            _mesh.enter(self, rec)
            _mesh.start(self, rec, code, loaded, stored, True)

    def _retire(self, r, why, failure):
        # A worklist, not recursion: a chain of descendants can be as long as the mesh.
        todo = [(r, why, failure)]
        while todo:
            r, why, failure = todo.pop()
            if r.state == "retired":
                continue
            self._retire_one(r, why, failure)
            for c in self.loci.values():
                if c.parent == r.id and c.state != "retired":
                    todo.append((c, "its parent %d retired" % r.id, False))

    def _retire_one(self, r, why, failure):
        r.state = "retired"
        self.retired += 1
        _mesh.hold(self, r, -1)
        r.keyed = 0
        if r.root != r.id:
            self.loci[r.root].lineage -= 1
        r.error = why
        r.dump = self._dump(r)
        self._quiet(self.caps.retire, r.id)
        r.caps = []
        try:
            self.field.deposit(TOMB, "L%d" % r.id, 1.0, MESH_ID)
        except field.FieldError:
            # A full tomb flavour must not stop the mesh; the loss is counted.
            self.tombs_lost += 1
        r.add_log(self.tick, "retired: " + why)
        # Let the GC have its code and state, and what it kept across steps (ctx.mem);
        # the record stays for ps() and info().
        r.ns = r.ctx = r.step_fn = r.code = None
        r.mem = {}
        if failure and r.man["restart"] == "on-failure" and r.restarts < MAX_RESTARTS:
            self.respawns.append((self.rounds + (4 << r.restarts), r.id))

    def _do_respawns(self, rn):
        due = [e for e in self.respawns if e[0] <= rn]
        self.respawns = [e for e in self.respawns if e[0] > rn]
        for _, lid in due:
            old = self.loci[lid]
            # A child is re-derived from its parent as it is now: never granted roots.
            parent = None
            if old.parent:
                parent = self.loci.get(old.parent)
                if parent is None or parent.state == "retired":
                    old.add_log(self.tick, "not restarted: its parent %d is gone" % old.parent)
                    continue
            r = Record(lid, old.man, self.seed + 7919 * (old.restarts + 1))
            r.restarts = old.restarts + 1
            r.parent = old.parent
            r.root = old.root
            r.keys = old.keys         # its lineage's keys still hold their slots
            r.log = old.log
            r.last_round = rn
            try:
                self._room()
                _mesh.grant(self, r, parent)
                code, loaded, stored = self._code(r.man)
            except ValueError as e:
                self._quiet(self.caps.retire, lid)
                old.add_log(self.tick, "restart failed: " + locus_text.short(str(e)))
                continue
            self.retired -= 1         # the retired record it replaces
            _mesh.enter(self, r)
            r.add_log(self.tick, "restarted (%d)" % r.restarts)
            _mesh.start(self, r, code, loaded, stored, True)

    # ---- the audit log: rolled over outside every step, so it is never full -------
    def _roll_audit(self, force=False):
        limit = self.audit_cap - self.audit_cap // AUDIT_SPARE
        if self.audit_store is not None:
            # Kept on /data, the log goes out in files of a few hundred KiB: writing one
            # takes a round a fraction of a guest second, where a whole log would take
            # seconds, and the REPL waits on the round.
            limit = min(limit, AUDIT_FILE_RECORDS)
        if not force and self.caps.audit_count() < limit:
            return
        try:
            # The export leaves a CHECKPOINT carrying the chain head: the chain goes on.
            data = self.caps.audit_export()
        except Exception:
            self.cap_errors += 1
            return
        self.audit_prev = data
        self.audit_rolls += 1
        if self.audit_store is not None:
            try:
                self.audit_store.save(data)
            except Exception as e:  # a full or missing /data must not stop the mesh
                self.audit_unsaved += 1
                self.audit_error = locus_text.short("%s: %s" % (type(e).__name__, e))

    def audit_save(self):
        """Export the audit log now (to /data when it is kept there, as at a roll-over);
        returns the path written, or None."""
        before = self.audit_store.files if self.audit_store is not None else 0
        self._roll_audit(force=True)
        if self.audit_store is None or self.audit_store.files == before:
            return None
        return "%s/%06d%s" % (self.audit_store.dir, before, audit_store.SUFFIX)

    def _quiet(self, fn, *args):
        """A table operation outside every step that must not stop the mesh: refused
        (the log full), the log rolls over and it is tried once more."""
        try:
            return fn(*args)
        except ValueError:
            self._roll_audit(force=True)
        try:
            return fn(*args)
        except ValueError:
            self.cap_errors += 1
            return 0

    def _dump(self, r):
        """The field around a Locus when it died: 3x3 per grid, its key per keyed."""
        d = {"tick": self.tick, "pos": r.pos}
        for name, (kind, _w, _h) in self.layout.items():
            if kind == "grid" and r.pos is not None:
                d[name] = self.field.neighbourhood(name, r.pos[0], r.pos[1])
            elif kind == "keyed" and r.attend is not None and r.attend.get("key"):
                if r.attend["flavour"] == name:
                    d[name] = self.field.sense(name, r.attend["key"])
        return d

    def _rec(self, lid):
        r = self.loci.get(lid)
        if r is None:
            raise KeyError("no Locus %r" % (lid,))
        return r

    # ---- what ctx calls (inside a step, under _budget.run) -------------------------
    def _violation(self, r, why):
        r.pending_error = "capability: " + locus_text.short(why, 2 * locus_text.LIMIT)
        _budget.abort(ABORT_CAP)

    def _unknown(self, r, op, flavour):
        # No capability can name a flavour the field does not have: audited like any
        # use that nothing grants.
        self.caps.refuse(r.id, op)
        self._violation(r, "no flavour %s" % locus_text.quoted(flavour, 40))

    def _home(self, r, flavour, op=_cap.SENSE):
        """Where a ctx call without `where` looks: the position, or the attended key."""
        kind = self.layout.get(flavour)
        if kind is None:
            self._unknown(r, op, flavour)
        if kind[0] == "grid":
            if r.pos is None:
                raise ValueError("no position: pass where=(x, y)")
            return r.pos
        a = r.attend
        if a is None or a["flavour"] != flavour or "key" not in a:
            raise ValueError("no key: pass where=key")
        return a["key"]

    # Kept free of temporary tuples and small in locals: every call of these is paid
    # by a Locus step (its op and allocation budget), 125 ants x several calls a tick.
    def _check(self, r, op, flavour, where, amount):
        i = self.index.get(flavour)
        if i is None:
            self._unknown(r, op, flavour)
        code = -1
        for c in r.caps:
            if c[1] & op and c[2] >> i & 1:
                if isinstance(where, tuple):
                    code = self.caps.check(c[0], r.id, op, i, where[0], where[1], None,
                                           amount, self.now)
                elif where is None:
                    code = self.caps.check(c[0], r.id, op, i, -1, -1, None, amount, self.now)
                else:
                    code = self.caps.check(c[0], r.id, op, i, -1, -1, where, amount,
                                           self.now)
                if code == 0:
                    return
        self._refused(r, op, flavour, i, code)

    def _refused(self, r, op, flavour, i, code):
        if code == -1:
            # No capability names this flavour and operation: nothing to check, but the
            # refused use is audited all the same.
            self.caps.refuse(r.id, op, i)
            why = "%s of %r not granted" % ("deposit" if op == _cap.DEPOSIT else "sense",
                                             flavour)
        else:
            why = "%s (%r)" % (_cap.why(code), flavour)
        self._violation(r, why)

    def _sense(self, r, flavour, where):
        if where is None:
            where = self._home(r, flavour)
        self._check(r, _cap.SENSE, flavour, where, 0.0)
        return self.field.sense(flavour, where)

    def _around(self, r, flavour, where):
        x, y = self._block(r, flavour, where)
        return self.field.neighbourhood(flavour, x, y)

    def _gradient(self, r, flavour, where):
        x, y = self._block(r, flavour, where)
        return self.field.gradient(flavour, x, y)

    def _block(self, r, flavour, where):
        """Checks every cell around/gradient read: the 3x3 block at `where`, clipped
        to the grid, must lie inside one sensing grant. Returns the centre."""
        if where is None:
            where = self._home(r, flavour)
        i = self.index.get(flavour)
        if i is None:
            self._unknown(r, _cap.SENSE, flavour)
        kind, w, h = self.layout[flavour]
        if kind != "grid":
            raise ValueError("%r is keyed, not a grid" % flavour)
        x, y = where
        if not (isinstance(x, int) and isinstance(y, int) and 0 <= x < w and 0 <= y < h):
            raise ValueError("the centre must be a cell of the %dx%d grid" % (w, h))
        x0 = x - 1 if x > 0 else 0
        y0 = y - 1 if y > 0 else 0
        bw = (x + 2 if x + 2 <= w else w) - x0
        bh = (y + 2 if y + 2 <= h else h) - y0
        code = -1
        for c in r.caps:
            if c[1] & _cap.SENSE and c[2] >> i & 1:
                code = self.caps.check(c[0], r.id, _cap.SENSE, i, x0, y0, None, 0.0,
                                       self.now, bw, bh)
                if code == 0:
                    return x, y
        self._refused(r, _cap.SENSE, flavour, i, code)

    def _top(self, r, flavour, k):
        self._check(r, _cap.SENSE, flavour, None, 0.0)
        return self.field.topk(flavour, min(int(k), 64))

    def _deposit(self, r, flavour, amount, where):
        if where is None:
            where = self._home(r, flavour, _cap.DEPOSIT)
        if not amount >= 0.0:
            raise ValueError("a deposit must be a number >= 0")
        if r.deposits >= r.budget["deposits"]:
            r.pending_error = "deposit budget (%d per epoch) exhausted" % r.budget["deposits"]
            _budget.abort(ABORT_DEPOSITS)
        self._check(r, _cap.DEPOSIT, flavour, where, amount)
        r.deposits += 1
        if self.keyed_mask >> self.index[flavour] & 1:
            return self._deposit_key(r, flavour, amount, where)
        self.field.deposit(flavour, where, amount, r.id)
        return True

    def _deposit_key(self, r, flavour, amount, key):
        """A keyed deposit: a new key takes a slot from its lineage's share of the
        flavour (the capacity over the lineages that may deposit there), so no Locus
        can fill the table, alone or through children. A key refused because others
        filled it is no strike: the deposit is dropped, counted, and ctx.deposit
        returns False."""
        if isinstance(key, str):
            key = key.encode()
        if self.field.last(flavour, key) == 0:
            i = self.index[flavour]
            keys = self.loci[r.root].keys
            mine = keys.get(i)
            if mine is None:
                mine = keys[i] = []
            share = self.layout[flavour][1] // (self.holders[i] or 1) or 1
            if len(mine) >= share:
                # Its keys that evaporated have given their slots back.
                mine[:] = [k for k in mine if self.field.last(flavour, k) != 0]
                if len(mine) >= share:
                    self._violation(r, "keyed %r: all %d slots of this lineage's share in "
                                    "use" % (flavour, share))
            try:
                self.field.deposit(flavour, key, amount, r.id)
            except field.FieldError as e:
                if "full" not in str(e):
                    raise
                r.dropped += 1
                return False
            if key not in mine:
                mine.append(key)
            return True
        self.field.deposit(flavour, key, amount, r.id)
        return True

    def _hw(self, r, op, lo, n):
        for c in r.caps:
            if c[1] & op:
                code = self.caps.check(c[0], r.id, op, -1, lo, -1, None, 0.0, self.now, n, 1)
                if code == 0:
                    return
        if not any(c[1] & op for c in r.caps):
            self.caps.refuse(r.id, op)
            code = -1
        self._violation(r, "%s 0x%x..0x%x %s" % (
            "io" if op == _cap.IO else "mem", lo, lo + n - 1,
            "not granted" if code == -1 else _cap.why(code)))

    def _port(self, r, port, width, value):
        if width not in (1, 2, 4) or not 0 <= port <= 0xFFFF - width + 1:
            raise ValueError("a port is 0..0xffff and 1, 2 or 4 bytes wide")
        self._hw(r, _cap.IO, port, width)
        import machine
        reg = (machine.port8, machine.port16, None, machine.port32)[width - 1]
        if value is None:
            return reg[port]
        reg[port] = value

    def _mem(self, r, addr, n):
        if not 1 <= n <= 4096 or addr < 0:
            raise ValueError("mem_read reads 1..4096 bytes at a non-negative address")
        self._hw(r, _cap.MEM, addr, n)
        import machine
        return bytes(machine.mem8[addr + i] for i in range(n))

    def _goto(self, r, x, y):
        a = r.attend
        if a is None or "at" not in a:
            raise ValueError("this Locus has no position to move")
        kind = self.layout[a["flavour"]]
        x, y = int(x), int(y)
        if not (0 <= x < kind[1] and 0 <= y < kind[2]):
            raise ValueError("(%s, %s) is off the %dx%d grid" % (
                locus_text.short(x, 24), locus_text.short(y, 24), kind[1], kind[2]))
        r.pos = (x, y)
        return r.pos

    # A stop of the parent's budget can land anywhere in here. Until the last line the
    # child is nowhere but in local variables (and in grants _settle takes back); the
    # append that queues it is the one step that makes it exist.
    def _spawn_child(self, r, manifest):
        ok = -1
        for c in r.caps:
            if c[1] & _cap.SPAWN:
                ok = self.caps.check(c[0], r.id, _cap.SPAWN, -1, -1, -1, None, 0.0, self.now)
                if ok == 0:
                    break
        if ok != 0:
            if ok == -1:
                self.caps.refuse(r.id, _cap.SPAWN)
            self._violation(r, "spawn " + ("not granted" if ok == -1 else _cap.why(ok)))
        rec = None
        try:
            man = locus_manifest.check(self._child_manifest(r, manifest), self.layout)
            if man["module"] is not None:
                raise ValueError("spawn: a child's code is given as source ('module' is "
                                 "for the console)")
            self._child_budget(r, man["budget"])
            self._room()
            self._lineage_room(r)
            code, loaded, stored = self._code(man)
            rec = Record(self.next_id, man, self.seed)
            rec.parent = r.id
            rec.root = r.root
            self.next_id += 1
            _mesh.grant(self, rec, r)
        except ValueError as e:
            # Refused: audited like every refusal, and a strike for the parent.
            if rec is not None:
                self.caps.retire(rec.id)
            self.caps.refuse(r.id, _cap.SPAWN)
            self._violation(r, str(e))
        rec.last_round = self.rounds
        self.starting.append((rec, code, loaded, stored))
        return rec.id

    def _lineage_room(self, r):
        # No lineage may fill the mesh (nor the capability table) alone.
        n = self.loci[r.root].lineage
        for e in self.starting:
            if e[0].root == r.root:
                n += 1
        cap = self.max_loci // LINEAGE_SHARE or 1
        if n >= cap:
            raise ValueError("spawn: the lineage of Locus %d has %d live descendants, "
                             "its most" % (r.root, cap))

    def _child_manifest(self, r, manifest):
        """The manifest with each budget the child leaves out set to its parent's, or
        the default where that is narrower."""
        if not isinstance(manifest, dict):
            return manifest
        b = manifest.get("budget", {})
        if not isinstance(b, dict):
            return manifest
        full = dict(b)
        for k, v in locus_manifest.BUDGET_DEFAULT.items():
            if k not in full:
                full[k] = _narrower(v, r.budget[k])
        return dict(manifest, budget=full)

    def _child_budget(self, r, b):
        # In every dimension, cycles too; 0 is "no limit", the widest of all.
        for k in locus_manifest.BUDGET_DEFAULT:
            p = r.budget[k]
            if p and _narrower(b[k], p) != b[k]:
                raise ValueError("spawn: child budget.%s %s above the parent's %d"
                                 % (k, "unlimited" if b[k] == 0 else b[k], p))

    # ---- ctx.rewrite: only queues. The optimiser's gates run many cycles and toggle a
    # function's bytes, so they never run inside a budgeted step (a stop mid-gate would
    # leave bytes half-swapped); opt_mesh.Server serves the queue after the round.
    def _rewrite(self, r, key):
        code = -1
        for c in r.caps:
            if c[1] & _cap.REWRITE:
                code = self.caps.check(c[0], r.id, _cap.REWRITE, -1, -1, -1, None, 0.0,
                                       self.now)
                if code == 0:
                    break
        if code != 0:
            if code == -1:
                self.caps.refuse(r.id, _cap.REWRITE)
            self._violation(r, "rewrite " + ("not granted" if code == -1 else _cap.why(code)))
        if isinstance(key, str):
            key = key.encode()
        if not isinstance(key, bytes) or not 1 <= len(key) <= 15:
            raise ValueError("a rewrite key is 1..15 bytes (a key of the 'heat' flavour)")
        mine = 0
        for q in self.rewrites:
            if q[0] == key:
                return q[1] == r.id
            o = self.loci.get(q[1])
            if o is not None and o.root == r.root:
                mine += 1
        if mine >= REWRITE_EACH:
            raise ValueError("this lineage has %d rewrite requests pending, its most"
                             % REWRITE_EACH)
        if len(self.rewrites) >= REWRITE_QUEUE:
            # Full through the others' requests: not this Locus's fault, so no error.
            return False
        self.rewrites.append([key, r.id])
        return True
