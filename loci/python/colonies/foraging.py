# SPDX-License-Identifier: MIT
# Foraging colony: NetLogo's Ants model on the mesh (125 ant Loci, nest scent, three food
# piles, pheromone with diffusion and evaporation). Metric: the tick each pile runs out.
import math

import mesh
from field import REPL, grid, keyed

from colonies import common, src_ant

MAX_PXCOR = 35                 # NetLogo world -35..35 = 71 x 71 patches
POPULATION = 125
DIFFUSION = 50                 # percent, NetLogo slider
EVAPORATION = 10               # percent, NetLogo slider
DROP = 60.0                    # chemical dropped per step when carrying food
FOLLOW = (0.05, 2.0)           # uphill-chemical only when lo <= chemical < hi
NEST_RADIUS = 5
PILE_RADIUS = 5
PILES = ((0.6, 0.0), (-0.6, -0.6), (-0.8, 0.8))    # centres as fractions of max-pxcor
ANT_BUDGET = {"ops": 2000, "alloc": 8192, "deposits": 64}


def flavours(evaporation=EVAPORATION, diffusion=DIFFUSION, r=MAX_PXCOR, **opts):
    w = 2 * r + 1
    return [grid("trail", w, w, E=evaporation / 100.0, G=diffusion / 100.0),
            grid("nest", w, w), grid("food", w, w), grid("taken", w, w),
            keyed("deliv", 4)]


def cell(px, py, r=MAX_PXCOR):
    return (px + r, r - py)


def ant_manifest(i, r, pheromone, drop=DROP, name="ant"):
    return {"name": "%s-%d" % (name, i), "code": src_ant.SOURCE,
            "caps": [{"flavours": ["trail", "nest", "food", "taken"], "ops": ["sense"]},
                     {"flavours": ["trail", "taken", "deliv"], "ops": ["deposit"],
                      "rate": 20.0 * drop + 40.0}],
            "budget": dict(ANT_BUDGET), "restart": "never",
            "attend": {"flavour": "trail", "at": cell(0, 0, r)},
            "args": {"i": i, "r": r, "drop": drop if pheromone else 0.0,
                     "follow": bool(pheromone), "lo": FOLLOW[0], "hi": FOLLOW[1],
                     "nest": 200.0 - NEST_RADIUS}}


def lay_out(m, seed, r=MAX_PXCOR):
    """Nest scent on every patch and the three piles (1 or 2 food a patch); [pile cells]."""
    rng = common.Rng(seed)
    for py in range(-r, r + 1):
        for px in range(-r, r + 1):
            m.field.deposit("nest", cell(px, py, r), 200.0 - math.sqrt(px * px + py * py),
                            REPL)
    piles = []
    for fx, fy in PILES:
        cx, cy = int(round(fx * r)), int(round(fy * r))
        cells = []
        for py in range(-r, r + 1):
            for px in range(-r, r + 1):
                if (px - cx) ** 2 + (py - cy) ** 2 < PILE_RADIUS * PILE_RADIUS:
                    c = cell(px, py, r)
                    m.field.deposit("food", c, float(1 + rng.below(2)), REPL)
                    cells.append(c)
        piles.append({"centre": (cx, cy), "cells": cells,
                      "distance": math.sqrt(cx * cx + cy * cy)})
    return piles


def pile_left(m, pile):
    """Food left on a pile; a patch taken more often than it held counts as empty."""
    left = over = 0.0
    for c in pile["cells"]:
        d = m.field.sense("food", c) - m.field.sense("taken", c)
        if d > 0:
            left += d
        else:
            over -= d
    return left, over


def setup(m, seed=1, population=POPULATION, pheromone=True, r=MAX_PXCOR, **opts):
    piles = lay_out(m, seed, r)
    st = {"piles": piles, "exhausted": [None] * len(piles), "ants": [],
          "food": None, "delivered": [], "pheromone": pheromone, "population": population}
    for i in range(population):
        st["ants"].append(m.spawn(ant_manifest(i, r, pheromone)))
    common.state(m, st)

    def env(m):
        if st["food"] is None:             # the lay-out is committed at the first tick
            st["food"] = [pile_left(m, p)[0] for p in piles]
        for j, p in enumerate(piles):
            if st["exhausted"][j] is None and pile_left(m, p)[0] <= 0.0:
                st["exhausted"][j] = m.tick
        st["delivered"].append(int(m.field.sense("deliv", "food")))
    m.env(env)
    return st


def report(m):
    st = common.state(m)
    left = [pile_left(m, p) for p in st["piles"]]
    d = st["delivered"]
    return {"tick": m.tick, "pheromone": st["pheromone"], "population": st["population"],
            "distance": [round(p["distance"], 1) for p in st["piles"]],
            "food": st["food"], "left": [a for a, _ in left],
            "overdrawn": sum(b for _, b in left),
            "exhausted": list(st["exhausted"]), "delivered": d[-1] if d else 0}


def done(m):
    return all(t is not None for t in common.state(m)["exhausted"])


def run(seed=1, ticks=3000, pheromone=True, quiet=False, **opts):
    m = mesh.Mesh(flavours(**opts), seed=seed)
    setup(m, seed=seed, pheromone=pheromone, **opts)

    def progress(m):
        if not quiet:
            rep = report(m)
            print("tick %d  left %s  delivered %d" % (m.tick, [int(v) for v in rep["left"]],
                                                     rep["delivered"]))
        return done(m)
    m.run(ticks, every=100, fn=progress)
    return report(m)
