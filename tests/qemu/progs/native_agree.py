# SPDX-License-Identifier: MIT
# test_opt_native.py: the same functions as bytecode and as native code, compared over many
# operands (small-int edges, big ints, floats, other types), subscripts and attributes.
import random
OPS = ['+', '-', '*', '&', '|', '^', '<', '>', '<=', '>=', '==', '!=']
CODE = "def f(a, b):\n    return (" + ", ".join("a %s b" % o for o in OPS) + ")\n"
CODE += ("def h(a, b):\n    x = a\n    x += b\n    y = a\n    y -= b\n    z = a\n"
         "    z *= b\n    w = a\n    w &= b\n    w |= b\n    w ^= a\n"
         "    return x, y, z, w, (1 if a < b else 2), (3 if a == b else 4)\n")
CODE += "def s(a, i):\n    return a[i]\n"
CODE += "def t(a, i):\n    a[i] = 9\n    return a\n"
nb = {}
nn = {}
exec(CODE, nb)
exec(CODE.replace("def ", "@micropython.native\ndef "), nn)
B = 2**62
VALS = [0, 1, -1, 2, -2, 7, -7, 2**31, -2**32, B - 1, -B, B // 2, -B // 2, B - 2,
        3037000499, -3037000499, 2**62 + 5, -2**63, 1.5, True, False, 'a', (1,)]
def outcome(fn, a, b):
    try:
        return ('ok', fn(a, b) if fn.__name__ != 'at' else fn(a))
    except Exception as e:
        return ('exc', type(e))
def same(x, y):
    if x[0] != y[0]:
        return False
    if x[0] == 'exc':
        return x[1] is y[1]
    return all(type(p) is type(q) and p == q for p, q in zip(x[1], y[1]))
def agree(rounds):
    n = bad = 0
    pairs = [(a, b) for a in VALS for b in VALS]
    for _ in range(rounds):
        a = ((random.getrandbits(32) << 32) | random.getrandbits(32)) - 2**63
        b = ((random.getrandbits(32) << 32) | random.getrandbits(32)) - 2**63
        pairs.append((a >> random.getrandbits(6), b >> random.getrandbits(6)))
    for a, b in pairs:
        for k in ('f', 'h'):
            n += 1
            if not same(outcome(nb[k], a, b), outcome(nn[k], a, b)):
                bad += 1
                print('MISMATCH', k, a, b)
    return n, bad
class A:
    x = 'class'
class WithMember(A):
    def __init__(self):
        self.x = 'member'
class Prop:
    @property
    def x(self):
        return 'property'
class Fallback:
    def __getattr__(self, name):
        return 'getattr ' + name
class Slotless(WithMember):
    pass
import sys as _sys
ATTR_OBJS = [A(), WithMember(), Prop(), Fallback(), Slotless(), A, 1, 'x', None, _sys]
AT = "def at(o):\n    return o.x\n"
exec(AT, nb)
exec("@micropython.native\n" + AT, nn)
def agree_attr():
    n = bad = 0
    for o in ATTR_OBJS:
        n += 1
        x, y = outcome(nb['at'], o, 0), outcome(nn['at'], o, 0)
        if x[0] != y[0] or x[1] != y[1] and not (x[0] == 'exc' and x[1] is y[1]):
            bad += 1
            print('MISMATCH', o, x, y)
    return n, bad
SEQS = [[1, 2, 3], (4, 5, 6), 'abc', b'xyz', bytearray(b'pq'), {0: 'a', -1: 'b'}, [], (),
        range(5), 7, None]
IDXS = [0, 1, 2, 3, -1, -3, -4, 2**40, -2**40, 2**70, True, 1.0, 'a', None]
def fresh(a):
    return list(a) if type(a) is list else bytearray(a) if type(a) is bytearray else (
        dict(a) if type(a) is dict else a)
def agree_subscr():
    n = bad = 0
    for a in SEQS:
        for i in IDXS:
            for k in ('s', 't'):
                n += 1
                x = outcome(nb[k], fresh(a), i)
                y = outcome(nn[k], fresh(a), i)
                if x[0] != y[0] or (x[0] == 'exc' and x[1] is not y[1]) or (
                        x[0] == 'ok' and (type(x[1]) is not type(y[1]) or x[1] != y[1])):
                    bad += 1
                    print('MISMATCH', k, a, i, x, y)
    return n, bad
