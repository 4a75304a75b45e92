# SPDX-License-Identifier: MIT
"""qemu/launch.py on machines that lack something: each problem is one clear message
and exit status 2, never a traceback or a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "qemu" / "launch.py"


def launch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(LAUNCH), *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})})


def test_missing_firmware_is_named(tmp_path):
    r = launch("test", "--print", "--image", str(tmp_path / "x.img"),
               env={"OVMF": str(tmp_path / "nope.fd")})
    assert r.returncode == 2
    assert "OVMF=" in r.stderr and "no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_qemu_says_what_to_install(tmp_path):
    r = launch("check", env={"PATH": str(tmp_path)})
    assert r.returncode == 2
    assert "qemu-system-x86_64 not found" in r.stderr and "qemu-system-x86" in r.stderr


def test_missing_image_says_how_to_build_it(tmp_path):
    r = launch("test", "--print", "--image", str(tmp_path / "missing.img"),
               env={"LOCIOS_ACCEL": "tcg"})
    assert r.returncode == 2
    assert "make image" in r.stderr


def test_extra_arguments_after_double_dash_reach_qemu(tmp_path):
    image = tmp_path / "x.img"
    image.write_bytes(b"\0" * 512)
    r = launch("test", "--print", "--image", str(image), "--", "-vga", "none",
               env={"LOCIOS_ACCEL": "tcg"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().endswith("-vga none")
    assert "mon:stdio" not in r.stdout          # the test profile keeps Ctrl-A a plain byte
    assert "isa-debug-exit" in r.stdout
