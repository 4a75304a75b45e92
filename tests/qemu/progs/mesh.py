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
# The manifest check's C fast path against its Python definition (test_mesh.py): per
# manifest 0 = both refuse (C leaves it to Python), 1 = Python accepts what C left to
# it, 2 = C accepts and builds what Python builds, or the reprs where they differ.
import locus_manifest, _mesh
NAN, INF = float('nan'), float('inf')
class Sub(str):
    pass
def fast_vs_python(ms):
    out = []
    for m in ms:
        c = _mesh.manifest(m, M.layout, locus_manifest.BUDGET_DEFAULT,
                           locus_manifest.BUDGET_MAX)
        try:
            p = repr(locus_manifest.check_in_python(m, M.layout))
        except Exception as e:
            p = None
        if c is None:
            out.append(0 if p is None else 1)
        else:
            out.append(2 if repr(c) == p else (repr(m), repr(c), p))
    return out
