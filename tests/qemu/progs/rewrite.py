# SPDX-License-Identifier: MIT
# test_rewrite.py: functions the planner rewrites, and inputs that take both the fast
# paths and the guard misses.
import _rw, hashlib
def digest(fn):
    return hashlib.sha256(_rw.code(fn)).digest()
def arith(a, b):
    s = 0
    for i in range(a, b):
        if i % 3 == 0:
            s += 2
        elif i < 0:
            s -= 1
        s = s + (i * a) // 7 - (b ^ i) + (i & 5 | 2) + (i << 2) + (i >> 1)
    return s
def seq(L, n):
    t = 0
    for i in range(-len(L), len(L)):
        L[i] = L[i] + n
        t += L[i] * 2 + L[0]
    return t
def ret(x):
    if x != 1:
        return None
    x += 3
    return x
def count(n):
    k = 0
    while k < n:
        k += 1
    for j in range(n, 0, -2):
        k -= 1
    return k
FNS = [arith, seq, ret, count]
def inputs():
    big = 1 << 70
    yield from [(arith, ab) for ab in ((-5, 9), (0, 0), (3, 9), (9, 3), (-7, -1),
                                       (2**40, 2**40 + 3), (2**60, 2**60 + 2), (big, big + 2),
                                       (1.5, 3), (2, 'x'))]
    yield from [(seq, (L, n)) for L in ([1, 2, 3], (4, 5), [1.5, 2], ['a', 'b'])
                for n in (1, 2.5, 'c')]
    yield from [(ret, (x,)) for x in (0, 1, 1.0, 'x', big)]
    yield from [(count, (n,)) for n in (0, 5, 100, 2.5, 'x')]
def run_all():
    out = []
    for fn, args in inputs():
        if fn is seq:
            args = (list(args[0]) if isinstance(args[0], list) else args[0], args[1])
        try:
            out.append(repr(fn(*args)))
        except Exception as e:
            out.append(type(e).__name__)
    return out
