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


def _glob(pat, s):
    # '*' matches any run, '?' one character: enough for ps(name='ant-*').
    if not pat:
        return not s
    if pat[0] == "*":
        return any(_glob(pat[1:], s[i:]) for i in range(len(s) + 1))
    return bool(s) and (pat[0] == "?" or pat[0] == s[0]) and _glob(pat[1:], s[1:])


def _kind(name):
    # Loci spawned from one manifest share its name plus a number: 'ant-7' -> 'ant-*'.
    i = len(name)
    while i > 0 and name[i - 1].isdigit():
        i -= 1
    return name[:i] + "*" if 0 < i < len(name) and name[i - 1] in "-_" else name


def _counts(rows, key):
    c = {}
    for r in rows:
        k = key(r)
        c[k] = c.get(k, 0) + 1
    return ", ".join("%d %s" % (n, k) for k, n in sorted(c.items(), key=lambda kv: -kv[1]))


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def summary(rows, m, width=79):
    """The lines ps() starts with: counts by state and by manifest name, the busiest
    Loci (ops of their last step) and the most struck."""
    out = ["%d Loci: %s" % (len(rows), _counts(rows, lambda r: r["state"]) or "none"),
           _clip("by name: " + (_counts(rows, lambda r: _kind(r["name"])) or "-"), width)]
    busy = sorted(rows, key=lambda r: (-r["ops"], r["id"]))[:3]
    out.append(_clip("busiest: " + (", ".join(
        "%s #%d %d ops" % (r["name"], r["id"], r["ops"]) for r in busy if r["ops"]) or "-"),
        width))
    hit = sorted([r for r in rows if r["strikes"]], key=lambda r: (-r["strikes"], r["id"]))
    out.append(_clip("most struck: " + (", ".join(
        "%s #%d %d" % (r["name"], r["id"], r["strikes"]) for r in hit[:3]) or "none"),
        width))
    out.append("round %d, tick %d, %d steps, %d failed" % (m.rounds, m.tick, m.steps,
                                                          m.failed))
    return out


HEADER = "  id name                     state    steps strikes  ops/step  alloc caps"


def ps(state=None, name=None, more=True):
    """A summary of the mesh, then one line per Locus, a screenful at a time (a key for
    the next, q to stop; more=False prints them all). ps(state='retired') and
    ps(name='ant-*') list only the Loci that match."""
    import lo_page
    m = _m()
    every = m.ps()
    rows = [r for r in every if (state is None or r["state"] == state)
            and (name is None or _glob(name, r["name"]))]
    lines = summary(every, m)
    if state is not None or name is not None:
        lines.append("%d of %d match%s%s" % (
            len(rows), len(every), "" if state is None else " state=%s" % state,
            "" if name is None else " name=%s" % name))
    lines.append(HEADER)
    for r in rows:
        lines.append("%4d %-24s %-8s %6d %7d %9d %6d %4d" % (
            r["id"], r["name"], r["state"], r["steps"], r["strikes"], r["ops"],
            r["alloc"], r["caps"]))
    if more:
        lo_page.page(lines)
    else:
        print("\n".join(lines))


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


# Bits of a capability's rights, as _cap numbers them (SENSE 1, DEPOSIT 2, ...).
OPS = ("sense", "deposit", "spawn", "io", "mem", "rewrite")
AUDIT_FIELDS = ("seq", "tick", "kind", "locus", "capability", "asked", "verdict")
SEARCH = 4096       # filters look through at most this many of the latest records


def _ops(rights):
    return "|".join(o for i, o in enumerate(OPS) if rights >> i & 1) or "-"


def label(m, lid, width=None):
    """A Locus as 'name #id' ('console' for id 0), in at most width characters if given,
    the name shortened first so the id stays."""
    if lid == 0:
        return "console"
    r = m.loci.get(lid)
    tag = " #%d" % lid
    if r is None:
        return tag[1:]
    return (r.name if width is None else r.name[:max(0, width - len(tag))]) + tag


def named(rec, m):
    """An audit tuple as a dict of AUDIT_FIELDS (and the tuple itself, as 'raw')."""
    seq, kind, tick, actor, owner, slot, gen, parent, rights, aux, reason, extra = rec
    names = m.field.names()
    cap = "-" if slot is None else "%d.%d" % (slot, gen)
    if kind == "REFUSED" and actor == owner and aux < len(names):
        # A refused check (the owner asked for itself): aux is the flavour it named.
        asked = "%s %s" % (_ops(rights), names[aux])
    elif kind == "CHECKPOINT":
        asked = "-"
    else:
        fl = [n for i, n in enumerate(names) if aux >> i & 1]
        asked = "%s %s" % (_ops(rights), ",".join(fl) or "-")
    if kind == "REFUSED":
        verdict = "refused: %s" % reason
    elif kind == "DERIVE":
        verdict = "derived from %s" % ("-" if parent is None else parent)
    elif kind == "CHECKPOINT":
        verdict = "checkpoint of %d records" % aux
    else:
        verdict = {"GRANT": "granted", "REVOKE": "revoked", "EXPIRE": "expired",
                   "RETIRE": "retired"}.get(kind, kind.lower())
    return {"seq": seq, "tick": tick, "kind": kind, "locus": label(m, owner),
            "capability": cap, "asked": asked, "verdict": verdict, "raw": rec}


def records(n=10, locus=None, kind=None):
    """The last n audit records that match, oldest first, as named() dicts."""
    m = _m()
    t = m.caps
    have = t.audit_count()
    recs = t.audit(min(have, SEARCH) if locus is not None or kind is not None else n)
    k = kind.upper() if kind is not None else None
    out = [named(r, m) for r in recs
           if (k is None or r[1] == k) and (locus is None or locus in (r[3], r[4]))]
    return out[-n:] if n else []


def audit(n=10, locus=None, kind=None, raw=False):
    """The last n audit records (hash-chained; verified first) with named fields: tick,
    kind, the Locus, the capability (slot.generation), what was asked, the verdict.
    audit(locus=5), audit(kind='refused') filter; raw=True prints the tuples
    (mesh.caps.audit(n) returns them)."""
    m = _m()
    t = m.caps
    print("audit: %d records, chain %s" % (t.audit_count(),
                                           "ok" if t.audit_verify() else "BROKEN"))
    if m.audit_rolls:
        st = m.audit_store
        where = ("%s: %d files, %d bytes" % (st.dir, st.files, st.bytes) if st and st.dir
                 else "only the last one kept")
        print("  %d roll-overs exported (%s)%s" % (
            m.audit_rolls, where,
            "; %d not written: %s" % (m.audit_unsaved, m.audit_error)
            if m.audit_unsaved else ""))
    if raw:
        for rec in t.audit(n):
            print(" ", rec)
        return
    got = records(n, locus, kind)
    if not got:
        print("  no records%s" % (" match" if locus is not None or kind is not None else ""))
        return
    print("%5s %-7s %-16s %-6s %s" % ("tick", "kind", "Locus", "cap", "asked: verdict"))
    for d in got:
        rec = d["raw"]
        who = label(m, rec[4], 16)
        # The kind already says REFUSED: the reason is the verdict worth the room.
        verdict = rec[10] if d["kind"] == "REFUSED" and rec[10] else d["verdict"]
        print(_clip("%5d %-7s %-16s %-6s %s: %s" % (
            d["tick"], d["kind"], who, d["capability"], d["asked"], verdict), 79))


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
