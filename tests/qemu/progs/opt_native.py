# SPDX-License-Identifier: MIT
# Set-up of test_opt_native.py: float loops, a method, a generator and an endless loop:
# candidates for native twins.
import opt, _rw, _budget, hashlib, binascii
def hexd(fn):
    return binascii.hexlify(hashlib.sha256(_rw.code(fn)).digest()).decode()
SCALE = 3
BIAS = 0
ACC = []
def tri(a, b=SCALE, acc=ACC):
    # Float arithmetic: the in-place rewrites' small-int guards do not fit it, so the
    # native twin is the candidate that wins.
    s = 0.0
    i = 0.0
    while i < a:
        s += i * b
        i += 1.0
    acc.append(a)
    return s + BIAS
class Pt:
    def __init__(self, x):
        self.x = x
    def walk(self, n):
        t = 0
        for i in range(n):
            t += self.x * i * 0.5
        return t
def gen_sq(n):
    i = 0
    while i < n:
        yield i * i * 0.5
        i += 1
def forever(k):
    while True:
        k += 1
def drive():
    for k in range(30):
        tri(200 + k)
        Pt(k).walk(150)
