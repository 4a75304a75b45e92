# SPDX-License-Identifier: MIT
# test_rewrite_stress.py: a source compiled three times (rewritten, twin, native twins),
# the seeded flips of rewrites or promotions, and the rounds that compare them. Pasted
# after xorshift32.py, its generator.
import _rw, _budget, hashlib, gc
SRC = """
def gen(n, hook):
    t = 0
    for i in range(n):
        if i % 3 == 0:
            t += 1
        hook()
        yield t * 2 + i
        t = t + (i << 1) - (i >> 1)
    return
def body(n, hook, L):
    s = 0
    i = 0
    while i < n:
        hook()
        L[i % len(L)] = L[i % len(L)] + i
        if i > 5 and s % 7 == 3:
            s -= 2
        s += L[i % len(L)] * 3
        i += 1
    return s
def exc(n, hook):
    s = 0
    for i in range(n):
        hook()
        try:
            s += 10 // (i - n // 2)
        except ZeroDivisionError:
            s -= 1
    if s > 0:
        raise ValueError(s)
    return None
def rec(n, hook):
    if n <= 0:
        return 0
    hook()
    k = 0
    for j in range(3):
        k += j
    return n + k + rec(n - 1, hook) * 2 % 1000003
class CM:
    def __init__(self, log):
        self.log = log
    def __enter__(self):
        self.log.append(1)
        return self
    def __exit__(self, *a):
        self.log.append(2)
        return False
def fin(n, hook, log):
    t = 0
    for i in range(n):
        try:
            with CM(log):
                hook()
                if i == 3:
                    continue
                t += i
                if i == n - 2:
                    break
        finally:
            log.append(t)
    return t
def spin(out, lim):
    i = 0
    while i < lim:
        out[0] = i
        i += 1
    return i
"""
R, T = {}, {}
exec(SRC, R)
exec(SRC, T)
NAMES = ['gen', 'body', 'exc', 'rec', 'fin', 'spin', '__init__', '__enter__', '__exit__']
def fns(ns):
    return [ns[n] for n in NAMES[:6]] + [getattr(ns['CM'], n) for n in NAMES[6:]]
def digest(f):
    return hashlib.sha256(_rw.code(f)).digest()
D0 = [digest(f) for f in fns(R)]
SEED = [2463534242]
def rnd(n):
    SEED[0] = xorshift32(SEED[0])
    return SEED[0] % n
ST = {'flips': 0, 'applied': 0, 'undone': 0, 'raised': 0}
def flip(f):
    ST['flips'] += 1
    if rnd(3) == 0:
        ST['undone'] += _rw.undo(f) > 0
    else:
        ST['applied'] += _rw.apply(f, _rw.plan(f, rnd(_rw.ALL + 1) & _rw.ALL)) > 0
# Native twins of R's functions (the same source with every def compiled natively),
# for the promotion stress: pflip promotes or demotes instead of rewriting.
N = {}
exec(SRC.replace("def ", "@micropython.native\ndef ").replace(
    "\n    @micropython.native\ndef ", "\n    @micropython.native\n    def "), N)
TWIN = {id(f): t for f, t in zip(fns(R), fns(N))}
def pflip(f):
    ST['flips'] += 1
    if _rw.twin(f) is None:
        if rnd(3):
            _rw.promote(f, TWIN[id(f)])
            ST['applied'] += 1
    elif rnd(3) == 0:
        _rw.demote(f)
        ST['undone'] += 1
FLIP = [flip]
class Hook:
    # Every call flips the rewritten copy's code (never the twin's); every `every`-th
    # raises, on both sides alike, unwinding through the running (rewritten) loop.
    def __init__(self, targets, every):
        self.targets, self.every, self.n = targets, every, 0
    def __call__(self):
        self.n += 1
        for f in self.targets:
            FLIP[0](f)
        if self.n % self.every == 0:
            ST['raised'] += 1
            raise KeyError(self.n)
def outcome(f, *a):
    try:
        return ('=', f(*a))
    except Exception as e:
        return ('!', type(e).__name__, e.args)
def get(ns, n):
    return getattr(ns['CM'], n) if n.startswith('__') else ns[n]
def hooks(ns, names, every):
    return Hook([get(ns, n) for n in names] if ns is R else [], every)
def gens(ns, every):
    h = hooks(ns, ['gen'], every)
    gs = [ns['gen'](12 + k, h) for k in range(3)]
    out = []
    for step in range(40):
        g = gs[step % 3]
        if ns is R:
            FLIP[0](ns['gen'])
        try:
            out.append(next(g))
        except StopIteration:
            out.append('stop')
        except KeyError as e:
            out.append(('KeyError', e.args))
    return out
def round_(ns, r):
    out = [gens(ns, 7 + r % 5)]
    out.append(outcome(ns['body'], 30 + r, hooks(ns, ['body'], 17 + r % 13), [1, 2, 3, 2**62 - 2]))
    out.append(outcome(ns['exc'], 10 + r % 9, hooks(ns, ['exc'], 50)))
    out.append(outcome(ns['exc'], 6, hooks(ns, ['exc'], 1000)))
    out.append(outcome(ns['rec'], 60 + r % 40, hooks(ns, ['rec'], 10**6)))
    out.append(outcome(ns['rec'], 60, hooks(ns, ['rec'], 45)))
    log = []
    out.append(outcome(ns['fin'], 9, hooks(ns, ['fin', '__enter__', '__exit__'], 5 + r % 4), log))
    out.append(log)
    return out
def stress(rounds):
    bad = []
    for r in range(rounds):
        a, b = round_(R, r), round_(T, r)
        if a != b:
            bad.append((r, a, b))
        if r % 5 == 4:
            gc.collect()
    return bad