# Floats and complex numbers (vm/patches/0025, vm/opt/mod/rw_arith.c): every operator the
# native helper computes itself, and the ones it hands on, over signed zeros, infinities,
# NaN, the float edges, ints small and big, bools and complex numbers. Results compare
# by type and repr, so a -0.0 for a 0.0 or one rounding apart is a mismatch.
FOPS = ['+', '-', '*', '/', '//', '%', '**', '<', '>', '<=', '>=', '==', '!=']
FCODE = "".join("def fo%d(a, b):\n    return a %s b\n" % (i, o) for i, o in enumerate(FOPS))
FCODE += "".join("def fa%d(a, b):\n    a %s= b\n    return a\n" % (i, o)
                 for i, o in enumerate(FOPS[:4]))
FCODE += "def fm(a, b):\n    return a * a - b * b + a * b, a * 0.5 + b, (a + b) * (a - b)\n"
FNAMES = ["fo%d" % i for i in range(len(FOPS))] + ["fa%d" % i for i in range(4)] + ["fm"]
exec(FCODE, nb)
exec(FCODE.replace("def ", "@micropython.native\ndef "), nn)
INF = float('inf')
FVALS = [0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 1e308, -1e308, 5e-324, 2.0 ** 53, INF, -INF,
         float('nan'), 0, 1, -3, 7, 2 ** 62 - 1, 2 ** 70, True, False,
         1j, 2 - 3j, complex(-0.0, 0.0), complex(1.5, -0.0), complex(INF, 1), 'a']
def fsame(x, y):
    if x[0] != y[0]:
        return False
    if x[0] == 'exc':
        return x[1] is y[1]
    p, q = x[1], y[1]
    if type(p) is tuple and type(q) is tuple:
        return len(p) == len(q) and all(type(u) is type(v) and repr(u) == repr(v)
                                        for u, v in zip(p, q))
    return type(p) is type(q) and repr(p) == repr(q)
def fcompare(names, ns, run, skip):
    # Each function of `names` run by `run` on every pair of FVALS but those `skip` says,
    # as bytecode (nb) and from `ns`: (calls compared, mismatches).
    n = bad = 0
    for a in FVALS:
        for b in FVALS:
            if skip(a, b):
                continue
            for k in names:
                if k == 'fo6' and type(a) in (int, bool) and type(b) in (int, bool) and b > 8:
                    continue  # 2**70 ** 2**70: a big-int power, not float arithmetic
                n += 1
                x, y = run(nb[k], a, b), run(ns[k], a, b)
                if not fsame(x, y):
                    bad += 1
                    print('MISMATCH', k, repr(a), repr(b), x, y)
    return n, bad
def agree_float():
    # (A string repeated 2**62 times is not what this compares.)
    return fcompare(FNAMES, nn, outcome,
                    lambda a, b: str in (type(a), type(b)) and 2 ** 62 - 1 in (a, b))
# Small ints in the ops the emitter leaves to mp_native_binary_op (<<, >>, //, %, /),
# with counts and divisors across the word, zero and negative, and the edges of the
# small-int range, whose results leave it (MP_SMALL_INT_MIN // -1).
IOPS = ['<<', '>>', '//', '%', '/']
ICODE = "".join("def io%d(a, b):\n    return a %s b\n" % (i, o) for i, o in enumerate(IOPS))
ICODE += "".join("def ia%d(a, b):\n    a %s= b\n    return a\n" % (i, o)
                 for i, o in enumerate(IOPS))
exec(ICODE, nb)
exec(ICODE.replace("def ", "@micropython.native\ndef "), nn)
IVALS = [v for v in VALS if type(v) is int] + [3, -3, 5, 13, 61, 62, 63, 64, 65, 100]
def agree_int_ops(rounds):
    n = bad = 0
    pairs = [(a, b) for a in IVALS for b in IVALS]
    for _ in range(rounds):
        a = ((random.getrandbits(31) << 31) | random.getrandbits(31)) - 2 ** 61
        pairs.append((a >> random.getrandbits(6), random.getrandbits(7) - 20))
    for a, b in pairs:
        for i in range(len(IOPS)):
            if IOPS[i] == '<<' and b > 100:
                continue  # a shift by 2**62: not what this compares
            for k in ('io%d' % i, 'ia%d' % i):
                n += 1
                if not fsame(outcome(nb[k], a, b), outcome(nn[k], a, b)):
                    bad += 1
                    print('MISMATCH', k, a, b)
    return n, bad
