# SPDX-License-Identifier: MIT
"""The optimiser's experience across boots (vm/opt/_experience.py): a copy of the image
booted writable twice, the same workload settled in each. The first boot's verdicts are
appended to /data/opt/journal; the second gates the kind swapped before first (all four
gates again), decides the function refused before at once, and so settles in fewer
passes. A torn last line (a power cut inside an append) is skipped with a message."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from guestprog import prog

from tools.guest.guestconsole import IMAGE, Guest

ROOT = Path(__file__).resolve().parents[2]
WORK = prog("opt_experience")


def _datafs(image, *args):
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "datafs.py"), str(image), *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _settle(image: Path, log: Path, after: str = "") -> tuple:
    """(passes, cycles, verdicts, experience stats, paste output) of one boot."""
    with Guest(image, log=log, launch=["--writable"]) as g:
        g.boot()
        out = g.paste(WORK)
        assert "Traceback" not in out, out
        passes, cycles, verdicts = g.ask("settle_here()", timeout=600)
        stats = g.ask("opt.experience()[0]")
        if after:
            g.paste(after)
    return passes, cycles, verdicts, stats, out


def _by_function(verdicts):
    out: dict = {}
    for fn, kind, verdict, gate, detail in verdicts:
        out.setdefault(fn, []).append((kind, verdict, gate, detail))
    return out


def test_a_warm_boot_settles_in_fewer_passes_and_gates_again(tmp_path):
    image = tmp_path / "lociOS.img"
    shutil.copyfile(IMAGE, image)
    _datafs(image, "format", "--yes")
    # After the first boot settles, half a line appended, as a cut inside an append
    # would leave it.
    torn = "with open('/data/opt/journal', 'a') as f:\n    f.write('{\"key\": \"src:')\n"
    p1, c1, v1, s1, _ = _settle(image, tmp_path / "boot1.log", torn)
    cold = _by_function(v1)
    assert s1["lines"] == 0 and s1["written"] == len(v1), s1
    assert ("native", "swapped") in {(k, v) for k, v, _g, _d in cold["spin"]} or \
        ("rewrite", "swapped") in {(k, v) for k, v, _g, _d in cold["spin"]}, cold
    assert [v for _k, v, _g, _d in cold["plain"]] == ["rejected", "rejected"], cold

    saved = [json.loads(line) for line in
             _datafs(image, "cat", "/opt/journal").splitlines()[:-1]]
    assert [(e["function"], e["verdict"]) for e in saved] == \
        [(fn, verdict) for fn, _k, verdict, _g, _d in v1], saved
    assert all(e["key"].startswith("src:") for e in saved), saved

    p2, c2, v2, s2, out2 = _settle(image, tmp_path / "boot2.log")
    warm = _by_function(v2)
    assert f"opt: /data/opt/journal: 1 of {len(v1) + 1} lines did not parse; skipped" \
        in out2, out2
    assert (s2["lines"], s2["skipped"]) == (len(v1) + 1, 1), s2
    # Refused before for reasons of its code: decided at once, not recorded or measured.
    [(kind, verdict, gate, detail)] = warm["plain"]
    assert (kind, verdict, gate) == ("any", "rejected", "experience"), warm
    assert detail.startswith("refused in an earlier boot: rewrite at "), detail
    # Swapped before: the same kind swapped again, gated first, through every gate.
    swapped = [(k, d) for k, v, _g, d in cold["spin"] if v == "swapped"]
    again = [(k, d) for k, v, _g, d in warm["spin"] if v == "swapped"]
    assert [k for k, _d in again] == [k for k, _d in swapped], (cold, warm)
    assert again[0][1].startswith("gated first: swapped in an earlier boot"), again
    assert len(warm["spin"]) == 1, warm   # the other kind was not gated at all
    assert p2 < p1, (p1, p2, v1, v2)
    print(f"cold: {p1} passes, {c1:,} cycles; warm: {p2} passes, {c2:,} cycles")
