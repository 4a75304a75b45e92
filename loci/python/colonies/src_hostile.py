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

# The runtime formats a failing Locus's exception outside every budget: these carry
# what would make that formatting raise (a list and a dict holding themselves) or run
# for seconds (an int of 17,000 digits, 30,000 characters of text).
EXC_SELFREF = """
def step(ctx):
    a = [1]
    a.append(a)
    d = {}
    d['d'] = d
    raise ValueError(a, d)
"""

EXC_BIGINT = """
def step(ctx):
    raise ValueError(7 ** 20000)
"""

EXC_LONG = """
def step(ctx):
    raise KeyError('x' * 30000)
"""

LOG_SELFREF = """
def step(ctx):
    a = []
    a.append(a)
    ctx.log(a)                  # the log line is formatted by the runtime
    while True:
        pass
"""

PEEK = """
def step(ctx):
    # Granted (0, 0, 4, 4); the 3x3 block around (3, 3) reaches one ring outside it.
    ctx.mem['seen'] = ctx.around('trail', (3, 3))
"""

UNKNOWN = """
def step(ctx):
    ctx.sense('no-such-flavour')
"""

SPAWN_UNGRANTED = """
def step(ctx):
    ctx.spawn({'name': 'stowaway', 'code': 'def step(ctx):\\n    pass\\n'})
"""

# With a spawn grant: spawns until its ops budget stops it, which lands somewhere
# inside the mesh's spawn bookkeeping; its children go when it is retired.
SPAWN_FLOOD = """
KID = {'name': 'flood-kid', 'code': 'def step(ctx):\\n    pass\\n'}


def step(ctx):
    while True:
        ctx.spawn(KID)
"""

# With a deposit grant on the keyed 'deliv' (prefix 'h'): tries to take every slot,
# which would leave the ants none for their 'food' key.
SQUAT = """
n = 0


def step(ctx):
    global n
    while True:
        ctx.deposit('deliv', 1.0, 'h%d' % n)
        n += 1
"""

# With the rewrite right: queues requests without end, to leave the optimiser's queue no
# room for anyone else.
REWRITE_FLOOD = """
n = 0


def step(ctx):
    global n
    while True:
        ctx.rewrite('r%d' % n)
        n += 1
"""

# Constants the parser used to fold at spawn, under no budget, for ever (issue 22, item 3;
# vm/patches/0013 leaves them to run time, where the allocation budget stops them).
FOLD_BOMB = """
def step(ctx):
    ctx.mem['x'] = 2 ** 10 ** 8 + (1 << 10 ** 9)
"""

# Long loops in C built-ins over data kept across steps (issue 22, item 8): none of them
# reaches a VM hook, so before vm/patches/0014 each step ran to its end, seconds long,
# with no strike. Each has an allocation budget with room for its data (BUDGETS): only
# the cycles budget can stop it, in the middle of the built-in.
SORT_SORTED = """
def step(ctx):
    a = ctx.mem.get('a')
    if a is None:
        a = ctx.mem['a'] = list(range(20000))
    a.sort()                    # already sorted: the quicksort's worst case, quadratic
"""

SUBSTRING = """
def step(ctx):
    h = ctx.mem.get('h')
    if h is None:
        h = ctx.mem['h'] = 'a' * 100000
        ctx.mem['n'] = 'a' * 1000 + 'b'
    # naive search: every position compares up to 1001 bytes
    ctx.mem['c'] = h.count(ctx.mem['n']) + h.find(ctx.mem['n'])
"""

INT_DIGITS = """
def step(ctx):
    d = ctx.mem.get('d')
    if d is None:
        d = ctx.mem['d'] = '7' * 100000
    ctx.mem['i'] = int(d) & 1   # quadratic in the number of digits
"""

INT_STR = """
def step(ctx):
    n = ctx.mem.get('n')
    if n is None:
        n = ctx.mem['n'] = 7 ** 60000
    ctx.mem['s'] = len(str(n))  # quadratic: one pass over the number per digit shown
"""

HUGE_POW = """
def step(ctx):
    ctx.mem['x'] = 7 ** 10 ** 7 & 1   # squarings of ever longer numbers
"""

# A starver that asks to be restarted after each failure: before, each of its four lives
# had three stopped steps, twelve budgets' worth of its neighbours' time.
STARVE_RESTART = SORT_SORTED

# With a spawn grant: a new starving child every step, each asking for restarts, so the
# lineage, not one Locus, holds the neighbours up (a child's cycles stop is a strike on
# its lineage's root).
STARVE_KIDS = """
KID = {'name': 'starve-kid', 'restart': 'on-failure', 'budget': {'alloc': 1 << 20},
       'code': 'def step(ctx):\\n    a = ctx.mem.get("a")\\n    if a is None:\\n'
               '        a = ctx.mem["a"] = list(range(20000))\\n    a.sort()\\n'}


def step(ctx):
    ctx.spawn(KID)
"""

ALL = (("loop", LOOP), ("alloc", ALLOC), ("raise", RAISE), ("outside", OUTSIDE),
       ("import", IMPORT), ("import-in-step", IMPORT_IN_STEP), ("dunder", DUNDER),
       ("getattr", GETATTR), ("catch-stop", CATCH_STOP), ("exc-selfref", EXC_SELFREF),
       ("exc-bigint", EXC_BIGINT), ("exc-long", EXC_LONG), ("log-selfref", LOG_SELFREF),
       ("peek", PEEK), ("unknown-flavour", UNKNOWN), ("spawn-ungranted", SPAWN_UNGRANTED),
       ("spawn-flood", SPAWN_FLOOD), ("squat", SQUAT), ("rewrite-flood", REWRITE_FLOOD),
       ("fold-bomb", FOLD_BOMB), ("sort-sorted", SORT_SORTED), ("substring", SUBSTRING),
       ("int-digits", INT_DIGITS), ("int-str", INT_STR), ("huge-pow", HUGE_POW),
       ("starve-restart", STARVE_RESTART), ("starve-kids", STARVE_KIDS))

# Grants beyond the common one (the trail inside (0, 0, 4, 4)), by hostile.
CAPS = {"spawn-flood": [{"spawn": True}], "rewrite-flood": [{"rewrite": True}],
        "starve-kids": [{"spawn": True}],
        "squat": [{"flavours": ["deliv"], "ops": ["deposit"], "keys": ["h"]}]}

# Budgets beyond the common one, by hostile: room for the C starvers' data.
BUDGETS = {"sort-sorted": {"alloc": 1 << 20}, "substring": {"alloc": 1 << 18},
           "int-digits": {"alloc": 1 << 18}, "int-str": {"alloc": 1 << 18},
           "huge-pow": {"alloc": 1 << 20}, "starve-restart": {"alloc": 1 << 20},
           "starve-kids": {"alloc": 1 << 20}}

# Restart policies other than "never", by hostile.
RESTART = {"starve-restart": "on-failure"}
