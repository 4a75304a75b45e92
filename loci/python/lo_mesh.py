# SPDX-License-Identifier: MIT
# Console commands for the Loci mesh (re-exported by `lo`): ps, spawn, kill, caps,
# audit, info, pause, step, resume, run. They act on the mesh made or chosen last.
import mesh as _mesh

import kernel

__all__ = ["ps", "spawn", "kill", "caps", "audit", "info", "pause", "step", "resume",
           "run", "use_mesh", "colonies"]

_cur = [None]
COLONIES = ("foraging", "bridge", "tasks", "healing", "hostile")


def use_mesh(m):
    """Make `m` the mesh the console commands act on (and its field the one lo shows)."""
    import lo
    _mesh.LAST[0] = _cur[0] = m
    lo.use(m.field)
    return m


def _m():
    """The mesh made (or chosen with use_mesh) last."""
    m = _mesh.LAST[0]
    if m is None:
        raise RuntimeError("no mesh yet: run('foraging') or use_mesh(mesh.Mesh([...]))")
    if m is not _cur[0]:
        use_mesh(m)
    return m


def ps():
    """One line per Locus: id, name, state, steps, strikes, ops of its last step..."""
    m = _m()
    print("  id name                     state    steps strikes  ops/step  alloc caps")
    for r in m.ps():
        print("%4d %-24s %-8s %6d %7d %9d %6d %4d" % (
            r["id"], r["name"], r["state"], r["steps"], r["strikes"], r["ops"],
            r["alloc"], r["caps"]))
    print("round %d, tick %d, %d steps, %d failed" % (m.rounds, m.tick, m.steps, m.failed))


def spawn(manifest):
    return _m().spawn(manifest)


def kill(lid):
    _m().kill(lid)


def info(lid):
    d = _m().info(lid)
    for k in ("id", "name", "state", "steps", "strikes", "fails", "restarts", "parent",
              "pos", "budget", "error"):
        print("%-9s %s" % (k, d[k]))
    for line in d["log"]:
        print("  log", line)
    if d["dump"]:
        print("  field around it at death:", d["dump"])


def caps(lid):
    """The capabilities a Locus holds."""
    for c in _m().info(lid)["caps"]:
        print(" ", c)


def audit(n=10):
    """The last n audit records (hash-chained; verified first)."""
    t = _m().caps
    print("audit: %d records, chain %s" % (t.audit_count(),
                                           "ok" if t.audit_verify() else "BROKEN"))
    for rec in t.audit(n):
        print(" ", rec)


def _idle():
    m = _m()
    if not m.halted:
        m.round()


def pause():
    """Stop running the mesh in the background."""
    kernel.idle(None)
    _m().paused = True


def resume():
    """Run the mesh in the background while the REPL waits for input."""
    m = _m()
    m.paused = False
    kernel.idle(_idle)


def step(n=1):
    """Run n rounds now (in the foreground) and print where the mesh is."""
    m = _m()
    steps = m.steps
    for _ in range(n):
        m.round()
    print("round %d, tick %d: %d steps" % (m.rounds, m.tick, m.steps - steps))


def run(name, seed=1, **opts):
    """Run a colony (see colonies()) and print its report; the mesh stays inspectable."""
    if name not in COLONIES:
        raise ValueError("no colony %r (have: %s)" % (name, ", ".join(COLONIES)))
    mod = __import__("colonies." + name, None, None, ("run",))
    report = mod.run(seed=seed, **opts)
    use_mesh(_mesh.LAST[0])
    return report


def colonies():
    return COLONIES
