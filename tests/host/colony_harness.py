# SPDX-License-Identifier: MIT
"""A host-only stand-in for the Loci mesh (loci/MESH.md; the real one: loci/python/mesh.py),
over the trace field's reference model (tests/host/field_model.py) or the same C core
through cffi, so the colonies (loci/python/colonies/) can be developed and tested on
CPython. It is a development and test tool, not the runtime: budgets are approximated
(ops = traced calls + lines, alloc = tracemalloc peak) and the verifier is approximated
by an AST check of the same rules."""

import ast
import builtins
import sys
import tracemalloc
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests" / "qemu" / "progs"))
import field_model  # noqa: E402
from xorshift32 import xorshift32  # noqa: E402  (the generator the guest tests paste)

REPL = 1
FIRST_ID = 100              # Locus ids start here, clear of the console's id
AGE_WEIGHT = 1.0            # activation += AGE_WEIGHT x rounds since the last step
PATIENCE = 8                # a Locus with an unmet wake condition still steps this often
STRIKES = 3                 # failed steps before retirement
RESTARTS = 3                # re-spawns allowed by restart "on-failure"
DUMP = 2                    # a retired Locus's dump: the (2*DUMP+1)^2 cells around it
ALLOWED = (
    "abs", "all", "any", "bool", "bytes", "chr", "dict", "divmod", "enumerate", "filter",
    "float", "hash", "hex", "int", "isinstance", "iter", "len", "list", "map", "max",
    "min", "next", "ord", "pow", "range", "reversed", "round", "set", "sorted", "str",
    "sum", "tuple", "zip",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError",
    "KeyError", "LookupError", "NotImplementedError", "OverflowError", "RuntimeError",
    "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)
IMPORTS = ("math",)
RANGE_MAX = 1 << 20
BUDGET_DEFAULT = {"ops": 5000, "alloc": 32768, "deposits": 64, "cycles": 0}
OK, RAISED, OPS, CYCLES, ALLOC, ABORTED = 0, 1, 2, 3, 4, 5
STATUS = {RAISED: "raised", OPS: "ops budget", ALLOC: "alloc budget", ABORTED: "capability"}


# -- the guest's field.py API (flavour names, (x, y) or key) over the model or cffi -------
def grid(name, w, h, E=0.0, G=0.0, cap=1e30, min=0.0):
    return ("grid", name, w, h, E, G, cap, min)


def keyed(name, capacity, E=0.0, cap=1e30, min=0.0):
    return ("keyed", name, capacity, 0, E, 0.0, cap, min)


class Field:
    """field.Field's methods that colonies use, with the guest's argument shapes."""

    def __init__(self, specs, backend="model"):
        if backend == "c":
            import field_cffi
            self.core = field_cffi.CField(arena_size=8 << 20, journal_cap=64, deps_cap=64)
        else:
            self.core = field_model.Field(journal_cap=64, deps_cap=64)
            # The model keeps every journal record ever; a long run needs only the ring.
            self.core._journal = lambda **rec: None
        self.index, self.spec = {}, {}
        for s in specs:
            if s[0] == "grid":
                self.index[s[1]] = self.core.add_grid(s[1], s[2], s[3], s[4], s[5], s[6], s[7])
            else:
                self.index[s[1]] = self.core.add_keyed(s[1], s[2], s[4], s[6], s[7])
            self.spec[s[1]] = s
        self.ticks = 0

    def kind(self, name):
        return self.spec[name][0]

    def size(self, name):
        return self.spec[name][2], self.spec[name][3]

    def names(self):
        return list(self.spec)

    @staticmethod
    def key(where):
        return where.encode() if isinstance(where, str) else bytes(where)

    def deposit(self, name, where, amount, who=REPL):
        i = self.index[name]
        if self.kind(name) == "grid":
            self.core.deposit_xy(i, where[0], where[1], amount, who)
        else:
            self.core.deposit_key(i, self.key(where), amount, who)

    def sense(self, name, where):
        i = self.index[name]
        if self.kind(name) == "grid":
            return self.core.sense_xy(i, where[0], where[1])
        return self.core.sense_key(i, self.key(where))

    def last(self, name, where):
        i = self.index[name]
        if self.kind(name) == "grid":
            return self.core.last_xy(i, where[0], where[1])
        k = self.key(where)
        if hasattr(self.core, "last_key"):
            return self.core.last_key(i, k)
        ent = self.core.flavours[i].entries.get(k)
        return ent[2] if ent else 0

    def neighbourhood(self, name, x, y):
        vals, mask = self.core.neighbourhood(self.index[name], x, y)
        return [v if mask >> j & 1 else None for j, v in enumerate(vals)]

    def gradient(self, name, x, y):
        return self.core.gradient(self.index[name], x, y)

    def region(self, name, x0, y0, w, h):
        s, mx, arg = self.core.region(self.index[name], x0, y0, w, h)
        gw = self.spec[name][2]
        return s, mx, (arg % gw, arg // gw)

    def total(self, name):
        return self.core.total(self.index[name])

    def topk(self, name, k):
        gw = self.spec[name][2]
        out = []
        for ix, v, key in self.core.topk(self.index[name], k):
            out.append(((ix % gw, ix // gw) if self.kind(name) == "grid" else key, v))
        return out

    def keyed_items(self, name):
        i = self.index[name]
        if hasattr(self.core, "keys"):
            return list(zip(self.core.keys(i), self.core.values(i), strict=True))
        fl = self.core.flavours[i]
        return [(k, fl.entries[k][0]) for k in fl.sorted_keys()]

    def tick(self, n=1):
        for _ in range(n):
            self.core.tick()
            self.ticks += 1
        return self.ticks

    def tick_count(self):
        return self.ticks

    def digest(self):
        return self.core.digest()


# -- the verifier's rules, approximated on the AST -----------------------------------------
def check_source(source, name):
    """Refuse what the `locus` profile and the global-name rule refuse (ValueError)."""
    tree = ast.parse(source, name)
    stored, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            raise ValueError("verify: class definitions are refused (LOAD_BUILD_CLASS)")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ValueError(f"verify: attribute {node.attr!r} is refused by the 'locus' profile")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module]
            for mod in mods:
                if mod not in IMPORTS:
                    raise ValueError(f"verify: import of {mod!r} is refused")
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            stored.update(node.names)
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            if isinstance(node, ast.FunctionDef):
                stored.add(node.name)
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            # Harness limit, not a Locus rule: CPython unsets a trace function that
            # raises, so a bare except could outlive the harness's stop (the guest's VM
            # abort cannot be caught). Such code is not run on the host.
            raise ValueError("harness: a bare except cannot be contained on CPython")
        if isinstance(node, ast.arg):
            stored.add(node.arg)
        if isinstance(node, ast.ExceptHandler) and node.name:
            stored.add(node.name)
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Del):
                raise ValueError(f"verify: code deletes {node.id!r}: a Locus may not")
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
    # Names bound anywhere count as stored (locals included): a deliberate over-approximation
    # of vm.names(); what it misses the guest's verifier catches.
    for n in sorted(loaded):
        if n not in ALLOWED and n not in stored:
            raise ValueError(f"verify: name {n!r} is not available to a Locus")
    return compile(source, name, "exec")


def bounded_range(*args):
    r = range(*args)
    if len(r) > RANGE_MAX:
        raise ValueError(f"range longer than {RANGE_MAX}")
    return r


class Stop(BaseException):
    """The harness's budget / capability stop (see Mesh._call)."""


# -- ctx ---------------------------------------------------------------------------------
class Ctx:
    def __init__(self, mesh, locus):
        self._m, self._l = mesh, locus
        self.id, self.name = locus["id"], locus["name"]
        self.args, self.mem = locus["args"], {}

    @property
    def tick(self):
        return self._m.field.ticks

    @property
    def pos(self):
        return self._l["pos"]

    def goto(self, x, y):
        fl = self._l["attend"]
        if fl is None or "at" not in fl:
            self._m.abort(self._l, "goto: attention is not a grid position")
        w, h = self._m.field.size(fl["flavour"])
        if not (isinstance(x, int) and isinstance(y, int) and 0 <= x < w and 0 <= y < h):
            self._m.abort(self._l, f"goto: ({x!r}, {y!r}) is off the {w}x{h} grid")
        self._l["pos"] = (x, y)

    def _where(self, flavour, where, op, amount=0.0):
        self._m.check(self._l, op, flavour, where, amount)
        if where is None:
            if self._m.field.kind(flavour) == "grid":
                return self._l["pos"]
            return self._l["attend"]["key"]
        return where

    def sense(self, flavour, where=None):
        return self._m.field.sense(flavour, self._where(flavour, where, "sense"))

    def around(self, flavour, where=None):
        x, y = self._where(flavour, where, "sense")
        return tuple(0.0 if v is None else v
                     for v in self._m.field.neighbourhood(flavour, x, y))

    def gradient(self, flavour, where=None):
        x, y = self._where(flavour, where, "sense")
        return self._m.field.gradient(flavour, x, y)

    def top(self, flavour, k):
        self._m.check(self._l, "sense", flavour, None, 0.0)
        keys = self._m.granted_keys(self._l, flavour)
        out = []
        for where, v in self._m.field.topk(flavour, k if keys is None else 4096):
            if keys is None or any(where.startswith(p) for p in keys):
                out.append((where, v))
        return out[:k]

    def deposit(self, flavour, amount, where=None):
        where = self._where(flavour, where, "deposit", amount)
        self._m.field.deposit(flavour, where, amount, self.id)

    def rand(self):
        s = self._l["rng"] = xorshift32(self._l["rng"])
        return s >> 2

    def random(self):
        return self.rand() / 1073741824.0

    def log(self, text):
        self._l["log"] = (self._l["log"] + [str(text)[:80]])[-16:]

    def spawn(self, manifest):
        return self._m.spawn_child(self._l, manifest)

    def retire(self):
        self._l["retire"] = True


# -- the mesh ----------------------------------------------------------------------------
class Mesh:
    def __init__(self, flavours=(), seed=1, epoch=10, backend=None):
        specs = list(flavours) + [keyed("tomb", 256)]
        self.field = Field(specs, backend or BACKEND[0])
        self.seed, self.epoch = seed, epoch
        self.rng = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1
        self.loci, self.order, self.envs = {}, [], []
        self.next_id = FIRST_ID
        self.rounds = 0
        self.current = None
        self.code_cache = {}

    @property
    def tick(self):
        return self.field.ticks

    def _rand(self):
        self.rng = xorshift32(self.rng)
        return self.rng

    # spawn and capabilities
    def _caps(self, caps):
        out, spawn = [], False
        for c in caps:
            if c.get("spawn"):
                spawn = True
            if c.get("flavours"):
                for f in c["flavours"]:
                    if f not in self.field.spec:
                        raise ValueError(f"manifest: field 'caps': no flavour {f!r}")
                keys = c.get("keys")
                out.append({"flavours": tuple(c["flavours"]), "ops": tuple(c.get("ops", ())),
                            "region": c.get("region"),
                            "keys": None if keys is None else tuple(
                                k.encode() if isinstance(k, str) else k for k in keys),
                            "rate": -1.0 if c.get("rate") is None else float(c["rate"]),
                            "expires": c.get("expires"), "used": 0.0})
        return out, spawn

    def spawn(self, manifest, parent=None):
        if not isinstance(manifest, dict) or "name" not in manifest:
            raise ValueError("manifest: field 'name': missing")
        src = manifest.get("code")
        if not isinstance(src, str):
            raise ValueError("manifest: field 'code': must be Python source text")
        code = self.code_cache.get(src)
        if code is None:
            code = check_source(src, "<locus>")
            self.code_cache[src] = code
        caps, spawn = self._caps(manifest.get("caps", ()))
        budget = dict(BUDGET_DEFAULT)
        budget.update(manifest.get("budget", {}))
        attend = manifest.get("attend")
        lid = self.next_id
        self.next_id += 1
        locus = {"id": lid, "name": manifest["name"], "manifest": manifest, "code": code,
                 "caps": caps, "spawn": spawn, "budget": budget, "attend": attend,
                 "wake": manifest.get("wake"), "args": _copy(manifest.get("args", {})),
                 "pos": tuple(attend["at"]) if attend and "at" in attend else None,
                 "rng": (self.seed * 2246822519 + lid * 3266489917) & 0xFFFFFFFF or 1,
                 "state": "live", "steps": 0, "strikes": 0, "ops": 0, "alloc": 0,
                 "backoff": 0, "last": self.rounds, "error": None, "log": [],
                 "restarts": 0, "retire": False, "deposits": 0, "dump": None}
        ns = {"__name__": locus["name"]}
        for n in ALLOWED:
            ns.setdefault(n, bounded_range if n == "range" else getattr(builtins, n))
        ns["__builtins__"] = {"__import__": _import_math}
        locus["ns"] = ns
        locus["ctx"] = Ctx(self, locus)
        self.loci[lid] = locus
        self.order.append(lid)
        st = self._call(locus, lambda: exec(code, ns))
        if st == OK and "init" in ns:
            st = self._call(locus, lambda: ns["init"](locus["ctx"]))
        if st != OK:
            self._fail(locus, st)
        return lid

    def spawn_child(self, parent, manifest):
        if not parent["spawn"]:
            self.abort(parent, "spawn not granted")
        held = {(f, op) for c in parent["caps"] for f in c["flavours"] for op in c["ops"]}
        for c in manifest.get("caps", ()):
            for f in c.get("flavours", ()):
                for op in c.get("ops", ()):
                    if (f, op) not in held:
                        self.abort(parent, f"spawn: child cap widens {f}/{op}")
            if c.get("spawn"):
                self.abort(parent, "spawn: child may not spawn")
        return self.spawn(manifest, parent)

    def granted_keys(self, locus, flavour):
        for c in locus["caps"]:
            if flavour in c["flavours"]:
                return c["keys"]
        return None

    def check(self, locus, op, flavour, where, amount):
        for c in locus["caps"]:
            if flavour not in c["flavours"] or op not in c["ops"]:
                continue
            if c["expires"] is not None and self.tick >= c["expires"]:
                continue
            if c["region"] is not None and where is not None and self.field.kind(
                    flavour) == "grid":
                x0, y0, w, h = c["region"]
                if not (x0 <= where[0] < x0 + w and y0 <= where[1] < y0 + h):
                    continue
            if c["keys"] is not None and where is not None and self.field.kind(
                    flavour) == "keyed":
                if not any(self.field.key(where).startswith(p) for p in c["keys"]):
                    continue
            if op == "deposit":
                if not (isinstance(amount, (int, float)) and amount >= 0):
                    self.abort(locus, f"deposit: amount {amount!r}")
                if c["rate"] >= 0 and c["used"] + amount > c["rate"]:
                    self.abort(locus, f"rate exceeded on {flavour}")
                locus["deposits"] += 1
                if locus["deposits"] > locus["budget"]["deposits"]:
                    self.abort(locus, "deposit budget exhausted")
                c["used"] += amount
            return
        self.abort(locus, f"{op} {flavour} at {where!r}: not granted")

    def abort(self, locus, why):
        locus["abort"] = (ABORTED, why)
        raise Stop(why)

    # one step under a budget
    def _call(self, locus, fn):
        budget = locus["budget"]
        locus["abort"] = None
        count = [0]
        fname = "<locus>"

        # CPython unsets a trace function that raises, so the stop is raised once; code
        # that could catch it (a bare except) is refused at spawn by the harness.
        def local(frame, event, arg):
            if locus["abort"] is not None:
                raise Stop(locus["abort"][1])
            count[0] += 1
            if count[0] > budget["ops"]:
                locus["abort"] = (OPS, f"ops budget {budget['ops']} exhausted")
                raise Stop("ops")
            if count[0] & 31 == 0 and tracemalloc.get_traced_memory()[1] > budget["alloc"]:
                locus["abort"] = (ALLOC, f"alloc budget {budget['alloc']} exhausted")
                raise Stop("alloc")
            return local

        def glob(frame, event, arg):
            if frame.f_code.co_filename != fname:
                return None
            return local(frame, event, arg)

        status, err = OK, None
        self.current = locus
        old = sys.gettrace()
        tracemalloc.start()
        sys.settrace(glob)
        try:
            fn()
        except Stop:
            status, err = locus["abort"] if locus["abort"] else (ABORTED, "stop")
        except MemoryError:
            status, err = ALLOC, "MemoryError"
        except Exception as e:  # noqa: BLE001  (a Locus's exception is its own failure)
            if locus["abort"] is not None:
                status, err = locus["abort"]
            else:
                status, err = RAISED, f"{e.__class__.__name__}: {e}"
        finally:
            sys.settrace(old)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            self.current = None
        locus["ops"], locus["alloc"] = count[0], peak
        if status == OK and locus["abort"] is not None:
            status, err = locus["abort"]
        locus["error"] = err if status != OK else locus["error"]
        return status

    def _fail(self, locus, status):
        locus["strikes"] += 1
        locus["error"] = "{}: {}".format(STATUS.get(status, status), locus["error"])
        if locus["strikes"] >= STRIKES:
            self._retire(locus, "strikes")
        else:
            locus["state"] = "backoff"
            locus["backoff"] = 2 ** locus["strikes"]

    def _retire(self, locus, why):
        if locus["state"] == "retired":
            return
        locus["state"] = "retired"
        locus["why"] = why
        key = str(locus["id"]).encode()
        self.field.deposit("tomb", key, 1.0, REPL)
        att = locus["attend"]
        if att and "at" in att and locus["pos"] is not None:
            x, y = locus["pos"]
            w, h = self.field.size(att["flavour"])
            locus["dump"] = {(i, j): self.field.sense(att["flavour"], (i, j))
                             for i in range(max(0, x - DUMP), min(w, x + DUMP + 1))
                             for j in range(max(0, y - DUMP), min(h, y + DUMP + 1))}
        if (why == "strikes" and locus["manifest"].get("restart") == "on-failure"
                and locus["restarts"] < RESTARTS):
            locus["respawn_at"] = self.rounds + 2 ** locus["strikes"]

    def kill(self, lid):
        self._retire(self.loci[lid], "killed")

    def _activation(self, locus):
        att = locus["attend"]
        v = 0.0
        if att:
            f = att["flavour"]
            if "at" in att:
                v = self.field.sense(f, locus["pos"])
            elif "key" in att:
                v = self.field.sense(f, att["key"])
            else:
                v = self.field.region(f, *att["region"])[0]
        return v + AGE_WEIGHT * (self.rounds - locus["last"])

    def _eligible(self, locus):
        w = locus["wake"]
        if not w or self.rounds - locus["last"] >= PATIENCE:
            return True
        f = w["flavour"]
        where = w.get("at") or w.get("key")
        v = self.field.region(f, *w["region"])[0] if "region" in w else self.field.sense(
            f, where)
        return v >= w["above"]

    def round(self):
        self.rounds += 1
        ready = []
        for lid in self.order:
            lo = self.loci[lid]
            if lo["state"] == "retired":
                if lo.get("respawn_at") == self.rounds:
                    self._respawn(lo)
                continue
            if lo["state"] == "backoff":
                lo["backoff"] -= 1
                if lo["backoff"] > 0:
                    continue
                lo["state"] = "live"
            if self._eligible(lo):
                ready.append((-self._activation(lo), self._rand(), lid))
        ready.sort()
        steps = 0
        for _, _, lid in ready:
            lo = self.loci[lid]
            if lo["state"] != "live":
                continue
            st = self._call(lo, lambda lo=lo: lo["ns"]["step"](lo["ctx"]))
            lo["steps"] += 1
            lo["last"] = self.rounds
            steps += 1
            if st != OK:
                self._fail(lo, st)
            elif lo["retire"]:
                self._retire(lo, "retired itself")
        self.field.tick()
        if self.field.ticks % self.epoch == 0:
            for lo in self.loci.values():
                lo["deposits"] = 0
                for c in lo["caps"]:
                    c["used"] = 0.0
        for fn in self.envs:
            fn(self)
        return steps

    def _respawn(self, old):
        lid = self.spawn(old["manifest"])
        self.loci[lid]["restarts"] = old["restarts"] + 1
        old["respawned_as"] = lid

    def run(self, rounds, every=None, fn=None):
        for r in range(rounds):
            self.round()
            if fn is not None and every and (r + 1) % every == 0 and fn(self):
                return r + 1
        return rounds

    def env(self, fn):
        self.envs.append(fn)

    def ps(self):
        return [{"id": lo["id"], "name": lo["name"], "state": lo["state"],
                 "steps": lo["steps"], "strikes": lo["strikes"], "ops": lo["ops"],
                 "alloc": lo["alloc"], "caps": len(lo["caps"])} for lo in
                (self.loci[i] for i in self.order)]

    def info(self, lid):
        lo = self.loci[lid]
        d = [p for p in self.ps() if p["id"] == lid][0]
        d.update(error=lo["error"], log=list(lo["log"]), dump=lo["dump"],
                 why=lo.get("why"))
        return d


def _copy(v):
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_copy(x) for x in v)
    return v


def _import_math(name, *args, **kw):
    if name not in IMPORTS:
        raise ImportError(f"no module named {name!r}")
    return __import__(name)


BACKEND = ["c"]     # "c" (the C core via cffi: fast, bit-identical to the guest) or "model"


def install(backend="c"):
    """Make `import mesh` and `import field` give this harness, then import colonies."""
    BACKEND[0] = backend
    me = sys.modules[__name__]
    fmod = types.ModuleType("field")
    fmod.grid, fmod.keyed, fmod.REPL, fmod.Field = grid, keyed, REPL, Field
    sys.modules["field"] = fmod
    sys.modules["mesh"] = me
    lp = str(ROOT / "loci" / "python")
    if lp not in sys.path:
        sys.path.insert(0, lp)
    import colonies
    return colonies


def measure(seeds=3):
    """The host-harness numbers in loci/python/colonies/README.md."""
    cols = install("c")
    f, b, t, h = (cols.get(n) for n in ("foraging", "bridge", "tasks", "healing"))
    for ph in (True, False):
        for s in range(1, seeds + 1):
            r = f.run(seed=s, pheromone=ph, ticks=3000, quiet=True)
            print(f"foraging pheromone={ph} seed={s} exhausted={r['exhausted']} "
                  f"delivered={r['delivered']} overdrawn={r['overdrawn']:.0f}", flush=True)
    for late in (False, True):
        sh = [round(b.run(seed=s, late=late, ticks=1600, quiet=True)["share_short"], 2)
              for s in range(1, 3 * seeds + 2)]
        print(f"bridge late={late} share_short per seed {sh}", flush=True)
    for ev in (0.0, 0.02):
        sh = [round(b.run(seed=s, late=True, ticks=1600, quiet=True, evaporation=ev)[
            "share_short"], 2) for s in range(1, 6)]
        print(f"bridge late=True evaporation={ev} share_short per seed {sh}", flush=True)
    for s in range(1, seeds + 1):
        r = t.run(seed=s, quiet=True)
        print(f"tasks seed={s} completed={r['completed']} latency mean="
              f"{r['latency_mean']:.1f} p50={r['latency_p50']} p90={r['latency_p90']} "
              f"max={r['latency_max']} jain={r['jain']:.2f}", flush=True)
    for q in (True, False):
        for frac in (0.1, 0.3, 0.5):
            r = h.run(seed=1, fraction=frac, queen=q, ticks=1200, quiet=True)
            print(f"healing queen={q} fraction={frac} prior={r['prior_rate']:.2f} "
                  f"lowest={r['lowest_rate']:.2f} final={r['final_rate']:.2f} "
                  f"back={r['back_to_80pct_after']} stalled={r['stalled']} "
                  f"live_at_end={r['live_at_end']}", flush=True)


if __name__ == "__main__":
    measure()
