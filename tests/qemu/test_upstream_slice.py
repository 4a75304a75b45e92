# SPDX-License-Identifier: MIT
"""A quick slice of MicroPython's own test suite on LociOS: every 4th test of each
directory as bytecode, every 8th through .mpy files and as native code. `make
test-upstream` runs all of it; this catches a regression in minutes. Failures must be
listed in tests/upstream/expected-failures.txt (tools/test/upstream_run.py checks)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tools.guest.guestconsole import IMAGE, ROOT

MPY_CROSS = ROOT / "build" / "port" / "mpy-cross" / "mpy-cross"


@pytest.mark.parametrize("configs, sample", [("bytecode", 4), ("via-mpy,native", 8)])
def test_upstream_slice(tmp_path, configs, sample):
    out_json = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "test" / "upstream_run.py"), "--image", str(IMAGE),
         "--mpy-cross", str(MPY_CROSS), "--configs", configs, "--sample", str(sample),
         "--json", str(out_json), "--results-dir", str(tmp_path / "results")],
        capture_output=True, text=True, timeout=1200)
    report = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, report
    results = json.loads(out_json.read_text())
    for config, c in results["configs"].items():
        passed = sum(d["passed"] for d in c["dirs"].values())
        failed = sum(d["failed"] for d in c["dirs"].values())
        # Every directory contributed, and nearly everything that ran passed (the rest
        # is listed, or the run above would have failed).
        assert all(d["passed"] + d["failed"] + d["skipped"] > 0 for d in c["dirs"].values()), \
            f"{config}: a directory ran no test\n{report}"
        assert passed > 20 and failed <= passed // 10, f"{config}: {passed} passed\n{report}"
