# SPDX-License-Identifier: MIT
"""tools/build/seal.py: finding the one seal record, writing the kernel digest into it, and
refusing loaders without exactly one record. Checked on synthetic loaders and, when
gnu-efi is installed, on the real unsealed BOOTX64.EFI."""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.build import seal

ROOT = Path(__file__).resolve().parents[2]
MAGIC = b"LOCIOS-SEAL-v1\x00\x00"


def fake_loader(records=1, digest=bytes(32)):
    return b"MZ" + bytes(1000) + (MAGIC + digest + b"\xcc" * 16) * records + b"tail"


def run_cli(tmp_path, loader_bytes, kernel_bytes):
    loader = tmp_path / "unsealed.efi"
    kernel = tmp_path / "kernel.elf"
    out = tmp_path / "BOOTX64.EFI"
    loader.write_bytes(loader_bytes)
    kernel.write_bytes(kernel_bytes)
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "seal.py"), "--loader",
                        str(loader), "--kernel", str(kernel), "-o", str(out)],
                       capture_output=True, text=True)
    return p, out


def test_round_trip_writes_only_the_digest(tmp_path):
    kernel = b"\x7fELF pretend kernel" * 100
    p, out = run_cli(tmp_path, fake_loader(), kernel)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == ""
    sealed = out.read_bytes()
    original = fake_loader()
    at = original.index(MAGIC) + len(MAGIC)
    assert len(sealed) == len(original)
    assert sealed[at:at + 32] == hashlib.sha256(kernel).digest()
    assert sealed[:at] == original[:at] and sealed[at + 32:] == original[at + 32:]
    assert seal.sealed_digest(sealed) == hashlib.sha256(kernel).digest()


def test_resealing_replaces_the_digest():
    once = seal.seal(fake_loader(), b"first")
    twice = seal.seal(once, b"second")
    assert seal.sealed_digest(twice) == hashlib.sha256(b"second").digest()
    assert twice == seal.seal(fake_loader(), b"second")


def test_missing_marker_is_refused(tmp_path):
    p, out = run_cli(tmp_path, b"MZ" + bytes(4096), b"k")
    assert p.returncode == 1 and not out.exists()
    assert "no seal record" in p.stderr


def test_duplicated_marker_is_refused(tmp_path):
    p, out = run_cli(tmp_path, fake_loader(records=2), b"k")
    assert p.returncode == 1 and not out.exists()
    assert "occurs 2 times" in p.stderr


def test_record_cut_off_at_end_is_refused():
    with pytest.raises(seal.SealError, match="cut off"):
        seal.seal(b"MZ" + MAGIC + bytes(31), b"k")


def test_missing_input_file_is_a_clear_error(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "seal.py"), "--loader",
                        str(tmp_path / "nope.efi"), "--kernel", str(tmp_path / "k"), "-o",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert p.returncode == 1 and "nope.efi" in p.stderr


@pytest.fixture(scope="module")
def real_unsealed_loader():
    if shutil.which("gcc") is None or not Path("/usr/include/efi/efi.h").exists():
        pytest.fail("gnu-efi is not installed: run make setup")
    mp = ROOT / "build" / "micropython-1.25.0" / "lib" / "crypto-algorithms" / "sha256.c"
    if not mp.exists():
        pytest.fail("MicroPython source not unpacked: run make setup")
    p = subprocess.run(["make", "--no-print-directory", "-f", "boot/boot.mk", "boot-loader"],
                       cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return (ROOT / "build" / "boot" / "BOOTX64.unsealed.efi").read_bytes()


def test_real_loader_has_one_unsealed_record(real_unsealed_loader):
    assert real_unsealed_loader[:2] == b"MZ"
    assert real_unsealed_loader.count(MAGIC) == 1
    assert seal.sealed_digest(real_unsealed_loader) == bytes(32)
    sealed = seal.seal(real_unsealed_loader, b"kernel")
    assert sealed.count(MAGIC) == 1
    assert seal.sealed_digest(sealed) == hashlib.sha256(b"kernel").digest()
