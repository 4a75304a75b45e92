# SPDX-License-Identifier: MIT
"""The loader refuses kernels it cannot vouch for, says why on the console, and never
jumps to them: a tampered kernel, a garbage or truncated ELF (sealed with its own
digest, so the ELF rules are what stops it) and a missing kernel file."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from guestconsole import ROOT, Guest

BUILD = ROOT / "build"
KERNEL = BUILD / "kernel.elf"
UNSEALED = BUILD / "boot" / "BOOTX64.unsealed.efi"
SEALED = BUILD / "boot" / "BOOTX64.EFI"


def tool(*args: str) -> None:
    subprocess.run([sys.executable, *args], check=True, cwd=ROOT, capture_output=True)


def make_image(tmp: Path, kernel: Path | None, seal_with: Path | None) -> Path:
    """An image holding `kernel` (None: no kernel file) and a loader sealed with the
    digest of `seal_with` (None: the build's own sealed loader)."""
    loader = SEALED
    if seal_with is not None:
        loader = tmp / "BOOTX64.EFI"
        tool("tools/seal.py", "--loader", str(UNSEALED), "--kernel", str(seal_with),
             "-o", str(loader))
    image = tmp / "test.img"
    args = ["tools/mkimage.py", "--loader", str(loader), "-o", str(image)]
    if kernel is not None:
        args += ["--kernel", str(kernel)]
    tool(*args)
    return image


def console_until(image: Path, pattern: str, tmp: Path) -> str:
    """Boots `image` and returns the console text once `pattern` appears; the guest
    must not reach the MicroPython prompt."""
    g = Guest(image, log=tmp / "serial.log")
    try:
        idx = g.child.expect([pattern.encode(), b">>> "], timeout=90)
        text = (tmp / "serial.log").read_bytes().decode(errors="replace")
    finally:
        g.close()
    assert idx == 0, f"the guest booted instead of refusing:\n{text}"
    return text


def test_tampered_kernel_is_refused_naming_both_digests(tmp_path):
    data = bytearray(KERNEL.read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered = tmp_path / "kernel.elf"
    tampered.write_bytes(bytes(data))
    text = console_until(make_image(tmp_path, tampered, None), r"(?i)refus", tmp_path)
    digests = re.findall(r"[0-9a-f]{64}", text)
    assert len(set(digests)) >= 2, text


@pytest.mark.parametrize("kind", ["garbage", "truncated"])
def test_bad_elf_sealed_with_its_own_digest_is_refused_by_elf_rules(tmp_path, kind):
    if kind == "garbage":
        data = bytes((i * 131 + 7) % 256 for i in range(64 * 1024))
    else:
        data = KERNEL.read_bytes()[:3000]
    bad = tmp_path / "kernel.elf"
    bad.write_bytes(data)
    text = console_until(make_image(tmp_path, bad, bad), r"(?i)refus", tmp_path)
    assert re.search(r"(?i)elf", text), text


def test_missing_kernel_file_is_reported(tmp_path):
    text = console_until(make_image(tmp_path, None, KERNEL), r"(?i)KERNEL\.ELF", tmp_path)
    g = text[text.lower().index("kernel.elf") - 200:]
    assert re.search(r"(?i)(not found|missing|cannot open|no such)", g), text
