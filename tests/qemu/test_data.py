# SPDX-License-Identifier: MIT
"""/data across boots: a copy of the image booted writable (as `make run` boots it), the
LOCIDATA partition mounted at /data, what one boot saves read by the next and by
tools/datafs.py on the host, modules imported from /data/lib, and a damaged partition
reported while the machine still comes to the prompt."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.guest.guestconsole import IMAGE, Guest

ROOT = Path(__file__).resolve().parents[2]
DATAFS = ROOT / "tools" / "datafs.py"
sys.path.insert(0, str(ROOT / "port" / "modules"))
import gpt  # noqa: E402

MOUNTED = "data: virtio0 partition 2 (LOCIDATA) mounted at /data"


def _datafs(image, *args, stdin=None):
    p = subprocess.run([sys.executable, str(DATAFS), str(image), *args], input=stdin,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _boot(image, log):
    g = Guest(image, log=log, launch=["--writable"])
    g.banner = g.boot()
    return g


@pytest.fixture(scope="module")
def disk_image(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    image = d / "lociOS.img"
    shutil.copyfile(IMAGE, image)
    # The built image carries over whatever /data held; start these tests empty.
    _datafs(image, "format", "--yes")
    return image


def test_saved_in_one_boot_read_in_the_next_and_on_the_host(disk_image, tmp_path):
    g = _boot(disk_image, tmp_path / "boot1.log")
    try:
        assert MOUNTED in g.banner, g.banner
        out = g.paste(
            "import os\n"
            "os.mkdir('/data/lib')\n"
            "with open('/data/lib/greet.py', 'w') as f:\n"
            "    f.write('def hello():\\n    return \"hello from /data/lib\"\\n')\n"
            "with open('/data/note.txt', 'w') as f:\n"
            "    f.write('written in boot 1\\n' * 100)\n"
            "print(sorted(os.listdir('/data')))\n")
        assert "Traceback" not in out, out
        assert "['lib', 'note.txt']" in out, out
    finally:
        g.close()
    assert _datafs(disk_image, "cat", "/note.txt") == "written in boot 1\n" * 100
    src = tmp_path / "from_host.txt"
    src.write_text("put there by the host\n")
    _datafs(disk_image, "put", str(src), "/from_host.txt")

    g = _boot(disk_image, tmp_path / "boot2.log")
    try:
        assert MOUNTED in g.banner, g.banner
        assert g.eval("open('/data/note.txt').read() == 'written in boot 1\\n' * 100") \
            == "True"
        assert g.eval("open('/data/from_host.txt').read()") == repr("put there by the host\n")
        assert g.eval("import greet; greet.hello()") == repr("hello from /data/lib")
        assert g.eval("'/data/lib' in __import__('sys').path") == "True"
    finally:
        g.close()


def test_damaged_partition_is_reported_and_the_prompt_comes(tmp_path):
    image = tmp_path / "damaged.img"
    shutil.copyfile(IMAGE, image)
    with open(image, "r+b") as f:
        size = os.fstat(f.fileno()).st_size

        def read(off, n):
            f.seek(off)
            return f.read(n)
        part = gpt.find(gpt.read_table(read, size), "LOCIDATA")
        # Both superblocks (blocks 0 and 1) and what follows: nothing left to mount.
        f.seek(part.first_lba * 512)
        f.write(random.Random(18).randbytes(64 * 1024))
    g = _boot(image, tmp_path / "damaged.log")
    try:
        assert "does not mount as littlefs" in g.banner, g.banner
        assert MOUNTED not in g.banner
        assert g.eval("6 * 7") == "42"
        out = g.run("import storage; storage.format(yes=True)", timeout=120)
        assert MOUNTED in out, out
        assert g.eval("import os; os.listdir('/data')") == "[]"
    finally:
        g.close()


AUDIT_RUN = r"""
import mesh, field
from field import grid
M = mesh.Mesh([grid('trail', 16, 16)], audit=256)
OUTSIDE = 'def step(ctx):\n    ctx.deposit("trail", 1.0, (9, 9))\n'
for i in range(100):
    M.spawn({'name': 'out%d' % i, 'code': OUTSIDE, 'restart': 'never',
             'caps': [{'flavours': ['trail'], 'ops': ['deposit'], 'region': (0, 0, 4, 4)}],
             'attend': {'flavour': 'trail', 'at': (1, 1)}})