# A float result stored in a float operand that only native code's stack holds (patch
# 0028), in the places where an operand only looks like such a float: returned by a
# user's method that keeps it, named by a walrus, passed to a call, duplicated by a
# comparison chain or an augmented subscript, met at a label, held across a yield.
RCODE = """
class Keep:
    def __init__(self):
        self.kept = []
    def __mul__(self, o):
        r = o * 2.0
        self.kept.append(r)
        return r
    def __rmul__(self, o):
        r = o * 3.0
        self.kept.append(r)
        return r
    def __add__(self, o):
        return self.kept[-1] if self.kept else o
class F(float):
    def __add__(self, o):
        return KEPT[0]
KEPT = [0.5]
def stash(x):
    KEPT.append(x)
    return x
def rk(k, x):
    return (k * x) + 1.0, (x * k) + 2.0, (k * x) * 5.0, (k + x) * 1.0, k.kept
def rw(a, b):
    return (t := a * b) + 1.0, t, (u := a + b) * (u := u - b), u
def rc(a, b):
    return stash(a * b) + 1.0, stash(a * b + b) - (a * b), KEPT[-2:]
def rchain(a, b):
    return a * b < a * b + 1.0 < (a + b) * 2.0, a * b == a * b
def rlab(a, b, c):
    return (a * b if c else a - b) * 2.0 + (a * b or b * b), (a * b and a / b) + a * b
def raug(a, b):
    d = {'k': a * b}
    d['k'] += a * b + b
    s = [a * b]
    s[0] *= a * b - 1.0
    return d['k'], s[0]
def rsub(x, o):
    return (x + o) * 2.0, KEPT[0]
def rgen(a, b):
    x = (a * b) + (yield a * b)
    y = (yield x + 1.0) * (a + b)
    yield x, y
def rmix(a, b, n):
    s = 0.0
    p = 1
    for i in range(n):
        s += a * i + b / (i + 1) - (a - b) * 0.5
        p = p * 3 + i
    return s, p, (a * b) / 3 + n // 2, float(n) * a + n
def rloop(x, n):
    s = 0.0
    for i in range(n):
        s += x * x + x * 0.25 - x / 3.0
    return s
"""
rb = {}
rn = {}
exec(RCODE, rb)
exec(RCODE.replace("def r", "@micropython.native\ndef r"), rn)
def rruns(ns):
    ns['KEPT'][:] = [0.5]
    out = [ns['rk'](ns['Keep'](), x) for x in (4.0, -0.0, 3)]
    for a, b in ((1.5, 2.0), (0.1, 3), (-0.0, 0.0), (2, 3), (1e308, 10.0), (float('nan'), 1.0)):
        for f in ('rw', 'rc', 'rchain', 'raug', 'rmix'):
            try:
                out.append(ns[f](a, b) if f != 'rmix' else ns[f](a, b, 5))
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        for c in (0, 1):
            out.append(ns['rlab'](a, b, c))
        g = ns['rgen'](a, b)
        out.append((next(g), g.send(0.25), g.send(2.0)))
    out.append(ns['rsub'](ns['F'](1.0), 2.0))
    out.append(list(ns['KEPT']))
    return repr(out)
def agree_fresh():
    x, y = rruns(rb), rruns(rn)
    if x != y:
        print('MISMATCH', x, y)
    return len(x), x == y
def alloc_per_step(fn):
    # Bytes allocated by one more round of fn's loop: the floats it made.
    import gc
    gc.collect()
    gc.disable()
    try:
        m = gc.mem_alloc()
        fn(0.5, 100)
        m1 = gc.mem_alloc()
        fn(0.5, 200)
        m2 = gc.mem_alloc()
    finally:
        gc.enable()
    return ((m2 - m1) - (m1 - m)) // 100
