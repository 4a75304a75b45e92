# SPDX-License-Identifier: MIT
# Set-up of test_mesh.py: a mesh, a manifest maker and the code of a walking Locus.
import mesh, field, _cap
from field import grid, keyed
def new(seed=1):
    return mesh.Mesh([grid('trail', 16, 16, E=0.1, G=0.2), grid('food', 16, 16),
                      keyed('work', 16, E=0.2, min=0.01)], seed=seed)
M = new()
GRANT = [{'flavours': ['trail', 'food'], 'ops': ['sense', 'deposit'], 'rate': 1000.0}]
def man(name, code, **kw):
    d = {'name': name, 'code': code, 'caps': GRANT, 'budget': {'ops': 2000, 'alloc': 16384},
         'attend': {'flavour': 'trail', 'at': (1, 1)}}
    d.update(kw)
    return d
def why(fn):
    try:
        fn()
    except ValueError as e:
        return str(e)
    return 'accepted'
WALKER = '''
def step(ctx):
    x, y = ctx.pos
    ctx.deposit('trail', 2.0)
    ctx.goto((x + 1) % 16, y)
'''
