# SPDX-License-Identifier: MIT
"""Every colony of loci/python/colonies, run from its seed under -icount, does the same
thing in this boot as in the boot that wrote tests/qemu/colony_digests.json: the same
field digest chain (every 25 ticks), the same step orders, the same ps() rows and the same
audit chain head. That is determinism across boots, and it holds a change meant to make
the mesh faster to doing exactly what the mesh did before.

Regenerate the golden file after a deliberate change of behaviour with
`COLONY_GOLDEN=write .venv/bin/python -m pytest -q tests/qemu/test_colony_digests.py` (it
boots twice and writes only when both boots agree), and say in the commit why the colonies
now do something else."""

from __future__ import annotations

import json
import os
from pathlib import Path

from guestprog import prog

from tools.guest.guestconsole import IMAGE, Guest

GOLDEN = Path(__file__).with_name("colony_digests.json")
# (label, call): short runs, long enough that every colony's Loci meet in the field (the
# hostile kinds are all spawned and contained by then).
RUNS = [
    ("foraging", "colony_marks(foraging, 1, 150)"),
    ("foraging-no-pheromone", "colony_marks(foraging, 2, 100, pheromone=False)"),
    ("bridge", "colony_marks(bridge, 1, 150)"),
    ("bridge-late", "colony_marks(bridge, 2, 100, late=True)"),
    ("tasks", "colony_marks(tasks, 1, 150)"),
    ("healing", "colony_marks(healing, 1, 150, kill_at=75, population=30)"),
    ("hostile", "colony_marks(hostile, 1, 100)"),
]


def marks(log: Path) -> dict:
    g = Guest(IMAGE, log=log, icount=True)
    try:
        g.boot()
        out = g.paste(prog("colony_digests"))
        assert "Traceback" not in out, out
        return {label: g.ask(call, timeout=900) for label, call in RUNS}
    finally:
        g.close()


def test_every_colony_does_what_it_did_in_another_boot(tmp_path):
    first = marks(tmp_path / "boot1.log")
    if os.environ.get("COLONY_GOLDEN") == "write":
        assert marks(tmp_path / "boot2.log") == first
        GOLDEN.write_text(json.dumps(first, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    changed = {k: (golden.get(k), v) for k, v in first.items() if golden.get(k) != v}
    assert not changed, changed
