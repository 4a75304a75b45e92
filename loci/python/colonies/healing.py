# SPDX-License-Identifier: MIT
# Self-healing colony: the foraging ants with piles that regrow (steady throughput); at
# `kill_at` the environment retires a fraction of them. Reports the time back to 80 % of
# the throughput before the loss and whether deliveries ever stalled. With queen=True a
# queen Locus reads the ants' census trace and spawns replacements.
import mesh
from field import REPL, keyed

from colonies import common, foraging, src_queen

KILL_AT = 600                  # tick of the loss
PRIOR = 200                    # ticks of throughput before the loss taken as the baseline
WINDOW = 50                    # moving window for throughput (deliveries per tick)
STALL = 50                     # this many ticks without a delivery after the loss = stalled


def flavours(**opts):
    return foraging.flavours(**opts) + [keyed("census", 2, E=0.5, min=0.5)]


def setup(m, seed=1, fraction=0.3, kill_at=KILL_AT, queen=True,
          population=foraging.POPULATION, r=foraging.MAX_PXCOR, **opts):
    st = foraging.setup(m, seed=seed, population=0, r=r)
    rng = common.Rng(seed + 7919)
    ant = foraging.ant_manifest(0, r, True)
    ant["args"]["census"] = True
    ant["caps"][1]["flavours"] = ant["caps"][1]["flavours"] + ["census"]
    for i in range(population):
        a = dict(ant)
        a["name"] = "ant-%d" % i
        a["args"] = dict(ant["args"])
        a["args"]["i"] = i
        st["ants"].append(m.spawn(a))
    if queen:
        st["queen"] = m.spawn({
            "name": "queen", "code": src_queen.SOURCE,
            # Deposit rates are charged up the derivation chain, so the queen's grants
            # carry no rate of their own: each child's derived grant has the ant's.
            "caps": [{"flavours": ["census"], "ops": ["sense"]}]
            + [dict(c, rate=None) for c in ant["caps"]] + [{"spawn": True}],
            # A burst of 8 spawns (the first compiles the ant's code) took up to 35.5M
            # cycles under -icount: well past the default cycles budget, so she asks for
            # her own, as for ops and alloc.
            "budget": {"ops": 20000, "alloc": 262144, "deposits": 64,
                       "cycles": 2000000000}, "restart": "on-failure",
            "attend": {"flavour": "census", "key": "ant"},
            "args": {"target": population, "burst": 8, "after": 2 * population // 10 + 20,
                     "code": ant["code"], "caps": ant["caps"], "budget": ant["budget"],
                     "attend": ant["attend"], "args": ant["args"]}})
    st.update(fraction=fraction, kill_at=kill_at, killed=[], queen_on=queen,
              population=population, live=[])

    def env(m):
        for p in st["piles"]:           # regrowth: a patch eaten down gets one more unit
            for c in p["cells"]:
                if m.field.sense("food", c) - m.field.sense("taken", c) < 1.0:
                    m.field.deposit("food", c, 1.0, REPL)
        if m.tick == kill_at:
            ants = list(st["ants"])
            n = int(round(fraction * len(ants)))
            for _ in range(n):
                st["killed"].append(ants.pop(rng.below(len(ants))))
            for lid in st["killed"]:
                m.kill(lid)
        st["live"].append(sum(1 for p in m.ps() if p["state"] != "retired"))
    m.env(env)
    return st


def per_tick(delivered):
    return [delivered[i] - (delivered[i - 1] if i else 0) for i in range(len(delivered))]


def report(m):
    st = common.state(m)
    d = per_tick(st["delivered"])
    k = st["kill_at"]
    # delivered[i] is the count after tick i + 1, so the loss happens after index k - 1.
    prior = sum(d[k - PRIOR:k]) / PRIOR if len(d) >= k else None
    back = dip = None
    stalled = False
    run0 = 0
    for t in range(k, len(d)):
        run0 = run0 + 1 if d[t] == 0 else 0
        stalled = stalled or run0 >= STALL
        if t - k + 1 >= WINDOW:
            w = sum(d[t - WINDOW + 1:t + 1]) / WINDOW
            dip = w if dip is None or w < dip else dip
            if back is None and prior and w >= 0.8 * prior:
                back = t + 1 - k
    after = sum(d[-PRIOR:]) / PRIOR if len(d) >= k + PRIOR else None
    return {"tick": m.tick, "fraction": st["fraction"], "killed": len(st["killed"]),
            "queen": st["queen_on"], "prior_rate": prior, "lowest_rate": dip,
            "final_rate": after, "back_to_80pct_after": back, "stalled": stalled,
            "live_at_end": st["live"][-1] if st["live"] else None}


def run(seed=1, ticks=1400, fraction=0.3, quiet=False, **opts):
    m = mesh.Mesh(flavours(**opts), seed=seed)
    setup(m, seed=seed, fraction=fraction, **opts)

    def progress(m):
        if not quiet:
            st = common.state(m)
            d = per_tick(st["delivered"])[-WINDOW:]
            print("tick %d  live %d  deliveries/tick %.2f" % (
                m.tick, st["live"][-1], sum(d) / max(1, len(d))))
    m.run(ticks, every=100, fn=progress)
    return report(m)
