# SPDX-License-Identifier: MIT
# test_rewrite_ops.py, after decode()/find() (tools/guest/rwguest.py): twins of one source,
# one patched by hand, compared over argument sets, with globals and builtins changing.
import _rwops, io, sys, _budget
def twin_globals(src):
    g1 = {}
    g2 = {}
    exec(src, g1)
    exec(src, g2)
    return g1, g2
def twin(src, name):
    g1, g2 = twin_globals(src)
    return g1[name], g2[name]
def patch(b, pat, new):
    # Writes `new` over the head of b's first `pat`, counting guard misses from zero.
    off = find(b, pat)
    old = _rwops.poke(b, off, new)
    _rwops.reset()
    return off, old
def patched_twins(src, name, pat, new):
    # Both namespaces and both twins, the second one patched.
    g1, g2 = twin_globals(src)
    patch(g2[name], pat, new)
    return g1, g2, g1[name], g2[name]
def cp(x):
    return type(x)(x) if isinstance(x, (list, dict)) else x
def outcome(fn, args):
    try:
        r = fn(*[cp(a) for a in args])
        return ('ok', type(r).__name__, repr(r))
    except Exception as e:
        s = io.StringIO()
        sys.print_exception(e, s)
        return ('exc', type(e).__name__, s.getvalue())
def compare(src, name, pat, new, argsets):
    a, b = twin(src, name)
    off, old = patch(b, pat, new)
    bad = []
    for args in argsets:
        x = outcome(a, args)
        y = outcome(b, args)
        if x != y:
            bad.append((args, x, y))
    code = _rwops.code(b)
    return (len(argsets), _rwops.misses(b), _rwops.undo(code, off) == old, bad[:2])
class U:
    def __init__(s, v):
        s.v = v
    def __repr__(s):
        return 'U(%r)' % (s.v,)
    __add__ = lambda s, o: ('add', s.v, o)
    __radd__ = lambda s, o: ('radd', s.v, o)
    __sub__ = lambda s, o: ('sub', s.v, o)
    __mul__ = lambda s, o: ('mul', s.v, o)
    __floordiv__ = lambda s, o: ('fdiv', s.v, o)
    __mod__ = lambda s, o: ('mod', s.v, o)
    __and__ = lambda s, o: ('and', s.v, o)
    __or__ = lambda s, o: ('or', s.v, o)
    __xor__ = lambda s, o: ('xor', s.v, o)
    __lshift__ = lambda s, o: ('lsh', s.v, o)
    __rshift__ = lambda s, o: ('rsh', s.v, o)
    __lt__ = lambda s, o: s.v < 0
    __gt__ = lambda s, o: s.v > 0
    __le__ = lambda s, o: ()
    __ge__ = lambda s, o: (1,)
    __eq__ = lambda s, o: s.v == 5
class L(list):
    pass
M = 2**62 - 1
INTS = [0, 1, -1, 2, -2, 3, -3, 7, -7, 63, 64, -64, 65, 2**31, -2**31, 2**32 + 1, 2**61,
        -2**61, M - 1, M, -M, -M - 1, M + 1, -M - 2, 2**63, 2**100, -2**100]
OTHERS = [1.5, -0.0, 2.0, 'ab', [1, 2], (3,), True, False, None, U(5), U(-3)]
PAIRS = [(a, b) for a in INTS for b in INTS]
PAIRS += [(a, b) for a in INTS[:7] for b in OTHERS] + [(b, a) for a in INTS[:7] for b in OTHERS]
PAIRS += [(a, b) for a in OTHERS for b in OTHERS]
SHIFTS = [0, 1, 2, 31, 60, 61, 62, 63, 64, 65, 100, -1, -70, M, True, 1.0, 'x']
SPAIRS = [(a, b) for a in INTS + OTHERS for b in SHIFTS
          if not (isinstance(b, int) and b > 100 and a)]
def binop(b):
    return (0xd7 + b,)
def gscript(src, name, pat, new, arg):
    g1, g2, a, b = patched_twins(src, name, pat, new)
    bad = []
    for step in range(80):
        for g in (g1, g2):
            if step % 7 == 3:
                g.pop('G', None)
                g.pop('len', None)
            elif step % 11 == 5:
                for j in range(step):
                    g['pad%d_%d' % (step, j)] = j
            elif step % 13 == 4:
                g['len'] = lambda x: ('mylen', x)
            else:
                g['G'] = step
        x = outcome(a, (arg,))
        y = outcome(b, (arg,))
        if x != y:
            bad.append((step, x, y))
    return _rwops.misses(b), bad[:2]
