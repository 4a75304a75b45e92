# SPDX-License-Identifier: MIT
"""A scripted, seeded run of 10,000 ticks gives the same digest at every tick across two
boots, and the same as the host build of the same C (bit-identity of guest and host)."""

from __future__ import annotations

import ast
import hashlib
import sys
from pathlib import Path

from field_script import LAYOUT, SOURCE

from tools.guest.guestconsole import IMAGE, Guest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
import field_cffi  # noqa: E402

TICKS = 10_000

GUEST_RUN = f"""
import hashlib
from field import Field
f = Field({LAYOUT!r})
def dep(i, x, y, a, who):
    f.deposit(i, (x, y), a, who)
def depk(i, k, a, who):
    f.deposit(i, k, a, who)
print('MARKS', run({TICKS}, dep, depk, f.tick, f.digest, lambda b: hashlib.sha256(b).digest()))
"""


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
