# SPDX-License-Identifier: MIT
# test_budget.py: functions that return, loop, allocate, recurse, raise, and try to catch,
# delay or outlive the stop of a budgeted call.
import _budget, gc, kernel
def add(x):
    return x + 1
def loop(n):
    for i in range(n):
        pass
def mk(n):
    return [0] * n
def spin(x):
    while True:
        pass
def spin_exc(x):
    while True:
        try:
            while True:
                pass
        except:
            pass
def spin_say(x):
    print('spinning')
    spin_exc(x)
ran = []
def spin_fin(x):
    try:
        while True:
            pass
    finally:
        ran.append(1)
        while True:
            pass
def rec(n):
    return rec(n + 1)
def big(x):
    try:
        x = bytearray(10**8)
    except:
        ran.append(2)
        while True:
            pass
def grow(x):
    l = []
    try:
        while True:
            l.append([1, 2, 3])
    except:
        ran.append(3)
        while True:
            pass
saved = []
def boom(x):
    e = ValueError(x)
    saved.append(e)
    raise e
def bye(x):
    raise SystemExit(x)
def ab(x):
    try:
        _budget.abort(x)
    except:
        return 'caught'
    return 'returned'
def nest(x):
    return _budget.run(add, 1, 0, 0, 0)
def genspin():
    yield 1
    while True:
        pass
def gen_left(x):
    global G
    G = (i * i for i in range(4))
    return next(G)
def gen_stuck(x):
    global H
    H = genspin()
    next(H)
    next(H)
