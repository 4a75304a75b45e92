# SPDX-License-Identifier: MIT
# Set-up of test_sandbox.py: meshes to attack, a manifest maker, a round loop that keeps
# every exception round() lets out, and the audit records a Locus was refused.
import mesh, field, _cap
from field import grid, keyed
def new(seed=1, **kw):
    return mesh.Mesh([grid('trail', 16, 16, E=0.1), grid('food', 16, 16),
                      keyed('work', 16, E=0.2, min=0.01)], seed=seed, **kw)
GRANT = [{'flavours': ['trail', 'food'], 'ops': ['sense', 'deposit'], 'rate': 1000.0}]
def man(name, code, **kw):
    d = {'name': name, 'code': code, 'caps': GRANT, 'budget': {'ops': 2000, 'alloc': 16384},
         'attend': {'flavour': 'trail', 'at': (1, 1)}}
    d.update(kw)
    return d
WALKER = '''
def step(ctx):
    x, y = ctx.pos
    ctx.deposit('trail', 2.0)
    ctx.goto((x + 1) % 16, y)
'''
SPAWNER = '''
def init(ctx):
    ctx.mem['kid'] = ctx.spawn(ctx.args['kid'])
def step(ctx):
    pass
'''
def rounds(m, n):
    out = []
    for i in range(n):
        try:
            m.round()
        except Exception as e:
            out.append(type(e).__name__)
    return out
def refusals(m, lid):
    return [r for r in m.caps.audit(m.caps.audit_count())
            if r[1] == 'REFUSED' and lid in (r[3], r[4])]