def bscript(src, name, pat, new, arg):
    import builtins
    g1, g2, a, b = patched_twins(src, name, pat, new)
    bad = []
    for step in range(60):
        k = step % 10
        if k == 2:
            builtins.len = lambda x: ('blen', x)
        elif k == 4:
            del builtins.len
        elif k == 5:
            g1['len'] = g2['len'] = lambda x: ('glen', x)
        elif k == 6:
            del g1['len'], g2['len']
        elif k == 7:
            builtins.len = lambda x: ('blen2', x)
            g1['len'] = g2['len'] = lambda x: ('glen2', x)
        elif k == 8:
            del g1['len'], g2['len']
        elif k == 9:
            del builtins.len
        for j in range(3):
            x = outcome(a, (arg,))
            y = outcome(b, (arg,))
            if x != y:
                bad.append((step, x, y))
    return _rwops.misses(b), bad[:2]
class P:
    v = 'class'
class Q:
    def __init__(s, n):
        for j in range(n):
            setattr(s, 'x%d' % j, j)
        s.v = ('q', n)
class R:
    @property
    def v(s):
        return 'prop'
def objs():
    out = [P(), Q(0), Q(3), Q(9), R(), 5, 'str', [1], P]
    p = P()
    p.v = 'mine'
    out.append(p)
    q = Q(2)
    del q.v
    out.append(q)
    return out
class MA:
    def __init__(s, *a):
        s.a = a
    def m(s, *a):
        return ('MA.m', s.a, a)
    def r(s, *a):
        return s
    @staticmethod
    def st(*a):
        return ('st', a)
    @classmethod
    def cm(c, *a):
        return ('cm', c.__name__, a)
    @property
    def pr(s):
        return lambda *a: ('pr', a)
    def gen(s, *a):
        yield a
    def __dict__(s, *a):
        return 'd'
    def __next__(s, *a):
        return 'n'
    nat = abs
class MB(MA):
    def m(s, *a):
        return ('MB.m', a)
class MC(MA):
    pass
class MG(MA):
    def __getattr__(s, n):
        return lambda *a: ('ga', n, a)
    def m(s, *a):
        return ('MG.m', a)
class ML(list):
    def m(s, *a):
        return ('ML.m', len(s), a)
class MH:
    def m(s, *a):
        return ('MH.m', a)
def closure_cls():
    k = 3
    class MK:
        def m(s, *a):
            return ('MK.m', k, a)
    return MK
MK = closure_cls()
def mobjs():
    own = MA(1)
    own.m = lambda *a: ('own', a)
    own.st = lambda *a: ('own st', a)
    out = [MA(), MA(1, 2), MB(), MC(), MG(), ML([1, 2]), MH(), MK(), own, MA, MB, 5, 'abc',
           [1], (2,), None, 2**70, 1.5]
    return out
def mscript(src, name, pat, new):
    g1, g2, a, b = patched_twins(src, name, pat, new)
    class K:
        def m(s, x):
            return ('K.m', x)
    def m2(s, x):
        return ('m2', x)
    o = K()
    p = K()
    bad = []
    for step in range(90):
        k = step % 15
        if k == 2:
            K.m = lambda s, x: ('lam', x)
        elif k == 3:
            K.m = m2
        elif k == 4:
            o.m = lambda x: ('inst', x)
        elif k == 5:
            del o.m
        elif k == 6:
            K.m = staticmethod(lambda x: ('st', x))
        elif k == 7:
            K.m = classmethod(lambda c, x: ('cm', x))
        elif k == 8:
            for j in range(step):
                setattr(K, 'pad%d_%d' % (step, j), j)
        elif k == 9:
            del K.m
        elif k == 10:
            K.__getattr__ = lambda s, n: (lambda x: ('ga', n, x))
        elif k == 11:
            K.m = m2
        elif k == 12:
            K.m = abs
        elif k == 13:
            K.m = property(lambda s: (lambda x: ('prop', x)))
        elif k == 14:
            K.m = m2
            p = K()
        for obj in (o, p, o):
            x = outcome(a, (obj,))
            y = outcome(b, (obj,))
            if x != y:
                bad.append((step, x, y))
    return _rwops.misses(b), bad[:2]
def spin():
    i = 0
    while i >= 0:
        i += 1
