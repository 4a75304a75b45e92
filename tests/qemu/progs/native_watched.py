# SPDX-License-Identifier: MIT
# test_opt_native.py: one lookup per kind of swap, for the rollback on an exception type
# the gates never saw.
def lookup(d, keys):
    t = 0
    for k in keys:
        t += d[k]
    return t
def lookup2(d, keys):
    t = 0
    for k in keys:
        t += d[k]
    return t
def lookup_gen(d, keys):
    for k in keys:
        yield d[k] * 2
