# SPDX-License-Identifier: MIT
"""Stress of in-place rewriting in the guest (issue 7's correctness bar): thousands of
seeded random `_rw.apply`/`_rw.undo` cycles made from inside the running code — under
suspended generators, exceptions unwinding through rewritten loops, deep recursion
rewriting the function its outer frames run, try/finally/with in rewritten loops — give
the results of an unrewritten twin (the same source compiled again), never crash, and the
final undo restores every function's original bytes (SHA-256). A budget stop in the middle
of a rewritten loop, then undo, then re-running, works too. The same rounds flipping
native promotion (vm/opt/mod/rw_promote.c) instead of rewrites match too."""

from __future__ import annotations

SETUP = r'''
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
    x = SEED[0]
    x ^= (x << 13) & 0xffffffff
    x ^= x >> 17
    x ^= (x << 5) & 0xffffffff
    SEED[0] = x
    return x % n
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
'''


def ok(guest, line: str, timeout: float = 60) -> str:
    out = guest.run(line, timeout)
    assert "Error" not in out and "Traceback" not in out, (line, out)
    return out


def test_random_rewrites_under_running_code_match_the_twin(guest):
    guest.paste(SETUP)
    assert guest.eval("[digest(f) for f in fns(T)] == D0") == "True"
    assert guest.ask("all(_rw.plan(f) for f in fns(R))") is True
    bad = guest.ask("[repr(x)[:600] for x in stress(100)][:3]", timeout=600)
    assert bad == [], bad
    st = guest.ask("ST")
    # Thousands of cycles, most of them writing or restoring bytes, and exceptions thrown
    # through the running code on both sides.
    assert st["flips"] >= 3000 and st["applied"] >= st["flips"] // 4, st
    assert st["undone"] >= st["flips"] // 10 and st["raised"] >= 100, st
    ok(guest, "[_rw.undo(f) for f in fns(R)]")
    assert guest.eval("[digest(f) for f in fns(R)] == D0") == "True"
    assert guest.ask("[_rw.undo(f) for f in fns(R)]") == [0] * 9


def test_budget_stop_in_a_rewritten_loop_then_undo_and_rerun(guest):
    ok(guest, "spin = R['spin']; n = _rw.apply(spin, _rw.plan(spin)); out = [-1]")
    assert guest.ask("n") >= 3   # incr_fast, cmpj, store_subscr at least
    ok(guest, "r = _budget.run(lambda o: spin(o, 10**9), out, 20000, 0, 0)")
    status, stopped = guest.ask("r[0], out[0]")
    assert status == 2, status                         # stopped by the ops budget
    assert 0 < stopped < 10**9, stopped
    # The twin stopped by the same budget gets as far: the fused ops poll the same way.
    ok(guest, "tout = [-1]; tr = _budget.run(lambda o: T['spin'](o, 10**9), tout, 20000, 0, 0)")
    assert guest.ask("tr[0], tout[0]") == (2, stopped)
    assert guest.ask("_rw.undo(spin) == n") is True
    assert guest.eval("digest(spin) == digest(T['spin'])") == "True"
    assert guest.ask("spin(out, 5000), out[0]") == (5000, 4999)
    ok(guest, "_rw.apply(spin, _rw.plan(spin))")
    assert guest.ask("spin(out, 7000), out[0]") == (7000, 6999)
    assert guest.ask("_budget.run(lambda o: spin(o, 10**9), out, 20000, 0, 0)[0]") == 2
    ok(guest, "_rw.undo(spin)")
    assert guest.eval("digest(spin) == D0[NAMES.index('spin')]") == "True"


def test_random_promotions_to_native_twins_under_running_code_match_the_twin(guest):
    # The same rounds with native promotion flipped instead: calls switch between the
    # bytecode and its native twin (generators made before a flip keep their code),
    # exceptions unwind through both, recursion's outer frames run one while inner calls
    # run the other; the final demotion leaves every function's bytes as they were.
    ok(guest, "FLIP[0] = pflip; ST.update(flips=0, applied=0, undone=0, raised=0)")
    assert guest.eval("all(TWIN[id(f)] is not None for f in fns(R))") == "True"
    bad = guest.ask("[repr(x)[:600] for x in stress(60)][:3]", timeout=600)
    assert bad == [], bad
    st = guest.ask("ST")
    assert st["flips"] >= 2000 and st["applied"] >= st["flips"] // 10, st
    assert st["undone"] >= st["flips"] // 20 and st["raised"] >= 60, st
    ok(guest, "[_rw.demote(f) for f in fns(R)]")
    assert guest.eval("[_rw.twin(f) for f in fns(R)] == [None] * 9") == "True"
    assert guest.eval("[digest(f) for f in fns(R)] == D0") == "True"
