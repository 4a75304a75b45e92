# SPDX-License-Identifier: MIT
# Guest side of test_colonies.py's digests test: each colony of loci/python/colonies run
# for a few hundred ticks from its seed, reduced to hashes of what the mesh did: the field
# digest chain (every EVERY ticks), the step orders, the ps() rows, the audit chain's head.
import mesh, hashlib
from colonies import bridge, foraging, healing, hostile, tasks
EVERY = 25
def hx(b):
    return "".join("%02x" % c for c in b[:12])
def colony_marks(mod, seed, ticks, **opts):
    m = mesh.Mesh(mod.flavours(**opts), seed=seed)
    mod.setup(m, seed=seed, **opts)
    field, order = hashlib.sha256(), hashlib.sha256()
    def mark(m):
        field.update(m.field.digest())
        order.update(repr(m.last_order).encode())
        return False
    m.run(ticks, every=EVERY, fn=mark)
    rows = [(d["id"], d["name"], d["state"], d["steps"], d["strikes"], d["ops"])
            for d in m.ps()]
    return {"rounds": m.rounds, "loci": len(rows), "field": hx(field.digest()),
            "order": hx(order.digest()),
            "ps": hx(hashlib.sha256(repr(rows).encode()).digest()),
            "audit": hx(m.caps.audit_head())}