# Float sites (vm/patches/0029): the same defs compiled with every site's fast path,
# every leaf guarded as a number (a float or a small int: _rw.float_mode(3)), and with fast paths from type feedback (1 to
# probe, 2 to read the notes). SCODE adds sites with int leaves, constants of both kinds,
# locals that are unbound or deleted, a generator's locals, a cell (no site), and an
# expression deeper than the fast path's eight registers.
import _rw
SCODE = """
def sa(a, b):
    c = 3
    return a * c + b / 2 - 1.5 * (a - b) / (c + 0.5), (a + 1) * (b - 2)
def sb(a, b):
    if a == 0.1:
        del b
    return a * a + b
def sc(a, b):
    t = a
    t /= b
    t -= 0.5
    t *= a
    return t + 0.0
def sd(a, b):
    yield a * b + 1.0
    a = b
    yield a * 2.0 - b
def se(a, b):
    return a + (b + (a + (b + (a + (b + (a + (b + (a + (b + 1.0)))))))))
def sf(a, b):
    inner = lambda: a * 2.0
    return inner() + b * 0.5
"""
def compiled(code, mode, head="def "):
    was = _rw.float_mode(mode)
    try:
        ns = {}
        exec(code.replace(head, "@micropython.native\n" + head), ns)
    finally:
        _rw.float_mode(was)
    return ns
SNAMES = ["sa", "sb", "sc", "sd", "se", "sf"]
exec(SCODE, nb)
nf = compiled(FCODE + SCODE, 3)
rf = compiled(RCODE, 3, "def r")
def soutcome(fn, a, b):
    try:
        r = fn(a, b)
        return ('ok', tuple(r) if type(r).__name__ == 'generator' else r)
    except Exception as e:
        return ('exc', type(e))
def agree_sites(ns):
    return fcompare(FNAMES + SNAMES, ns, soutcome, lambda a, b: str in (type(a), type(b)))
def feedback(code, calls, head="def "):
    # The twins type feedback gives: probe, run the calls, compile again reading the notes.
    probe = compiled(code, 1, head)
    _rw.float_forget()
    for k, a, b in calls:
        soutcome(probe[k], a, b)
    return compiled(code, 2, head)
# Attribute leaves (p.x): read in the fast path only where they are an instance's members,
# so a property, a class attribute, __getattr__ or something that is no instance takes
# the generic code, and a property's effect happens once, as in the bytecode.
ACODE = """
class P:
    def __init__(self, x, y):
        self.x = x
        self.y = y
class Q:
    calls = 0
    def __init__(self, x):
        self.x = x
    @property
    def y(self):
        Q.calls += 1
        return 2.5
class R:
    y = 1.5
    def __init__(self, x):
        self.x = x
    def __getattr__(self, name):
        return -4.0
def pa(p, q):
    return p.x * q.x + p.y * q.y - p.x / 2.0
def pb(p, q):
    s = p.x
    s += q.y * 0.5
    s -= p.y
    return s
def pc(p, q):
    return (p.x + 1) * (q.y - 2), p.y / q.x
"""
ab = {}
exec(ACODE, ab)
af = compiled(ACODE, 3, "def p")
def avals(ns):
    P, Q, R = ns['P'], ns['Q'], ns['R']
    return [P(1.5, 2.0), P(3, 4), P(-0.0, 0.0), P(1e308, 0.1), P(1.5, 'a'), P(2 ** 70, 1.0),
            P(float('nan'), 1j), Q(2.0), Q(0), R(0.5), 1.5, None]
def aruns(ns):
    ns['Q'].calls = 0
    out = []
    vals = avals(ns)
    for a in vals:
        for b in vals:
            for k in ('pa', 'pb', 'pc'):
                r = soutcome(ns[k], a, b)
                out.append(r if r[0] == 'exc' else ('ok', repr(r[1])))
    out.append(ns['Q'].calls)
    return out
def agree_attrs(ns):
    x, y = aruns(ab), aruns(ns)
    bad = [(i, p, q) for i, (p, q) in enumerate(zip(x, y)) if p != q]
    for b in bad[:5]:
        print('MISMATCH', b)
    return len(x), len(bad), x[-1]
def fstats(s0):
    # Sites compiled and fast paths made since s0; sites the notes say ran (now).
    s = _rw.float_stats()
    return s[0] - s0[0], s[1] - s0[1], s[2]
