# SPDX-License-Identifier: MIT
# Guest side of test_opt_experience.py: two hot functions for the optimiser, one it swaps
# (spin's loop) and one it refuses for reasons of its code (plain: nothing to rewrite,
# and a word in its comment keeps a native twin from being made), settled from a warm
# start; settle_here() says how many passes and cycles that took and every journal entry made.
import kernel
import opt
passes = 0
def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def plain(x):  # super plain: tuples and loops, nothing for the rewriter
    t = (x, x, x, x)
    for i in t:
        for j in t:
            for k in t:
                pass
    return t
def run():
    global passes
    passes += 1
    for _ in range(20):
        spin(300)
        plain(1)
def settle_here():
    global passes
    for _ in range(3):
        run()
    passes = 0
    first = len(opt.journal(100000))
    t = kernel.cycles()
    opt.settle(run, rounds=16)
    t = kernel.cycles() - t
    return (passes, t, [(e['function'], e['kind'], e['verdict'], e['gate'], e['detail'])
                        for e in opt.journal(100000)[first:]])
