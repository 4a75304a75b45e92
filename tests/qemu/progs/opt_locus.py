# SPDX-License-Identifier: MIT
# Set-up of test_opt_locus.py: Loci of one source whose step and helper get hot, gated by
# opt_locus (in a copy of a Locus's namespace, under its budget) and swapped in place for
# every Locus running the code; and a run that swaps and rolls back while Loci keep
# running, reduced to digests to compare with the same run with no optimiser.
import hashlib
import mesh, opt, opt_locus, opt_mesh, _rw
from field import grid
SRC = '''
total = 0
def spread(n, seed):
    s = 0
    i = 0
    while i < n:
        s += (i * seed) % 7
        i += 1
    return s
def step(ctx):
    global total
    n = ctx.rand() % ctx.args["most"]
    v = spread(n, ctx.id)
    for k in range(3):
        v += k * n
    total += v
    if v % 3 == 0:
        ctx.deposit("g", 0.25 + v % 5)
    if ctx.sense("g") > 3.0:
        x, y = ctx.pos
        ctx.goto((x + 1) % 16, y)
'''
CAPS = [{'flavours': ['g'], 'ops': ['sense', 'deposit']}]
def man(i, src, ops=400, most=48):
    return {'name': 'w%d' % i, 'code': src, 'caps': CAPS, 'args': {'most': most},
            'attend': {'flavour': 'g', 'at': (i % 16, (3 * i) % 16)},
            'budget': {'ops': ops, 'deposits': 1000}}
def colony(src, seed, n=12, tight=3, flavours=()):
    m = mesh.Mesh([grid('g', 16, 16, E=0.05, G=0.1)] + list(flavours), seed=seed)
    for i in range(n):
        # The last `tight` Loci have an ops budget their longer steps run out of.
        m.spawn(man(i, src, 50 if i >= n - tight else 400))
    return m
def hx(b):
    return "".join("%02x" % c for c in b[:12])
def marks(m, rounds, fn=None):
    field, order = hashlib.sha256(), hashlib.sha256()
    def mark(m):
        field.update(m.field.digest())
        order.update(repr(m.last_order).encode())
        if fn is not None:
            fn(m)
        return False
    m.run(rounds, every=1, fn=mark)
    rows = [(d["id"], d["name"], d["state"], d["steps"], d["strikes"], d["ops"])
            for d in m.ps()]
    return {"field": hx(field.digest()), "order": hx(order.digest()),
            "ps": hx(hashlib.sha256(repr(rows).encode()).digest()),
            "who": hx(hashlib.sha256(repr(m.field.depositors()).encode()).digest()),
            "audit": hx(m.caps.audit_head()),
            "strikes": sum(d["strikes"] for d in m.ps())}
# Swaps and rollbacks made by the stress run's toggler.
DID = {"swapped": 0, "rolled back": 0, "verdicts": []}
def toggler(every):
    n = [0]
    def toggle(m):
        n[0] += 1
        if n[0] % every:
            return
        mine = [s for s in opt.swaps() if s[1] in ("spread", "step")]
        if mine:
            for s in mine:
                DID[opt.rollback(s[0], "stress")["verdict"]] += 1
            opt_locus.decided.clear()
            return
        for _k, fn, _a in opt_locus.hot(m, 4):
            e = opt_locus.attempt(m, fn)
            if e is not None:
                DID["verdicts"].append((fn.__name__, e["verdict"], e["gate"]))
                if e["verdict"] == "swapped":
                    DID["swapped"] += 1
    return toggle
def stress(seed=7, rounds=120, every=8):
    # The same source text with a tag, so this code is compiled on its own (no swap yet).
    src = SRC + "# stress %d\n" % seed
    off = marks(colony(src, seed), rounds)
    on = marks(colony(src, seed), rounds, toggler(every))
    return off, on
# A step whose twin meets, live, an exception its gates never saw: at tick 40 and later
# it raises KeyError, and the gates run earlier.
BOOM = '''
def step(ctx):
    s = 0
    for i in range(20):
        s += i * ctx.id
    if ctx.tick >= 40:
        raise KeyError(s)
    ctx.deposit("g", 0.1)
'''
