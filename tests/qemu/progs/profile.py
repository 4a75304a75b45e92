# SPDX-License-Identifier: MIT
# test_profile.py: hot, cold, raising and generator functions for the profiler. Its line
# numbers are checked (test_profile.HOT_LINE): line 1 is the import.
import _prof, prof, gc, kernel, time
def cold(n):
    return [i for i in range(n)]
def hot(n):
    s = 0
    for i in range(n):
        s += i * i % 7 + i // 3
    return s
def k(n):
    i = 0
    while i < n:
        i += 1
    return i
def bad(n):
    for i in range(n):
        pass
    raise ValueError(n)
def gen(n):
    for i in range(n):
        yield i
def spin():
    print('spinning')
    while True:
        pass
def count(fn):
    return [c[1:3] for c in _prof.counters() if c[0] is fn]
def many_bad(m):
    for j in range(m):
        try:
            bad(3)
        except ValueError:
            pass
def inner(n):
    for i in range(n):
        pass
    return count(inner)