for r in range(12):
    M.round()
SAVED = M.audit_save()
HEAD = M.caps.audit(1)[0][11]
print(M.audit_rolls, M.audit_store.files, M.audit_unsaved, SAVED)
"""


def test_the_audit_log_rolls_over_to_data_and_its_chain_verifies_on_the_host(disk_image,
                                                                            tmp_path):
    g = _boot(disk_image, tmp_path / "audit.log")
    try:
        assert MOUNTED in g.banner, g.banner
        out = g.paste(AUDIT_RUN, timeout=300)
        assert "Traceback" not in out, out
        rolls, files, unsaved = (int(x) for x in out.split()[-4:-1])
        assert rolls >= 2 and files == rolls and unsaved == 0, out
        head = g.eval("HEAD.hex()").strip("'")
        run = g.eval("M.audit_store.dir").strip("'")
        assert run.startswith("/data/audit/"), run
        assert "roll-overs exported" in g.run("import lo_mesh; lo_mesh.audit(0)")
    finally:
        g.close()
    tool = [sys.executable, str(ROOT / "tools" / "auditlog.py"), "verify", str(disk_image)]
    p = subprocess.run([*tool, run.rsplit("/", 1)[1], "--head", head],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and f"chain ok: {files} files" in p.stdout, p.stdout + p.stderr
    # Another head (a record of the last file changed, say) is refused.
    p = subprocess.run([*tool, "--head", "00" * 32], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1 and "BROKEN" in p.stdout, p.stdout + p.stderr


def test_a_locidata_on_a_drive_read_only_until_made_writable_mounts_read_only(tmp_path):
    # The boot disk's own partition renamed, so the only LOCIDATA is on an NVMe drive,
    # which LociOS reads but does not write unless asked (issue 18: an internal SSD).
    boot = tmp_path / "boot.img"
    shutil.copyfile(IMAGE, boot)
    subprocess.run(["sgdisk", "-c", "2:NOTOURS", str(boot)], check=True,
                   capture_output=True, timeout=60)
    ssd = tmp_path / "ssd.img"
    shutil.copyfile(IMAGE, ssd)
    _datafs(ssd, "format", "--yes")
    src = tmp_path / "kept.txt"
    src.write_text("on the ssd\n")
    _datafs(ssd, "put", str(src), "/kept.txt")
    g = Guest(boot, log=tmp_path / "ssd.log",
              extra=["-drive", f"if=none,id=ssd,format=raw,file={ssd}",
                     "-device", "nvme,serial=lociosdata,drive=ssd"])
    try:
        banner = g.boot()
        assert "data: nvme0 partition 2 (LOCIDATA) mounted at /data" in banner, banner
        assert "read-only (disk.Disk('nvme0').writable(True), then storage.remount())" \
            in banner, banner
        assert g.eval("open('/data/kept.txt').read()") == repr("on the ssd\n")
        out = g.run("open('/data/new.txt', 'w').write('x')")
        assert "OSError" in out and "30" in out, out        # EROFS
        out = g.run("import disk, storage; disk.Disk('nvme0').writable(True); "
                    "storage.remount()")
        assert "mounted at /data, " in out and "read-only" not in out, out
        g.eval("f = open('/data/new.txt', 'w'); f.write('written'); f.close()")
        g.eval("storage.sync()")
    finally:
        g.close()
    assert _datafs(ssd, "cat", "/new.txt") == "written"
