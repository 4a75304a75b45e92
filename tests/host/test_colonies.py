# SPDX-License-Identifier: MIT
"""Short seeded runs of the colonies (loci/python/colonies) in the host harness
(colony_harness.py) that check real outcomes, not just that they run."""

import colony_harness

colony_harness.install("c")
from colonies import bridge, foraging, healing, hostile, src_hostile, tasks  # noqa: E402


def test_foraging_pheromone_empties_nearest_pile_first():
    on = foraging.run(seed=1, ticks=300, quiet=True)
    off = foraging.run(seed=1, ticks=300, pheromone=False, quiet=True)
    assert on["exhausted"][0] is not None and on["exhausted"][0] < 300
    assert on["exhausted"][2] is None and on["left"][2] > 0
    assert off["exhausted"][0] is None        # without a trail the same pile lasts longer
    assert on["delivered"] > off["delivered"]
    assert on["overdrawn"] <= 0.05 * sum(on["food"])


def test_bridge_converges_on_short_branch():
    assert bridge.run(seed=1, quiet=True)["share_short"] > 0.7


def test_bridge_switches_when_short_branch_opens_late():
    r = bridge.run(seed=2, late=True, quiet=True)
    assert r["share_short"] > 0.7 and r["converged_at"] is not None


def test_tasks_all_complete_and_thresholds_matter():
    r = tasks.run(seed=1, quiet=True)
    assert r["completed"] == r["made"] == tasks.TASKS
    assert r["latency_max"] < 100
    assert r["done_low_theta"] > r["done_high_theta"]
    assert 0 < r["jain"] <= 1


def test_healing_recovers_after_losing_half():
    r = healing.run(seed=1, fraction=0.5, ticks=600, kill_at=300, r=20, population=50,
                    quiet=True)
    assert r["killed"] == 25
    assert not r["stalled"]
    assert r["back_to_80pct_after"] is not None


def test_hostiles_contained_beside_foraging():
    import mesh
    m = mesh.Mesh(hostile.flavours(r=10), seed=1)
    # The harness models the first nine kinds only; the rest (exception formatting,
    # keyed-slot shares, spawn floods, ...) are defences of the shipped mesh.py, tested in
    # the guest by tests/qemu/test_sandbox.py and test_mesh.py.
    hostile.setup(m, seed=1, r=10, population=4,
                  which=[n for n, _ in src_hostile.ALL[:9]])
    m.run(40)
    fates = hostile.report(m)["hostile"]
    for name in ("loop", "alloc", "raise", "outside"):
        assert fates[name]["outcome"] == "retired" and fates[name]["strikes"] == 3, name
    for name in ("import", "import-in-step", "dunder", "getattr"):
        assert fates[name]["outcome"] == "refused at spawn", name
    assert all(p["state"] == "live" for p in m.ps() if p["name"].startswith("ant-"))


def test_model_and_c_backends_agree():
    colony_harness.BACKEND[0] = "model"
    try:
        a = bridge.run(seed=3, ticks=150, quiet=True)
    finally:
        colony_harness.BACKEND[0] = "c"
    assert a == bridge.run(seed=3, ticks=150, quiet=True)
