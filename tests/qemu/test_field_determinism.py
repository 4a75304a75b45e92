# SPDX-License-Identifier: MIT
"""A scripted, seeded run of 10,000 ticks gives the same digest at every tick across two
boots, and the same as the host build of the same C (bit-identity of guest and host)."""

from __future__ import annotations

import ast
import hashlib
import sys
from pathlib import Path

from guestprog import prog

from tools.guest.guestconsole import IMAGE, Guest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
import field_cffi  # noqa: E402

TICKS = 10_000
# The field's flavours: kind, name, W (capacity), H, E, G, cap, min.
LAYOUT = [("grid", "a", 32, 32, 0.05, 0.3, 1e30, 1e-6),
          ("grid", "b", 32, 32, 0.1, 0.6, 50.0, 0.0),
          ("keyed", "k", 16, 0, 0.2, 0.0, 1e30, 0.05)]
SOURCE = prog("field_run")

GUEST_RUN = f"LAYOUT = {LAYOUT!r}\nTICKS = {TICKS}\n" + prog("field_determinism")


def guest_marks(log: Path) -> list[str]:
    g = Guest(IMAGE, log=log)
    try:
        g.boot()
        out = g.paste(SOURCE + GUEST_RUN, timeout=900)
    finally:
        g.close()
    line = [x for x in out.splitlines() if x.startswith("MARKS ")]
    assert line, out
    return ast.literal_eval(line[0][6:])


def host_marks() -> list[str]:
    c = field_cffi.CField(arena_size=1 << 20, journal_cap=1024, deps_cap=64, watch_cap=16)
    for kind, name, w, h, e, g, cap, mn in LAYOUT:
        if kind == "grid":
            c.add_grid(name, w, h, e, g, cap, mn)
        else:
            c.add_keyed(name, w, e, cap, mn)
    ns: dict = {}
    exec(SOURCE, ns)
    return ns["run"](TICKS, c.deposit_xy, c.deposit_key, c.tick, c.digest,
                     lambda b: hashlib.sha256(b).digest())


def test_ten_thousand_ticks_same_digests_across_boots_and_host(tmp_path):
    first = guest_marks(tmp_path / "boot1.log")
    second = guest_marks(tmp_path / "boot2.log")
    assert len(first) == TICKS // 1000
    assert first == second
    assert first == host_marks()
