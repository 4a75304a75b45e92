# SPDX-License-Identifier: MIT
"""tools/datafs.py and the LOCIDATA partition of tools/build/mkimage.py: files put in
come back out, /data survives a rebuild and `make clean`, --data pre-loads it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKIMAGE = ROOT / "tools" / "build" / "mkimage.py"
DATAFS = ROOT / "tools" / "datafs.py"

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("sgdisk", "mformat", "mcopy", "minfo")),
    reason="sgdisk and mtools are needed")


def run(*args, ok=True):
    p = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def datafs(img, *args, ok=True):
    return run(DATAFS, img, *args, ok=ok)


@pytest.fixture
def parts(tmp_path):
    loader, kernel = tmp_path / "BOOTX64.EFI", tmp_path / "kernel.elf"
    loader.write_bytes(b"MZ" + os.urandom(3000))
    kernel.write_bytes(b"\x7fELF" + os.urandom(20000))
    return loader, kernel


def mkimage(parts, img, *extra, ok=True):
    return run(MKIMAGE, "--loader", parts[0], "--kernel", parts[1], "-o", img, *extra,
               ok=ok)


def test_partition_and_round_trip(parts, tmp_path):
    img = tmp_path / "lociOS.img"
    mkimage(parts, img, "--data-mib", "8")
    table = subprocess.run(["sgdisk", "-p", str(img)], capture_output=True,
                           text=True).stdout
    assert "8300  LOCIDATA" in table and "8.0 MiB" in table
    assert datafs(img, "ls").stdout == ""
    blob = os.urandom(100_000)
    (tmp_path / "blob.bin").write_bytes(blob)
    datafs(img, "mkdir", "/dir/sub")
    datafs(img, "put", tmp_path / "blob.bin", "/dir/sub")
    datafs(img, "put", tmp_path / "blob.bin", "top.bin")
    assert "blob.bin" in datafs(img, "ls", "dir/sub").stdout
    datafs(img, "get", "/dir/sub/blob.bin", tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == blob
    assert "2 files, 200000 bytes" in datafs(img, "info").stdout
    datafs(img, "rm", "/top.bin")
    assert "top.bin" not in datafs(img, "ls").stdout
    p = datafs(img, "cat", "/nothing", ok=False)
    assert p.returncode == 1 and "error" in p.stderr
    # format asks first, then empties /data.
    assert datafs(img, "format", ok=False).returncode == 2
    assert "dir/" in datafs(img, "ls").stdout
    datafs(img, "format", "--yes")
    assert datafs(img, "ls").stdout == ""


def test_guest_config(parts, tmp_path):
    """The filesystem is made with the block size and on-disk version the guest's
    lfs2 (MicroPython 1.25, littlefs 2.8, disk 2.1) mounts."""
    import littlefs
    img = tmp_path / "lociOS.img"
    mkimage(parts, img, "--data-mib", "4")
    sys.path.insert(0, str(ROOT))
    from tools import datafs as mod
    fd = os.open(img, os.O_RDONLY)
    try:
        part = mod.find_data(fd)
        fs = mod.open_fs(fd, part)
        st = fs.fs_stat()
        assert (st.block_size, st.block_count, st.disk_version) == (4096, 1024,
                                                                    0x00020001)
        fs.unmount()
        # A wrong block size does not mount: the superblock records it.
        wrong = littlefs.LittleFS(mod.RegionContext(fd, part.offset, part.size),
                                  mount=False, block_size=512,
                                  block_count=part.size // 512)
        with pytest.raises(littlefs.LittleFSError):
            wrong.mount()
        del wrong
    finally:
        os.close(fd)


def test_rebuild_keeps_data(parts, tmp_path):
    img = tmp_path / "lociOS.img"
    mkimage(parts, img, "--data-mib", "4")
    (tmp_path / "note.txt").write_text("mine")
    datafs(img, "put", tmp_path / "note.txt", "/note.txt")
    p = mkimage(parts, img, "--data-mib", "4")
    assert "carried over" in p.stdout
    assert datafs(img, "cat", "/note.txt").stdout == "mine"
    # A different size refuses and says how to move the files; the image is untouched.
    p = mkimage(parts, img, "--data-mib", "8", ok=False)
    assert p.returncode == 1 and "--data-mib 4" in p.stderr and "datafs.py" in p.stderr
    assert datafs(img, "cat", "/note.txt").stdout == "mine"


def test_preload(parts, tmp_path):
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / "main.py").write_text("print(1)\n")
    (src / "lib" / "x.py").write_text("X = 2\n")
    img = tmp_path / "lociOS.img"
    mkimage(parts, img, "--data", src, "--data-mib", "4")
    assert datafs(img, "cat", "main.py").stdout == "print(1)\n"
    assert datafs(img, "cat", "/lib/x.py").stdout == "X = 2\n"
    # Into an image that already has /data, --data would overwrite: it refuses.
    p = mkimage(parts, img, "--data", src, "--data-mib", "4", ok=False)
    assert p.returncode == 1 and "fresh" in p.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_clean_keeps_data(parts, tmp_path):
    build = tmp_path / "b"
    build.mkdir()
    img = build / "lociOS.img"
    mkimage(parts, img, "--data-mib", "4")
    py = Path(sys.executable)
    make = ["make", "-s", "-C", str(ROOT), f"BUILD={build}", f"PY={py}"]
    # An empty /data leaves no keep file.
    subprocess.run(make + ["clean"], check=True, capture_output=True)
    assert not img.exists() and not (build / "lociOS-data.keep").exists()
    mkimage(parts, img, "--data-mib", "4")
    (tmp_path / "a.txt").write_text("a" * 3000)
    datafs(img, "put", tmp_path / "a.txt", "/a.txt")
    p = subprocess.run(make + ["clean"], check=True, capture_output=True, text=True)
    keep = build / "lociOS-data.keep"
    assert f"kept /data of {img} (1 files, 3 KiB) in {keep}" in p.stdout
    assert not img.exists() and keep.exists()
    p = mkimage(parts, img, "--data-mib", "4")
    assert "carried over from" in p.stdout and not keep.exists()
    assert datafs(img, "cat", "/a.txt").stdout == "a" * 3000
    p = subprocess.run(make + ["distclean", f"VENV={tmp_path}/novenv"], check=True,
                       capture_output=True, text=True)
    assert "deletes /data of" in p.stdout and "1 files, 3 KiB" in p.stdout


LFS2 = ROOT / "build" / "micropython-1.25.0" / "lib" / "littlefs"


@pytest.mark.skipif(not (LFS2 / "lfs2.c").exists() or shutil.which("cc") is None,
                    reason="needs the fetched MicroPython tree and a C compiler")
def test_micropython_lfs2_reads_what_the_host_wrote(parts, tmp_path):
    """The guest's own lfs2 (MicroPython 1.25's copy, VfsLfs2's configuration) mounts
    the partition and reads the files the host put there."""
    exe = tmp_path / "lfs2_mount"
    subprocess.run(["cc", "-std=c11", "-O1", "-DLFS2_NO_MALLOC", "-DLFS2_NO_DEBUG",
                    "-DLFS2_NO_WARN", "-DLFS2_NO_ERROR", "-DLFS2_NO_ASSERT", f"-I{LFS2}",
                    str(ROOT / "tests" / "host" / "lfs2_mount.c"), str(LFS2 / "lfs2.c"),
                    str(LFS2 / "lfs2_util.c"), "-o", str(exe)], check=True)
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "main.py").write_text("print('hi')\n")
    img = tmp_path / "lociOS.img"
    mkimage(parts, img, "--data", src, "--data-mib", "4")
    big = b"abcdefghij" * 5000  # printable: the harness prints the first 16 bytes
    (tmp_path / "big.bin").write_bytes(b"BIGFILE!" + big)
    datafs(img, "put", tmp_path / "big.bin", "/d/big.bin")
    sys.path.insert(0, str(ROOT))
    from tools import datafs as mod
    fd = os.open(img, os.O_RDONLY)
    try:
        part = mod.find_data(fd)
    finally:
        os.close(fd)
    p = subprocess.run([str(exe), str(img), str(part.offset), str(part.size)],
                       capture_output=True)
    assert p.returncode == 0, p.stdout
    lines = sorted(line for line in p.stdout.splitlines() if line)  # main.py ends in \n
    assert lines[0].startswith(b"/d/big.bin 50008 BIGFILE!")
    assert lines[1] == b"/main.py 12 print('hi')"
