# SPDX-License-Identifier: MIT
"""The capability tests again with the C core built under -fsanitize=address,undefined.
ASan cannot be loaded into this running Python, so a child Python with libasan preloaded
runs the model, rules and audit tests against that build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cap_cffi

HERE = Path(__file__).resolve().parent
FILES = ["test_cap_model.py", "test_cap_rules.py", "test_cap_audit.py"]


def test_cap_core_under_address_sanitizer():
    cap_cffi.build("asan", load=False)  # built here, so a compiler error shows as itself
    env = cap_cffi.asan_env()
    env["CAP_EXAMPLES"] = "60"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-W", "ignore::pytest.PytestConfigWarning", *FILES],
                       cwd=HERE, env=env, capture_output=True, text=True, timeout=900)
    tail = (p.stdout + p.stderr)[-3000:]
    assert p.returncode == 0, tail
    assert "AddressSanitizer" not in tail and " passed" in tail, tail
