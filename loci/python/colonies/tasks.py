# SPDX-License-Identifier: MIT
# Task-allocation colony: tasks appear as keyed traces whose stimulus grows while nobody
# has them; workers with response thresholds take them. Latency and fairness (Jain).
import mesh
from field import REPL, keyed

from colonies import common, src_worker

WORKERS = 20
TASKS = 150
ARRIVAL = 0.6                 # chance of a new task each tick until TASKS have come
URGENCY = (0.5, 2.0)          # stimulus added per tick to an unowned task
THETA = (1.0, 8.0)            # workers' thresholds, uniform in this range
WORK = 5                      # steps a task takes
LOOK = 4                      # a worker considers the LOOK strongest tasks


def flavours(tasks=TASKS, **opts):
    # 'done' evaporates: the board reads it the tick after the deposit, and the mesh
    # gives each worker's lineage only its share of a keyed flavour's slots (capacity /
    # workers), which keys that never evaporated would use up after a few tasks.
    return [keyed("task", 128, E=0.2, min=0.05), keyed("claim", 128, E=0.5, min=0.05),
            keyed("owner", tasks + 8), keyed("done", tasks + 8, E=0.5, min=0.05),
            keyed("board", 2, E=0.5)]


def setup(m, seed=1, workers=WORKERS, tasks=TASKS, arrival=ARRIVAL, work=WORK, **opts):
    rng = common.Rng(seed)
    st = {"workers": [], "theta": {}, "tasks": {}, "made": 0, "done": {}, "latency": []}
    for i in range(workers):
        th = THETA[0] + (THETA[1] - THETA[0]) * rng.random()
        lid = m.spawn({
            "name": "worker-%d" % i, "code": src_worker.SOURCE,
            "caps": [{"flavours": ["task", "claim", "owner"], "ops": ["sense"]},
                     {"flavours": ["claim", "done"], "ops": ["deposit"], "keys": ["t"],
                      "rate": 20.0}],
            "budget": {"ops": 2000, "alloc": 8192, "deposits": 64}, "restart": "never",
            "attend": {"flavour": "board", "key": "open"},
            "args": {"theta": th, "work": work, "look": LOOK, "patience": 3}})
        st["workers"].append(lid)
        st["theta"][lid] = th
        st["done"][lid] = 0
    common.state(m, st)

    def env(m):
        for key, t in st["tasks"].items():
            if t["owner"] is None and m.field.sense("claim", key) > 0:
                t["owner"] = m.field.last("claim", key)   # the last claim wins
                m.field.deposit("owner", key, float(t["owner"]), REPL)
            if t["owner"] is not None and t["end"] is None and m.field.sense("done", key) > 0:
                t["end"] = m.tick
                st["latency"].append(t["end"] - t["start"])
                st["done"][t["owner"]] += 1
        if st["made"] < tasks and rng.random() < arrival:
            key = "t%d" % st["made"]
            st["made"] += 1
            st["tasks"][key] = {"start": m.tick, "u": URGENCY[0] + (
                URGENCY[1] - URGENCY[0]) * rng.random(), "owner": None, "end": None}
        waiting = 0
        for key, t in st["tasks"].items():
            if t["owner"] is None:
                m.field.deposit("task", key, t["u"], REPL)
                waiting += 1
        if waiting:
            m.field.deposit("board", "open", float(waiting), REPL)
    m.env(env)
    return st


def report(m):
    st = common.state(m)
    lat = st["latency"]
    counts = [st["done"][w] for w in st["workers"]]
    by_theta = sorted((st["theta"][w], st["done"][w]) for w in st["workers"])
    half = len(by_theta) // 2
    return {"tick": m.tick, "made": st["made"], "completed": len(lat),
            "latency_mean": common.mean(lat), "latency_p50": common.percentile(lat, 0.5),
            "latency_p90": common.percentile(lat, 0.9),
            "latency_max": max(lat) if lat else None, "jain": common.jain(counts),
            "per_worker": counts,
            # Response thresholds should make low-threshold workers the busier half.
            "done_low_theta": sum(c for _, c in by_theta[:half]),
            "done_high_theta": sum(c for _, c in by_theta[half:])}


def run(seed=1, ticks=2000, quiet=False, **opts):
    m = mesh.Mesh(flavours(**opts), seed=seed)
    setup(m, seed=seed, **opts)
    tasks = opts.get("tasks", TASKS)

    def progress(m):
        rep = report(m)
        if not quiet:
            print("tick %d  tasks %d made, %d done" % (m.tick, rep["made"], rep["completed"]))
        return rep["completed"] >= tasks
    m.run(ticks, every=10, fn=progress)
    return report(m)
