# SPDX-License-Identifier: MIT
"""The loader refuses kernels it cannot vouch for, says why on the console, and never
jumps to them: a tampered kernel, a garbage or truncated ELF (sealed with its own
digest, so the ELF rules are what stops it) and a missing kernel file."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.guest.guestconsole import ROOT, Guest

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
        tool("tools/build/seal.py", "--loader", str(UNSEALED), "--kernel", str(seal_with),
             "-o", str(loader))
    image = tmp / "test.img"
    args = ["tools/build/mkimage.py", "--loader", str(loader), "-o", str(image)]
    if kernel is not None:
        args += ["--kernel", str(kernel)]
    tool(*args)
    return image


def console_until(image: Path, pattern: str, tmp: Path) -> str:
    """Boots `image` and returns the console text once `pattern` appears; the guest
    must not reach the MicroPython prompt."""
    g = Guest(image, log=tmp / "serial.log")
    try:
        idx = g.expect_any([pattern.encode(), b">>> "], timeout=90)
        text = (g.before + g.after).decode(errors="replace")
    finally:
        g.close()
    assert idx == 0, f"the guest booted instead of refusing:\n{text}"
    return text


def test_tampered_kernel_is_refused_naming_both_digests(tmp_path):
    data = bytearray(KERNEL.read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered = tmp_path / "kernel.elf"
    tampered.write_bytes(bytes(data))
    text = console_until(make_image(tmp_path, tampered, None),
                         r"got +sha256 [0-9a-f]{64}", tmp_path)
    assert "refused" in text, text
    expected = re.search(r"expected +sha256 ([0-9a-f]{64})", text)
    got = re.search(r"got +sha256 ([0-9a-f]{64})", text)
    assert expected and got, text
    assert expected.group(1) == hashlib.sha256(KERNEL.read_bytes()).hexdigest()
    assert got.group(1) == hashlib.sha256(tampered.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", ["garbage", "truncated"])
def test_bad_elf_sealed_with_its_own_digest_is_refused_by_elf_rules(tmp_path, kind):
    if kind == "garbage":
        data = bytes((i * 131 + 7) % 256 for i in range(64 * 1024))
    else:
        data = KERNEL.read_bytes()[:3000]
    bad = tmp_path / "kernel.elf"
    bad.write_bytes(data)
    text = console_until(make_image(tmp_path, bad, bad), r"ELF_ERR_\w+: [^\r\n]+\r?\n", tmp_path)
    assert "refused" in text and "ELF rules" in text, text
    rule = "ELF_ERR_MAGIC" if kind == "garbage" else "ELF_ERR_"
    assert rule in text, text


def test_missing_kernel_file_is_reported(tmp_path):
    text = console_until(make_image(tmp_path, None, KERNEL),
                         r"KERNEL\.ELF not found on the volume[^\r\n]*\r?\n", tmp_path)
    assert "error" in text, text
