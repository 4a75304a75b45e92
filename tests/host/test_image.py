# SPDX-License-Identifier: MIT
"""tools/build/mkimage.py: the disk image is GPT with a protective MBR, an EFI system
partition at 1 MiB, FAT32 with enough clusters for edk2, holding the loader and kernel
where the firmware and the loader look for them, then LOCIDATA (/data)."""

import os
import shutil
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ESP_GUID = uuid.UUID("c12a7328-f81f-11d2-ba4b-00a0c93ec93b")
LINUX_DATA_GUID = uuid.UUID("0fc63daf-8483-4772-8e79-3d69d8477de4")
SECTOR = 512
MTOOLS_ENV = dict(os.environ, MTOOLS_SKIP_CHECK="1", MTOOLSRC=os.devnull)

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("sgdisk", "mformat", "mcopy", "minfo", "mtype")),
    reason="sgdisk and mtools are needed")


def mtool(*args):
    return subprocess.run(list(args), env=MTOOLS_ENV, capture_output=True, check=True).stdout


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    d = tmp_path_factory.mktemp("image")
    loader, kernel = d / "BOOTX64.EFI", d / "kernel.elf"
    loader.write_bytes(b"MZ" + os.urandom(30000))
    kernel.write_bytes(b"\x7fELF" + os.urandom(200000))
    img = d / "lociOS.img"
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "mkimage.py"), "--loader",
                        str(loader), "--kernel", str(kernel), "-o", str(img)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) <= 1 and p.stderr == ""
    return img, loader, kernel


def test_protective_mbr_and_gpt_esp_at_1mib(image):
    img = image[0].read_bytes()
    assert img[510:512] == b"\x55\xaa"
    assert img[446 + 4] == 0xEE                      # protective MBR partition type
    gpt = img[SECTOR:2 * SECTOR]
    assert gpt[:8] == b"EFI PART"
    entries_lba, count, entry_size = struct.unpack_from("<QII", gpt, 72)
    entries = img[entries_lba * SECTOR:entries_lba * SECTOR + count * entry_size]
    used = [entries[i:i + entry_size] for i in range(0, len(entries), entry_size)
            if any(entries[i:i + 16])]
    assert len(used) == 2
    first, last = struct.unpack_from("<QQ", used[0], 32)
    assert uuid.UUID(bytes_le=used[0][:16]) == ESP_GUID
    assert first * SECTOR == 1 << 20
    assert (last - first + 1) * SECTOR >= 64 << 20
    # /data follows the ESP (tests/host/test_datafs.py checks its contents).
    dfirst, dlast = struct.unpack_from("<QQ", used[1], 32)
    assert uuid.UUID(bytes_le=used[1][:16]) == LINUX_DATA_GUID
    assert used[1][56:72].decode("utf-16-le") == "LOCIDATA"
    assert dfirst == last + 1 and (dlast - dfirst + 1) * SECTOR == 32 << 20


def test_fat32_with_enough_clusters(image):
    from tools.build import mkimage

    info = mtool("minfo", "-i", f"{image[0]}@@1M", "::").decode()
    assert 'disk type="FAT32   "' in info
    assert mkimage.fat_cluster_count(info) >= 65525


def test_files_are_where_firmware_and_loader_look(image):
    img, loader, kernel = image
    part = f"{img}@@1M"
    assert mtool("mtype", "-i", part, "::/EFI/BOOT/BOOTX64.EFI") == loader.read_bytes()
    assert mtool("mtype", "-i", part, "::/LOCIOS/KERNEL.ELF") == kernel.read_bytes()


def test_missing_input_is_a_clear_error(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "mkimage.py"), "--loader",
                        str(tmp_path / "none.efi"), "--kernel", str(tmp_path / "none.elf"),
                        "-o", str(tmp_path / "x.img")], capture_output=True, text=True)
    assert p.returncode == 1 and "none.efi: no such file" in p.stderr
    assert not (tmp_path / "x.img").exists()


def test_missing_tools_are_named(tmp_path, monkeypatch):
    from tools.build import mkimage

    monkeypatch.setattr(mkimage.shutil, "which", lambda tool: None)
    with pytest.raises(mkimage.ImageError, match="apt-get install gdisk mtools"):
        mkimage.build_image(tmp_path / "a", tmp_path / "b", tmp_path / "c")


def test_image_without_kernel_for_the_loader_refusal_test(tmp_path):
    loader = tmp_path / "BOOTX64.EFI"
    loader.write_bytes(b"MZ" + bytes(100))
    img = tmp_path / "nokernel.img"
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "build" / "mkimage.py"), "--loader",
                        str(loader), "-o", str(img)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    listing = mtool("mdir", "-/", "-b", "-i", f"{img}@@1M", "::").decode()
    assert "BOOTX64.EFI" in listing and "KERNEL.ELF" not in listing
