# SPDX-License-Identifier: MIT
# Set-up of test_optimiser_mesh.py: hot functions, and two optimiser Loci on a mesh gating them.
import opt, opt_mesh, _cap
from lo import *
def tri(a, b):
    s = 0
    i = 0
    while i < a:
        s += i * b
        i += 1
    return s
def poly(n):
    t = 0
    for i in range(n):
        t = t + (i * i) % 7
    return t
def slow(n):
    # Nearly all of its time is in C (the sort), so no rewrite of its bytecode can pay:
    # the 'faster' gate must reject it by a clear margin, whatever the image's layout.
    return len(sorted(range(n, 0, -1))) + 1
ROUNDS = 0
def work():
    global ROUNDS, SCRATCH
    ROUNDS += 1
    SCRATCH = ROUNDS
    del SCRATCH
    for k in range(4):
        tri(60 + k, 3)
        poly(60 + k)
    for k in range(50):
        slow(120)
S = opt_mesh.start(n=2, seed=5)
M = S.m
OPT = [r['id'] for r in M.ps()]
WANT = ('tri', 'poly', 'slow')
def decided():
    return len([e for e in S.log if e[2] in WANT])
def go(limit):
    for i in range(limit):
        work()
        M.round()
        if decided() >= len(WANT):
            return M.rounds
    return -1
def more(n):
    for i in range(n):
        work()
        M.round()
def asked(lid):
    return [x.split(': ', 1)[1] for x in M.info(lid)['log'] if ': asked ' in x]