# Unboxed float locals (vm/patches/0031): a site's result stored to a local stays a
# double, with a mark in the local, until code other than a site reads it. UCODE reads
# such locals every other way: a call, a comparison, a container, identity, a closure's
# cell beside them, after a raise caught in the function and in its finally, after del
# and on a path where they are unbound, across yields, stored by unpacking and a for
# target between sites, at a break out of a loop whose condition reads them.
UCODE = """
def ua(a, b):
    s = 0.0
    for i in range(4):
        s += a * i + b
    return s
def ub(a, b):
    s = a
    out = []
    for i in range(3):
        s = s * 2.0 + b
        out.append(s)
        if s > 10.0:
            s -= 10.0
    return s, out, out[-1] is s
def uc(a, b):
    if a == 0.1:
        t = b
    t = t * 2.0 + 1.0
    return t
def ud(a, b):
    s = a
    for i in range(3):
        s = s * 1.5 + b
        yield i
    yield s
def ue(a, b):
    s = a
    r = None
    try:
        for i in range(3):
            s = s / b + 1.0
            s = s - 1.0 / (b - 1.0)
    except ZeroDivisionError:
        r = ('zde', s)
    finally:
        r = (r, s * 1.0)
    return r
def uf(a, b):
    s = a * b + 1.0
    if b == 3.0:
        del s
    return s
def ug(a, b):
    s = a + b * 1.0
    s, t = b, s
    u = s * 2.0 + t
    for s in (a, b):
        u += s * 0.5
    return u, s, t
def uh(a, b):
    s = a * 1.0
    n = 0
    while s < 100.0:
        s = s * 2.0 + b
        n += 1
        if n > 5:
            break
    return s, n
def ui(a, b):
    s = a * 1.0
    x = b * 1.0
    f = lambda: s
    x += s * x
    return f(), x
def uj(a, b):
    s = a * 2.0
    t = s
    s += b
    return t, s, t is s, s == t
"""
UNAMES = ["ua", "ub", "uc", "ud", "ue", "uf", "ug", "uh", "ui", "uj"]
exec(UCODE, nb)
def agree_unboxed(ns):
    return fcompare(UNAMES, ns, soutcome, lambda a, b: str in (type(a), type(b)) and 2 ** 62 - 1 in (a, b))
def fed_twins(code, names, b):
    # code with every site guarded as numbers, then from feedback on calls of each of
    # names with (1.5, 2.0) and (0.1, b); for each, (fast paths made, of them storing a
    # local unboxed).
    s0 = _rw.float_stats()
    every = compiled(code, 3)
    s1 = _rw.float_stats()
    fed = feedback(code, [(k, 1.5, 2.0) for k in names] + [(k, 0.1, b) for k in names])
    s2 = _rw.float_stats()
    return every, fed, [(s1[1] - s0[1], s1[3] - s0[3]), (s2[1] - s1[1], s2[3] - s1[3])]
def unboxed_twins():
    return fed_twins(UCODE, UNAMES, 3.0)
# Comparisons as float sites (vm/patches/0032): `l op r` for op in < > == <= >= != over a
# site's kind of expressions is compared on doubles (NaN unordered, -0.0 equal to 0.0,
# a small int converted as the bytecode converts it); chains, `is` and `in` are no sites.
CCODE = """
def c0(a, b): return a < b
def c1(a, b): return a > b
def c2(a, b): return a == b
def c3(a, b): return a <= b
def c4(a, b): return a >= b
def c5(a, b): return a != b
def c6(a, b): return a * 2.0 < b + 1
def c7(a, b): return a + 0.5 == b - 0.5
def c8(a, b):
    n = 0
    s = a * 1.0
    while s < b and n < 5:
        s = s * 2.0 + 1.0
        n += 1
    return s, n
def c9(a, b):
    return 1 if a * b >= 3.0 else 2, not (a != b * 1.0)
def c10(a, b): return a < b < 2.0, a is b, a in (b,)
"""
CNAMES = ["c%d" % i for i in range(11)]
exec(CCODE, nb)
def agree_compare(ns):
    return fcompare(CNAMES, ns, soutcome, lambda a, b: False)
def compare_twins():
    # (b an int in the second calls: a comparison of a float with an int has a fast path)
    every, fed, made = fed_twins(CCODE, CNAMES, 3)
    return every, fed, [m[0] for m in made]
