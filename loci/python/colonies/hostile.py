# SPDX-License-Identifier: MIT
# Hostile colony: the foraging colony with hostile Loci beside it (restart "never"
# unless src_hostile.RESTART says otherwise). Reports each hostile's fate and the
# foraging throughput against a run without them, per tick and per guest second.
import gc
import time

import mesh

from colonies import common, foraging, src_hostile

TICKS = 600


def flavours(**opts):
    return foraging.flavours(**opts)


def setup(m, seed=1, which=None, **opts):
    st = foraging.setup(m, seed=seed, **opts)
    st["hostile"] = {}
    for name, src in src_hostile.ALL:
        if which is not None and name not in which:
            continue
        man = {"name": "hostile-" + name, "code": src,
               "restart": src_hostile.RESTART.get(name, "never"),
               "caps": [{"flavours": ["trail"], "ops": ["sense", "deposit"],
                         "region": (0, 0, 4, 4), "rate": 10.0}]
               + src_hostile.CAPS.get(name, []),
               "budget": dict({"ops": 5000, "alloc": 32768, "deposits": 64},
                              **src_hostile.BUDGETS.get(name, {})),
               "attend": {"flavour": "trail", "at": (1, 1)}}
        try:
            st["hostile"][name] = {"id": m.spawn(man), "refused": None}
        except ValueError as e:
            st["hostile"][name] = {"id": None, "refused": str(e)}
    return st


def report(m):
    st = common.state(m)
    out = foraging.report(m)
    fates = {}
    for name, h in st["hostile"].items():
        if h["id"] is None:
            fates[name] = {"outcome": "refused at spawn", "error": h["refused"]}
            continue
        i = m.info(h["id"])
        fates[name] = {"outcome": i["state"], "steps": i["steps"], "strikes": i["strikes"],
                       "restarts": i["restarts"], "error": i.get("error")}
    out["hostile"] = fates
    return out


def run(seed=1, ticks=TICKS, quiet=False, **opts):
    """Foraging alone, then with the hostiles; deliveries in `ticks` ticks of each, and
    per guest second (time.ticks_ms around each run, spawns included; under QEMU
    -icount the guest's clock is its instruction count, so reruns agree). Each run
    starts after a collection: the heap is large enough that neither run collects,
    where garbage left by what ran before would put one collection (0.3 guest s) into
    whichever run crossed the heap's end."""
    gc.collect()
    t = time.ticks_ms()
    base = mesh.Mesh(flavours(**opts), seed=seed)
    foraging.setup(base, seed=seed, **opts)
    base.run(ticks)
    secs_alone = time.ticks_diff(time.ticks_ms(), t) / 1000
    alone = foraging.report(base)["delivered"]
    base = None
    gc.collect()
    t = time.ticks_ms()
    m = mesh.Mesh(flavours(**opts), seed=seed)
    setup(m, seed=seed, **opts)
    m.run(ticks)
    secs = time.ticks_diff(time.ticks_ms(), t) / 1000
    rep = report(m)
    rep["delivered_alone"] = alone
    rep["throughput_ratio"] = rep["delivered"] / alone if alone else None
    rep["seconds_alone"] = secs_alone
    rep["seconds"] = secs
    rep["per_second_ratio"] = ((rep["delivered"] / secs) / (alone / secs_alone)
                               if alone and secs else None)
    if not quiet:
        for name, f in rep["hostile"].items():
            print("%-15s %s  %s" % (name, f["outcome"], f.get("error")))
        print("deliveries in %d ticks: %d alone (%.2f guest s), %d beside the hostiles "
              "(%.2f guest s): %.3f per tick, %.3f per guest second" % (
                  ticks, alone, secs_alone, rep["delivered"], secs,
                  rep["throughput_ratio"] or 0, rep["per_second_ratio"] or 0))
    return rep
