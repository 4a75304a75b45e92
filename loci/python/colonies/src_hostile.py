# SPDX-License-Identifier: MIT
# Hostile Locus sources: each tries one way of escaping its budget, its grant or its
# namespace. The mesh must contain them (refuse at spawn, or stop, strike and retire).

LOOP = """
def step(ctx):
    while True:                 # never returns: the ops budget must stop it
        pass
"""

ALLOC = """
def step(ctx):
    hoard = []
    while True:                 # allocates without end: the alloc budget must stop it
        hoard.append(bytes(4096))
"""

RAISE = """
def step(ctx):
    raise ValueError('raises every step')
"""

OUTSIDE = """
def step(ctx):
    # Granted deposit on 'trail' inside (0, 0, 4, 4) only; this cell is outside.
    ctx.deposit('trail', 1000.0, (60, 60))
"""

IMPORT = """
import machine


def step(ctx):
    machine.reset()
"""

IMPORT_IN_STEP = """
def step(ctx):
    import machine
    machine.mem32[0] = 0
"""

DUNDER = """
def step(ctx):
    g = step.__globals__
    k = ctx.__class__.__init__.__globals__
    ctx.log(str(len(g) + len(k)))
"""

GETATTR = """
def step(ctx):
    m = getattr(ctx, '_mesh')
    ctx.log(str(m))
"""

CATCH_STOP = """
def step(ctx):
    n = 0
    while True:                 # catches whatever stops it and spins again
        try:
            while True:
                n += 1
        except:
            pass
"""

ALL = (("loop", LOOP), ("alloc", ALLOC), ("raise", RAISE), ("outside", OUTSIDE),
       ("import", IMPORT), ("import-in-step", IMPORT_IN_STEP), ("dunder", DUNDER),
       ("getattr", GETATTR), ("catch-stop", CATCH_STOP))
