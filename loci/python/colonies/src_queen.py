# SPDX-License-Identifier: MIT
# The queen Locus of the healing colony: reads the ants' census trace and spawns new
# ants (attenuated copies of her own rights) while it is below the target.

SOURCE = """
# The census flavour evaporates by half each tick and every live ant adds 1 a step, so
# its value settles at the number of live ants; it lags a loss by a few ticks, which
# makes the queen undershoot rather than overshoot.
# Births of her own not yet in the census are `owed`: they close their gap in the census
# by half a tick, as the census itself does, so she does not spawn them twice.
born = 0
owed = 0.0
seen = 0


def step(ctx):
    global born, owed, seen
    a = ctx.args
    owed = owed * 0.5 ** (ctx.tick - seen)
    seen = ctx.tick
    alive = ctx.sense('census', 'ant') + owed
    if ctx.tick < a['after']:
        return
    need = int(a['target'] - alive + 0.5)
    if need > a['burst']:
        need = a['burst']
    for j in range(need):
        args = dict(a['args'])
        args['i'] = 0
        ctx.spawn({'name': 'ant-r%d' % born, 'code': a['code'], 'caps': a['caps'],
                   'budget': a['budget'], 'restart': 'never', 'attend': a['attend'],
                   'args': args})
        born += 1
        owed += 1.0
    if need > 0:
        ctx.log('spawned %d (census %d)' % (need, int(alive)))
"""
