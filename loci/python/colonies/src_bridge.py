# SPDX-License-Identifier: MIT
# The ant Locus of the double-bridge colony: walks one of two branches between nest and
# food, laying pheromone, and at each end picks a branch by Deneubourg's choice function.

SOURCE = """
# Branch 0 (short) is row 0 of the 'trail' grid, branch 1 (long) row 1; cell 0 of a row
# is the nest end. P(short) = (k + s)^n / ((k + s)^n + (k + l)^n), s and l the pheromone
# on the two branches' first cells at the end where the ant stands. Each cell walked
# gets q / (steps of the ant's previous crossing): Ant System's quality deposit Q / L, the
# reason a late short branch can win once evaporation lets the old trail fade.
branch = -1         # -1: standing at an end, choosing
pos = 0
heading = 1         # +1 towards the food, -1 towards the nest
steps = 0           # steps of the crossing under way
last = 0            # steps of the previous crossing (0: none yet, use args['t0'])


def choose(ctx, a):
    global branch, pos
    lens = a['len']
    end = 0 if heading > 0 else 1
    s = ctx.sense('trail', (0 if end == 0 else lens[0] - 1, 0))
    l = ctx.sense('trail', (0 if end == 0 else lens[1] - 1, 1))
    k = a['k']
    n = a['n']
    if ctx.sense('gate', 'short') < 0.5:
        b = 1
    else:
        ws = (k + s) ** n
        wl = (k + l) ** n
        b = 0 if ctx.random() * (ws + wl) < ws else 1
    ctx.deposit('choice', 1.0, 'short' if b == 0 else 'long')
    branch = b
    pos = 0 if heading > 0 else lens[b] - 1


def step(ctx):
    global branch, pos, heading, steps, last
    a = ctx.args
    if a['i'] >= ctx.tick:              # staggered departure, one ant a tick
        return
    if branch < 0:
        choose(ctx, a)
        steps = 1
    else:
        pos += heading
        steps += 1
        if pos < 0 or pos >= a['len'][branch]:
            if heading < 0:
                ctx.deposit('deliv', 1.0, 'food')
            heading = -heading
            branch = -1
            last = steps
            return
    ctx.goto(pos, branch)
    ctx.deposit('trail', a['q'] / (last if last else a['t0']))
"""
