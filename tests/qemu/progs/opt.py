# SPDX-License-Identifier: MIT
# Set-up of test_opt.py: the functions the optimiser's gates are tried on.
import opt, _rw, hashlib, binascii
opt.native_promotion = False  # these tests gate in-place rewrites; native: test_opt_native
def hexd(fn):
    return binascii.hexlify(hashlib.sha256(_rw.code(fn)).digest()).decode()
def tri(a, b):
    s = 0
    i = 0
    while i < a:
        s += i * b
        i += 1
    return s
def drive():
    for k in range(30):
        tri(200 + k, 3)
def talk(n):
    for i in range(n):
        print('line', i + 1)
    return n
SEEN = []
def leaky(x):
    SEEN.append(x)
    return len(SEEN) + x
def slow(n):
    return sum(range(n)) + 1
def spin(n):
    k = 0
    for i in range(n):
        k += i & 7
    return k
def spin_more():
    for j in range(40):
        spin(300 + j)
def first(L, n):
    t = 0
    for i in range(n):
        t += L[i] * 2
    return t
