# SPDX-License-Identifier: MIT
# Set-up of test_opt_tier.py: @micropython.native defs calling viper, native and bytecode
# code, and looping over many kinds of iterator: what the optimiser's second tier
# (direct calls and iteration, vm/patches/0021) compiles again.
import opt, _rw, _budget, micropython
@micropython.viper
def vadd(x: int, y: int) -> int:
    return x + y
@micropython.native
def nsq(x):
    return x * x
def bsq(x):
    return x * x
class Box:
    def __init__(self, v):
        self.v = v
    def get(self, k=1):
        return self.v * k
class Count:
    def __init__(self, n):
        self.i, self.n = 0, n
    def __iter__(self):
        return self
    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i
def gen(n):
    for i in range(n):
        yield i * 3
@micropython.native
def nat_call(r):
    f = vadd
    t = 0
    for i in r:
        t = f(t, i)
    return t
@micropython.native
def calls(x):
    # Every kind of callee a twin's direct call meets, and the errors they raise.
    b = Box(x)
    m = b.get
    out = [vadd(x, 2), nsq(x), bsq(x), b.get(), b.get(k=3), m(2), Box.get(b, 4), len([x]),
           max(x, 7), 'ab'.upper(), [x].index(x), b.__class__.__name__,
           # Built-in functions of each call-slot kind (0, 1, 2, 3 arguments, var with
           # and without keywords), called as functions and as methods.
           abs(-x), divmod(x, 3), isinstance(x, int), getattr(b, 'v'), getattr(b, 'zz', 0),
           'a,b,c'.split(',', 1), 'a'.join(['b', 'c']), [x, 1].pop(), {1: 2}.get(1),
           {1: 2}.get(3, 4), sorted([3, x], reverse=True), min([x, 2])]
    for bad in (lambda: abs(), lambda: abs(1, 2), lambda: divmod(1), lambda: [x].pop(0, 1),
                lambda: 'a'.join(), lambda: len([x], 2), lambda: getattr(b),
                lambda: {}.get(k=1)):
        try:
            bad()
        except TypeError as e:
            out.append(str(e))
    try:
        vadd(x)
    except TypeError as e:
        out.append(str(e))
    try:
        nsq(x, x)
    except TypeError as e:
        out.append(str(e))
    try:
        bsq()
    except TypeError as e:
        out.append(str(e))
    try:
        x()
    except TypeError as e:
        out.append(str(e))
    return out
@micropython.native
def loops(n):
    # Every kind of iterator a twin's direct iteration meets.
    out = []
    for i in range(n, -n, -3):
        out.append(i)
    for i in range(0):
        out.append(-1)
    for i in range(2, n * 4, 5):
        out.append(i)
    for x in [1, 2, n]:
        out.append(x)
    for x in (n, 'a'):
        out.append(x)
    for c in 'xyz':
        out.append(c)
    for b in b'ab':
        out.append(b)
    for k in {'k': 1}:
        out.append(k)
    for x in gen(n):
        out.append(x)
    for i, x in enumerate('ab'):
        out.append((i, x))
    for p in zip((1, 2), 'cd'):
        out.append(p)
    for x in map(abs, (-1, -2)):
        out.append(x)
    for x in Count(n):
        out.append(x)
    for x in iter([5, 6]):
        out.append(x)
    return out
@micropython.native
def deep(n):
    return 0 if n == 0 else 1 + deep(n - 1)
@micropython.native
def nat_forever(k):
    while True:
        k += 1
def tier_twin(fn):
    # fn's def compiled by the second tier, as the optimiser compiles a twin.
    return opt._source.compile_def(fn, opt._source.def_source(fn), True)
def both(fn, *args):
    # (stock native result, second-tier result), exceptions by type.
    out = []
    for f in (fn, tier_twin(fn)):
        try:
            out.append(f(*args))
        except Exception as e:
            out.append(type(e).__name__)
    return out
