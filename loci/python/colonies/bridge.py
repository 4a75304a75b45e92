# SPDX-License-Identifier: MIT
# Double-bridge colony: ants between nest and food over two branches of length ratio 2;
# the share of branch choices on the short one after convergence. late=True keeps the
# short branch shut until `open_at` and measures whether the colony switches to it.
import mesh
from field import REPL, grid, keyed

from colonies import common, src_bridge

SHORT = 10                    # cells; the long branch has RATIO times as many
RATIO = 2
ANTS = 30
K, N = 20.0, 2.0              # Deneubourg's choice function
DEPOSIT = 25.0                # Q: pheromone per crossing (Q / L per cell walked)
EVAPORATION = 0.06            # per tick; at 0.02 a late short branch was not taken (README)
WINDOW = 200                  # ticks of choices the share is measured over
OPEN_AT = 400                 # late variant: tick the short branch opens


def flavours(short=SHORT, evaporation=EVAPORATION, **opts):
    return [grid("trail", short * RATIO, 2, E=evaporation), keyed("choice", 4),
            keyed("gate", 2), keyed("deliv", 2)]


def setup(m, seed=1, ants=ANTS, short=SHORT, late=False, open_at=OPEN_AT, k=K, n=N,
          q=DEPOSIT, **opts):
    lens = [short, short * RATIO]
    st = {"late": late, "open_at": open_at if late else 0, "choices": [],
          "last": (0.0, 0.0), "ants": []}
    if not late:
        m.field.deposit("gate", "short", 1.0, REPL)
    for i in range(ants):
        st["ants"].append(m.spawn({
            "name": "bridge-%d" % i, "code": src_bridge.SOURCE,
            "caps": [{"flavours": ["trail", "gate"], "ops": ["sense"]},
                     {"flavours": ["trail", "choice", "deliv"], "ops": ["deposit"],
                      "rate": 100.0}],
            "budget": {"ops": 1000, "alloc": 4096, "deposits": 64}, "restart": "never",
            "attend": {"flavour": "trail", "at": (0, 0)},
            "args": {"i": i, "len": lens, "k": k, "n": n, "q": q, "t0": short}}))
    common.state(m, st)

    def env(m):
        if late and m.tick == open_at:
            m.field.deposit("gate", "short", 1.0, REPL)
        s, lg = m.field.sense("choice", "short"), m.field.sense("choice", "long")
        st["choices"].append((s - st["last"][0], lg - st["last"][1]))
        st["last"] = (s, lg)
    m.env(env)
    return st


def share(choices):
    s = sum(c[0] for c in choices)
    t = s + sum(c[1] for c in choices)
    return s / t if t else None


def report(m, window=WINDOW):
    st = common.state(m)
    ch = st["choices"]
    # Convergence: the first tick (after the short branch exists) from which the share
    # over the next `window` ticks stays at or above 0.8 to the end.
    start = st["open_at"]
    conv = None
    for t in range(len(ch) - window, start - 1, -window // 4):
        if t < 0 or share(ch[t:t + window]) is None or share(ch[t:t + window]) < 0.8:
            break
        conv = t
    return {"tick": m.tick, "late": st["late"], "open_at": st["open_at"],
            "share_short": share(ch[-window:]), "converged_at": conv,
            "delivered": int(m.field.sense("deliv", "food"))}


def run(seed=1, ticks=1200, late=False, quiet=False, **opts):
    m = mesh.Mesh(flavours(**opts), seed=seed)
    setup(m, seed=seed, late=late, **opts)

    def progress(m):
        if not quiet:
            print("tick %d  share(short) over the last %d ticks: %s" % (
                m.tick, WINDOW, share(common.state(m)["choices"][-WINDOW:])))
    m.run(ticks, every=200, fn=progress)
    return report(m)
