# SPDX-License-Identifier: MIT
# The optimiser Locus (issue 7, "the loop runs on itself"): follows 'heat', marks the
# hot function it takes on 'trying', asks with ctx.rewrite and waits for its 'opt' outcome.

SOURCE = """
# held: the key this Locus asked about, waiting for its outcome on 'opt';
# waited: steps spent waiting; asked, lost: requests made, and those another Locus
# already held (two Loci stepping in one tick cannot see each other's marks yet).
held = None
waited = 0
asked = 0
lost = 0


def taken(ctx, key):
    return ctx.sense('trying', key) > 0 or ctx.sense('opt', key) > 0


def step(ctx):
    global held, waited, asked, lost
    a = ctx.args
    if held is not None:
        if ctx.sense('opt', held) == 0 and waited < a['patience']:
            # Keep the mark up while the gates wait for recorded calls.
            waited += 1
            ctx.deposit('trying', a['mark'], held)
            return
        ctx.log('outcome %s %.3g' % (held, ctx.sense('opt', held)))
        held = None
    free = []
    total = 0.0
    for key, h in ctx.top('heat', a['look']):
        if h < a['min_heat']:
            break
        if not taken(ctx, key):
            free.append([key, h])
            total += h
    # A heat-weighted choice: Loci that step in the same tick seldom pick the same key.
    while free:
        r = ctx.random() * total
        i = 0
        while i < len(free) - 1 and r > free[i][1]:
            r -= free[i][1]
            i += 1
        key, h = free.pop(i)
        total -= h
        asked += 1
        if ctx.rewrite(key):
            ctx.log('asked %s' % key)
            ctx.deposit('trying', a['mark'], key)
            held = key
            waited = 0
            return
        lost += 1
"""
