# SPDX-License-Identifier: MIT
"""tools/flash.py: every refusal is one line and exit status 1 with nothing written, and
an image is written, synced and read back, keeping the stick's /data. The disks are fake
sysfs trees (a plain file ROOT/dev/NAME stands in for the block device NAME), plain
files, and loop devices where this machine lets us make them."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools import flash

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "flash.py"
MIB = 1 << 20
GIB = 1 << 30
CHUNK = 256 << 10  # small chunks so a 3 MiB image takes several

BUS_PATHS = {
    "usb": "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0",
    "sata": "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0",
    "nvme": "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0",
    "virtual": "virtual",
}


class FakeRoot:
    """A tree with sys/block, proc/self/mountinfo, proc/swaps and dev/ as Linux has them,
    its block devices plain files under dev/."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.mountinfo: list[str] = []
        self.swaps: list[str] = []
        for d in ("sys/block", "proc/self", "dev"):
            (base / d).mkdir(parents=True, exist_ok=True)
        self._write_proc()

    def _write_proc(self) -> None:
        (self.base / "proc/self/mountinfo").write_text("".join(self.mountinfo))
        (self.base / "proc/swaps").write_text(
            "Filename\t\tType\t\tSize\t\tUsed\t\tPriority\n" + "".join(self.swaps))

    def disk(self, name: str, major: int, size: int, *, bus: str = "usb", removable: int = 1,
             ro: int = 0, vendor: str = "SanDisk", model: str = "Cruzer Blade",
             parts: tuple[int, ...] = ()) -> Path:
        """A disk of `size` bytes, device MAJOR:0, with partitions MAJOR:1... of the given
        sizes; returns its node."""
        devdir = self.base / "sys/devices" / f"{BUS_PATHS[bus]}-{name}"
        sysdir = devdir / "block" / name
        sysdir.mkdir(parents=True)
        self._attrs(sysdir, f"{major}:0", size, removable=str(removable), ro=str(ro),
                    diskseq=str(major))
        if bus != "virtual":
            (devdir / "vendor").write_text(f"{vendor:<8}\n")
            (devdir / "model").write_text(f"{model:<16}\n")
            (sysdir / "device").symlink_to("../..")
        for d in ("holders", "slaves"):
            (sysdir / d).mkdir()
        (self.base / "sys/block" / name).symlink_to(
            os.path.relpath(sysdir, self.base / "sys/block"))
        for i, psize in enumerate(parts, 1):
            pname = f"{name}p{i}" if name[-1].isdigit() else f"{name}{i}"
            pdir = sysdir / pname
            pdir.mkdir()
            self._attrs(pdir, f"{major}:{i}", psize, partition=str(i), start="2048")
            (pdir / "holders").mkdir()
            (self.base / "dev" / pname).touch()
        node = self.base / "dev" / name
        node.touch()
        return node

    @staticmethod
    def _attrs(d: Path, dev: str, size: int, **more: str) -> None:
        (d / "dev").write_text(dev + "\n")
        (d / "size").write_text(f"{size // 512}\n")
        for k, v in more.items():
            (d / k).write_text(v + "\n")

    def mount(self, dev: str, source: str, point: str, fstype: str = "vfat") -> None:
        n = len(self.mountinfo) + 20
        point = point.replace(" ", "\\040")
        self.mountinfo.append(f"{n} 1 {dev} / {point} rw,relatime shared:1 - {fstype} "
                              f"{source} rw\n")
        self._write_proc()

    def swap(self, source: str) -> None:
        self.swaps.append(f"{source}\tpartition\t1048572\t\t0\t\t-2\n")
        self._write_proc()

    def holder(self, below: str, name: str, dev: str, dm_name: str) -> None:
        """A device-mapper device `name` stacked on the partition or disk `below`."""
        target = next(p for p in (self.base / "sys/devices").rglob(below) if p.is_dir())
        d = self.base / "sys/devices/virtual/block" / name
        d.mkdir(parents=True)
        self._attrs(d, dev, 100 * MIB)
        (d / "dm").mkdir()
        (d / "dm/name").write_text(dm_name + "\n")
        (d / "holders").mkdir()
        (d / "slaves").mkdir()
        (d / "slaves" / below).symlink_to(target)
        (target / "holders" / name).symlink_to(d)
        (self.base / "sys/block" / name).symlink_to(d)
        (self.base / "dev" / name).touch()

    def vanish(self, name: str) -> None:
        """The stick is pulled: its /sys/block entry and its node go."""
        link = self.base / "sys/block" / name
        shutil.rmtree(link.resolve())
        link.unlink()
        (self.base / "dev" / name).unlink()


def fat_boot_sector(label: str) -> bytes:
    b = bytearray(512)
    b[71:82] = label.encode().ljust(11)
    b[82:90] = b"FAT32   "
    b[510:512] = b"\x55\xaa"
    return bytes(b)


@pytest.fixture
def fake(tmp_path: Path) -> FakeRoot:
    """A machine with an internal SATA disk holding / and a USB stick, sdb, unmounted."""
    r = FakeRoot(tmp_path / "root")
    r.disk("sda", 8, 500 * GIB, bus="sata", removable=0, vendor="ATA", model="Samsung SSD",
           parts=(512 * MIB, 499 * GIB))
    r.mount("8:2", "/dev/sda2", "/", "ext4")
    r.mount("8:1", "/dev/sda1", "/boot/efi")
    r.disk("sdb", 16, 16 * GIB, parts=(16 * GIB - MIB,))
    (r.base / "dev/sdb1").write_bytes(fat_boot_sector("STICK"))
    return r


@pytest.fixture
def image(tmp_path: Path) -> Path:
    p = tmp_path / "lociOS.img"
    p.write_bytes(os.urandom(3 * MIB))
    return p


def run(fake: FakeRoot | None, *args: str, ask: Callable[[str], str] | None = None,
        on_chunk: Callable[[int], None] | None = None) -> int:
    argv = list(args) + (["--sysroot", str(fake.base)] if fake else [])
    return flash.main(argv, ask=ask, on_chunk=on_chunk, chunk=CHUNK)


def refused(capsys: pytest.CaptureFixture[str], rc: int, *words: str) -> str:
    """The refusal: status 1, one line on stderr that starts `flash:` and has the words."""
    err = capsys.readouterr().err
    assert rc == 1, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("flash: "), err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# ---- listing ---------------------------------------------------------------------------


def test_list_shows_the_stick_not_the_system_disk(fake, capsys):
    (fake.base / "dev/disk/by-label").mkdir(parents=True)
    assert run(fake, "--list") == 0
    out = capsys.readouterr().out
    assert "/dev/sdb" in out and "16.0 GiB" in out and "usb" in out
    assert "SanDisk Cruzer Blade" in out and "vfat 'STICK'" in out
    assert "sda" not in out
    assert run(fake, "--list", "--all") == 0
    out = capsys.readouterr().out
    assert "/dev/sda" in out and "holds /" in out and "not removable" in out
    assert "sata" in out


def test_list_when_nothing_is_plugged_in(tmp_path, capsys):
    r = FakeRoot(tmp_path / "root")
    assert run(r, "--list") == 0
    assert "no removable disk found" in capsys.readouterr().out


def test_no_device_lists_and_asks_for_one(fake, capsys):
    assert run(fake) == 2
    cap = capsys.readouterr()
    assert "/dev/sdb" in cap.out and "tools/flash.py /dev/sdX" in cap.err


def test_shows_a_whole_disk_iso_image(fake, image, capsys):
    node = fake.disk("sdc", 24, 8 * GIB, vendor="Kingston", model="DataTraveler")
    head = bytearray(0x9000)
    head[0x8001:0x8006] = b"CD001"
    head[0x8028:0x8048] = b"Ubuntu 24.04 LTS amd64".ljust(32)
    node.write_bytes(head)
    assert run(fake, str(node), "--image", str(image), ask=lambda _: "no") == 1
    out = capsys.readouterr().out
    assert "Kingston DataTraveler, 8.0 GiB (8.6 GB), usb, removable" in out
    assert "whole disk: iso9660 'Ubuntu 24.04 LTS amd64'" in out


def test_probes_the_usual_file_systems(tmp_path):
    node = tmp_path / "node"
    ext = bytearray(4096)
    ext[1024 + 56:1024 + 58] = b"\x53\xef"
    ext[1024 + 120:1024 + 136] = b"rootfs".ljust(16, b"\0")
    exfat = bytearray(512)
    exfat[3:11], exfat[510:512] = b"EXFAT   ", b"\x55\xaa"
    fat16 = bytearray(512)
    fat16[43:54], fat16[54:62], fat16[510:512] = b"NO NAME    ", b"FAT16   ", b"\x55\xaa"
    for data, want in ((bytes(ext), ("ext4", "rootfs")), (fat_boot_sector("EFI"), ("vfat", "EFI")),
                       (bytes(exfat), ("exfat", "")), (bytes(fat16), ("vfat", "")),
                       (bytes(4096), ("", ""))):
        node.write_bytes(data)
        assert flash._probe(node) == want
    assert flash._probe(tmp_path / "absent") == ("", "")


def test_udev_labels_win_and_are_decoded(fake, capsys):
    d = fake.base / "dev/disk/by-label"
    d.mkdir(parents=True)
    (d / "MY\\x20STICK").symlink_to("../../sdb1")
    assert run(fake, "--list") == 0
    assert "'MY STICK'" in capsys.readouterr().out


# ---- writing and verifying -------------------------------------------------------------


def test_writes_shows_and_verifies(fake, image, capsys):
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return "yes"

    assert run(fake, str(fake.base / "dev/sdb"), "--image", str(image), ask=ask) == 0
    out = capsys.readouterr().out
    assert "About to overwrite /dev/sdb: SanDisk Cruzer Blade, 16.0 GiB (17.2 GB), usb" in out
    assert "sdb1" in out and "vfat 'STICK'" in out
    assert prompts and "yes" in prompts[0]
    assert "verified" in out and "SHA-256" in out
    assert (fake.base / "dev/sdb").read_bytes() == image.read_bytes()


def test_plain_file_stands_in_for_a_stick(tmp_path, image, capsys):
    stick = tmp_path / "stick.img"
    stick.write_bytes(b"\xff" * (8 * MIB))
    assert run(None, str(stick), "--stand-in", "--yes", "--image", str(image)) == 0
    data = stick.read_bytes()
    assert data[:3 * MIB] == image.read_bytes() and data[3 * MIB:] == b"\xff" * (5 * MIB)
    assert "verified" in capsys.readouterr().out


def test_force_writes_a_mounted_fixed_disk_and_says_why(fake, image, capsys):
    fake.disk("sdc", 24, GIB, removable=0, bus="sata")
    fake.mount("24:0", "/dev/sdc", "/mnt/data", "ext4")
    assert run(fake, str(fake.base / "dev/sdc"), "--force", "--yes", "--image",
               str(image)) == 0
    out = capsys.readouterr().out
    assert "because of --force, although /dev/sdc is mounted at /mnt/data" in out
    assert "not a removable disk" in out
    assert (fake.base / "dev/sdc").read_bytes() == image.read_bytes()


def test_usb_disk_without_the_removable_flag_counts_as_removable(fake, image, capsys):
    fake.disk("sdc", 24, GIB, removable=0, bus="usb")
    assert run(fake, str(fake.base / "dev/sdc"), "--yes", "--image", str(image)) == 0
    assert "verified" in capsys.readouterr().out


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_on_a_terminal(monkeypatch):
    t = Stream(tty=True)
    p = flash.Progress("writing", 10 * MIB, out=t)
    monkeypatch.setattr(flash, "PROGRESS_EVERY", 0.0)
    for done in (2 * MIB, 5 * MIB, 10 * MIB):
        p(done)
    text = t.getvalue()
    assert "\rwriting 2.0 MiB / 10.0 MiB  20%" in text
    assert "10.0 MiB / 10.0 MiB  100%" in text and text.endswith("\n")


def test_progress_off_a_terminal_is_quiet_for_short_jobs():
    out = Stream(tty=False)
    p = flash.Progress("writing", MIB, out=out)
    p(MIB // 2)
    p(MIB)
    assert out.getvalue() == ""


def test_progress_off_a_terminal_writes_lines_on_long_jobs(monkeypatch):
    out = Stream(tty=False)
    monkeypatch.setattr(flash, "PROGRESS_LINE_EVERY", 0.0)
    p = flash.Progress("writing", 4 * MIB, out=out)
    for done in (MIB, 2 * MIB, 4 * MIB):
        p(done)
    assert out.getvalue().splitlines()[0].startswith("writing 1.0 MiB / 4.0 MiB  25%")
    assert len(out.getvalue().splitlines()) == 3 and "\r" not in out.getvalue()


# ---- refusals --------------------------------------------------------------------------

Setup = Callable[[FakeRoot], str]  # changes the fake machine, returns the device to give


def _mounted_partition(r: FakeRoot) -> str:
    r.mount("16:1", "/dev/sdb1", "/media/u/STICK")
    return "sdb"


def _mounted_by_name_only(r: FakeRoot) -> str:
    # /proc/mounts has no device numbers: the source's name must be enough.
    (r.base / "proc/self/mountinfo").unlink()
    (r.base / "proc/mounts").write_text("/dev/sda2 / ext4 rw 0 0\n"
                                        "/dev/sdb1 /media/u/my\\040stick vfat rw 0 0\n")
    return "sdb"


def _mounted_whole(r: FakeRoot) -> str:
    r.disk("sdc", 24, GIB)
    r.mount("24:0", "/dev/sdc", "/mnt/whole")
    return "sdc"


def _mounted_through_dm(r: FakeRoot) -> str:
    r.holder("sdb1", "dm-0", "254:0", "luks-stick")
    r.mount("254:0", "/dev/mapper/luks-stick", "/secret", "ext4")
    return "sdb"


def _held_by_dm(r: FakeRoot) -> str:
    r.holder("sdb1", "dm-0", "254:0", "vg-lv")
    return "sdb"


def _swap(r: FakeRoot) -> str:
    r.swap("/dev/sdb1")
    return "sdb"


def _root_disk(r: FakeRoot) -> str:
    (r.base / "sys/block/sda/removable").write_text("1\n")  # even if it claimed to be
    (r.base / "proc/self/mountinfo").write_text("20 1 8:2 / / rw - ext4 /dev/root rw\n")
    return "sda"


def _root_on_lvm(r: FakeRoot) -> str:
    r.disk("sdc", 24, 64 * GIB, parts=(64 * GIB - MIB,))
    r.holder("sdc1", "dm-1", "254:1", "vg-root")
    (r.base / "proc/self/mountinfo").write_text(
        "20 1 254:1 / / rw - ext4 /dev/mapper/vg-root rw\n")
    return "sdc"


def _not_removable(r: FakeRoot) -> str:
    r.disk("nvme0n1", 259, 512 * GIB, bus="nvme", removable=0, vendor="", model="WD Black")
    return "nvme0n1"


def _partition(r: FakeRoot) -> str:
    return "sdb1"


def _too_small(r: FakeRoot) -> str:
    r.disk("sdc", 24, 2 * MIB)
    return "sdc"


def _no_medium(r: FakeRoot) -> str:
    r.disk("sdc", 24, 0, vendor="Generic", model="SD Reader")
    return "sdc"


def _read_only(r: FakeRoot) -> str:
    r.disk("sdc", 24, GIB, ro=1)
    return "sdc"


REFUSALS: dict[str, tuple[Setup, tuple[str, ...]]] = {
    "partition mounted": (_mounted_partition,
                          ("partition /dev/sdb1 is mounted at /media/u/STICK",
                           "umount /media/u/STICK", "--force")),
    "mounted, /proc/mounts only": (_mounted_by_name_only,
                                   ("/dev/sdb1 is mounted at /media/u/my stick",)),
    "disk mounted": (_mounted_whole, ("/dev/sdc is mounted at /mnt/whole",)),
    "mounted through dm": (_mounted_through_dm,
                           ("mounted at /secret through dm-0 (luks-stick)",)),
    "held by dm": (_held_by_dm, ("held by dm-0 (vg-lv)", "--force")),
    "swap": (_swap, ("swap", "swapoff /dev/sdb1")),
    "disk of /": (_root_disk, ("/dev/sda holds /", "--force")),
    "disk of / under LVM": (_root_on_lvm, ("/dev/sdc holds /",)),
    "not removable": (_not_removable, ("/dev/nvme0n1 (nvme) is not a removable disk",
                                       "--force")),
    "partition given": (_partition, ("partition sdb1 of /dev/sdb", "whole disk: /dev/sdb")),
    "too small": (_too_small, ("holds 2.0 MiB, the image needs 3.0 MiB",)),
    "no medium": (_no_medium, ("no medium",)),
    "read-only": (_read_only, ("read-only",)),
}
FORCE_DOES_NOT_HELP = {"partition given", "too small", "no medium", "read-only"}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusal(case, fake, image, capsys):
    setup, words = REFUSALS[case]
    name = setup(fake)
    node = fake.base / "dev" / name
    before = node.read_bytes()
    rc = run(fake, str(node), "--yes", "--image", str(image))
    refused(capsys, rc, *words)
    assert node.read_bytes() == before
    if case in FORCE_DOES_NOT_HELP:
        rc = run(fake, str(node), "--yes", "--force", "--image", str(image))
        refused(capsys, rc, *words)
        assert node.read_bytes() == before


def test_refusals_are_one_line_from_the_command_too(fake, image):
    _mounted_partition(fake)
    p = subprocess.run([sys.executable, str(TOOL), str(fake.base / "dev/sdb"), "--yes",
                        "--image", str(image), "--sysroot", str(fake.base)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "is mounted at /media/u/STICK" in p.stderr


def test_not_confirmed(fake, image, capsys):
    rc = run(fake, str(fake.base / "dev/sdb"), "--image", str(image), ask=lambda _: "y")
    refused(capsys, rc, "not confirmed; nothing was written")
    assert (fake.base / "dev/sdb").read_bytes() == b""


def test_no_terminal_to_ask_on(fake, image, capsys):
    # pytest's stdin is not a terminal, as under a pipe or cron.
    rc = run(fake, str(fake.base / "dev/sdb"), "--image", str(image))
    refused(capsys, rc, "not a terminal", "--yes")


def test_mounted_while_asking(fake, image, capsys):
    def ask(_: str) -> str:
        fake.mount("16:1", "/dev/sdb1", "/media/u/STICK")  # a desktop's automounter
        return "yes"

    rc = run(fake, str(fake.base / "dev/sdb"), "--image", str(image), ask=ask)
    refused(capsys, rc, "mounted at /media/u/STICK")
    assert (fake.base / "dev/sdb").read_bytes() == b""


def test_vanishes_while_asking(fake, image, capsys):
    def ask(_: str) -> str:
        fake.vanish("sdb")
        return "yes"

    rc = run(fake, str(fake.base / "dev/sdb"), "--image", str(image), ask=ask)
    refused(capsys, rc, "vanished before writing; nothing was written")


def test_replaced_while_asking(fake, image, capsys):
    # Pulled and another stick plugged in: the same name and numbers, a new diskseq.
    def ask(_: str) -> str:
        (fake.base / "sys/block/sdb/diskseq").write_text("99\n")
        return "yes"

    rc = run(fake, str(fake.base / "dev/sdb"), "--image", str(image), ask=ask)
    refused(capsys, rc, "vanished before writing")
    assert (fake.base / "dev/sdb").read_bytes() == b""


def test_vanishes_mid_way(fake, image, capsys):
    node = fake.base / "dev/sdb"
    rc = run(fake, str(node), "--yes", "--image", str(image),
             on_chunk=lambda done: fake.vanish("sdb") if done >= MIB else None)
    refused(capsys, rc, "vanished after 1.0 MiB of 3.0 MiB were written", "partial image")


def test_sysfs_entry_vanishes_mid_way(fake, image, capsys):
    # The node lingers (udev is slow) but the kernel has dropped the disk.
    def pull(done: int) -> None:
        if done >= MIB and (fake.base / "sys/block/sdb").exists():
            link = fake.base / "sys/block/sdb"
            shutil.rmtree(link.resolve())
            link.unlink()

    rc = run(fake, str(fake.base / "dev/sdb"), "--yes", "--image", str(image), on_chunk=pull)
    refused(capsys, rc, "vanished after 1.0 MiB")


def test_stand_in_file_vanishes_mid_way(tmp_path, image, capsys):
    stick = tmp_path / "stick.img"
    stick.write_bytes(bytes(8 * MIB))
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(image),
             on_chunk=lambda done: stick.unlink() if stick.exists() else None)
    refused(capsys, rc, "vanished after 256.0 KiB of 3.0 MiB")


def test_io_errors_say_vanished_or_where(fake, image):
    t = flash.find_target(fake.base / "dev/sdb", flash.System(fake.base), stand_in=False)

    def eio() -> int:
        raise OSError(5, "Input/output error")

    with pytest.raises(flash.FlashError, match="write error on .* at byte 4096: Input/output"):
        flash._io(t, fake.base, "write", 4096, 3 * MIB, eio)
    fake.vanish("sdb")
    with pytest.raises(flash.Vanished, match="vanished after 4.0 KiB of 3.0 MiB"):
        flash._io(t, fake.base, "write", 4096, 3 * MIB, eio)


def test_read_back_names_the_first_difference(tmp_path, image):
    stick = tmp_path / "stick.img"
    data = bytearray(image.read_bytes())
    data[MIB + 7] ^= 1
    stick.write_bytes(data)
    t = flash.find_target(stick, flash.System(), stand_in=True)
    with pytest.raises(flash.FlashError, match=f"at byte {MIB + 7}: the stick may be faulty"):
        flash.read_back(t, image, Path("/"), len(data), chunk=CHUNK)


@pytest.mark.parametrize("case", ["missing", "directory", "char device", "plain file",
                                  "no image", "empty image", "the image itself"])
def test_bad_arguments(case, tmp_path, image, capsys):
    dev, img = str(tmp_path / "stick.img"), str(image)
    words: tuple[str, ...] = ()
    (tmp_path / "stick.img").write_bytes(bytes(8 * MIB))
    extra = ["--stand-in"]
    if case == "missing":
        dev, words = "/dev/nonexistent-stick", ("does not exist", "--list")
    elif case == "directory":
        dev, words = str(tmp_path), ("is a directory",)
    elif case == "char device":
        dev, words = "/dev/null", ("not a block device",)
    elif case == "plain file":
        extra, words = [], ("plain file, not a block device", "--stand-in")
    elif case == "no image":
        img, words = str(tmp_path / "none.img"), ("no image at", "make build")
    elif case == "empty image":
        (tmp_path / "empty.img").touch()
        img, words = str(tmp_path / "empty.img"), ("is empty",)
    elif case == "the image itself":
        dev, words = img, ("is the image itself",)
    rc = run(None, dev, *extra, "--yes", "--image", img)
    refused(capsys, rc, *words)


def _python_for_nobody() -> str | None:
    for py in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        try:
            if py and subprocess.run([py, "-c", "pass"], user=65534, capture_output=True,
                                     timeout=30).returncode == 0:
                return py
        except OSError:
            continue
    return None


def test_no_permission(image, capsys):
    d = Path(tempfile.mkdtemp(prefix="flash-perm-"))
    try:
        d.chmod(0o755)
        stick = d / "stick.img"
        stick.write_bytes(bytes(8 * MIB))
        img = d / "lociOS.img"
        shutil.copy(image, img)
        os.chmod(img, 0o644)
        if os.geteuid() != 0:
            stick.chmod(0o444)
            rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(img))
            refused(capsys, rc, "no permission to write", "sudo")
            return
        stick.chmod(0o644)  # root's, so nobody may read it but not write it
        py = _python_for_nobody()
        if py is None:
            pytest.skip("no Python the user nobody may run, to be someone without write access")
        # A copy the user nobody may read: the checkout can sit under a folder only root enters.
        tool = d / "flash.py"
        shutil.copy(TOOL, tool)
        tool.chmod(0o644)
        p = subprocess.run([py, str(tool), str(stick), "--stand-in", "--yes", "--image",
                            str(img)], user=65534, capture_output=True, text=True, timeout=30)
        assert p.returncode == 1, p.stderr
        assert p.stderr.count("\n") == 1 and "no permission to write" in p.stderr
        assert "sudo python3 tools/flash.py" in p.stderr
        assert stick.read_bytes() == bytes(8 * MIB)
    finally:
        shutil.rmtree(d)


# ---- this machine ----------------------------------------------------------------------


def test_finds_the_disk_of_slash_here():
    st = os.stat("/")
    system = flash.System()
    b = system.by_dev.get(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if b is None:
        pytest.skip("/ is not on a block device here (an overlay or a network file system)")
    assert b.disk in system.root_disks()
    t = flash.find_target(Path("/dev") / b.disk, system, stand_in=False)
    with pytest.raises(flash.FlashError, match="holds /"):
        flash.check_target(t, system, Path(__file__), 1, force=False)


# ---- loop devices ----------------------------------------------------------------------


def _loop_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "loop devices are Linux's"
    if os.geteuid() != 0:
        return "making loop devices needs root"
    if shutil.which("losetup") is None:
        return "losetup (util-linux) is not installed"
    return None


class Loops:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.made: list[str] = []

    def make(self, size: int, *, partscan: bool = False, fill: bytes = b"") -> tuple[Path, Path]:
        backing = self.base / f"loop{len(self.made)}.img"
        with open(backing, "wb") as f:
            f.write(fill)
            f.truncate(size)
        p = subprocess.run(["losetup", "--find", "--show", *(["--partscan"] if partscan else []),
                            str(backing)], capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            pytest.skip(f"losetup cannot make a loop device here: {p.stderr.strip()}")
        dev = p.stdout.strip()
        self.made.append(dev)
        return Path(dev), backing

    def close(self) -> None:
        for dev in self.made:
            subprocess.run(["losetup", "--detach", dev], capture_output=True, timeout=30)


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    reason = _loop_reason()
    if reason:
        pytest.skip(reason)
    lo = Loops(tmp_path)
    try:
        yield lo
    finally:
        lo.close()


def test_loop_write_and_verify(loops, image, capsys):
    dev, backing = loops.make(16 * MIB, fill=b"\xee" * MIB)
    rc = run(None, str(dev), "--image", str(image), "--yes")
    refused(capsys, rc, f"{dev} (virtual) is not a removable disk", "--force")
    assert run(None, str(dev), "--image", str(image), "--yes", "--force") == 0
    out = capsys.readouterr().out
    assert f"loop device on {backing}" in out and "verified" in out
    assert backing.read_bytes()[:3 * MIB] == image.read_bytes()


def test_loop_too_small(loops, image, capsys):
    dev, _ = loops.make(2 * MIB)
    rc = run(None, str(dev), "--image", str(image), "--yes", "--force")
    refused(capsys, rc, "holds 2.0 MiB, the image needs 3.0 MiB")


def test_loop_mounted(loops, image, tmp_path, capsys):
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 (e2fsprogs) is not installed")
    dev, backing = loops.make(16 * MIB)
    subprocess.run(["mkfs.ext4", "-q", "-L", "LOOPFS", str(dev)], check=True, timeout=60)
    point = tmp_path / "mnt"
    point.mkdir()
    p = subprocess.run(["mount", str(dev), str(point)], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        pytest.skip(f"cannot mount here: {p.stderr.strip()}")
    try:
        before = backing.read_bytes()
        rc = run(None, str(dev), "--image", str(image), "--yes")
        refused(capsys, rc, f"{dev} is mounted at {point}", f"umount {point}")
        assert run(None, "--list", "--all") == 0
        listing = capsys.readouterr().out
        assert str(dev) in listing and "in use" in listing and "ext4 'LOOPFS'" in listing
        assert backing.read_bytes() == before
    finally:
        subprocess.run(["umount", str(point)], capture_output=True, timeout=60)


def test_loop_partition_mounted(loops, image, tmp_path, capsys):
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 (e2fsprogs) is not installed")
    mbr = bytearray(512)
    mbr[446 + 4] = 0x83
    mbr[446 + 8:446 + 16] = (2048).to_bytes(4, "little") + (30720).to_bytes(4, "little")
    mbr[510:512] = b"\x55\xaa"
    dev, _ = loops.make(16 * MIB, partscan=True, fill=bytes(mbr))
    part = Path(f"{dev}p1")
    if not (Path("/sys/block") / dev.name / part.name).exists() or not part.exists():
        pytest.skip("this kernel shows no partitions on loop devices (no partition table "
                    "support), so a mounted partition cannot be made")
    subprocess.run(["mkfs.ext4", "-q", str(part)], check=True, timeout=60)
    point = tmp_path / "mnt"
    point.mkdir()
    p = subprocess.run(["mount", str(part), str(point)], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        pytest.skip(f"cannot mount here: {p.stderr.strip()}")
    try:
        rc = run(None, str(dev), "--image", str(image), "--yes")
        refused(capsys, rc, f"partition {part} is mounted at {point}")
        rc = run(None, str(part), "--image", str(image), "--yes", "--force")
        refused(capsys, rc, "give the whole disk")
    finally:
        subprocess.run(["umount", str(point)], capture_output=True, timeout=60)


def test_loop_held_open_exclusively_is_busy(loops, image, capsys):
    dev, _ = loops.make(16 * MIB)
    # Another writer holding the disk exclusively (as a mount or LVM does) without /proc
    # or /sys saying so: the exclusive open is the last line of defence.
    fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
    try:
        flash_target = flash.find_target(dev, flash.System(), stand_in=False)
        with pytest.raises(flash.FlashError, match="in use by the kernel"):
            flash._open_target(flash_target, os.O_WRONLY | os.O_EXCL, gone="")
    finally:
        os.close(fd)


# ---- /data carried over ----------------------------------------------------------------
# Real images from tools/build/mkimage.py: an "old" one flashed before, whose /data holds
# the user's files, and "new" ones with another kernel (so another ESP) and a /data of
# their own holding NEW.txt, which must not show up where the stick's /data is kept.

ESP_MIB, DATA_MIB = 40, 4


class Images:
    def __init__(self, base: Path) -> None:
        from tools.build import mkimage

        self.base = base
        loader = base / "BOOTX64.EFI"
        loader.write_bytes(b"MZ" + os.urandom(3000))
        preload = base / "preload"
        preload.mkdir()
        (preload / "NEW.txt").write_text("the new image's own /data\n")
        self.kernels = {}
        for name, esp, data, pre in (("old", ESP_MIB, DATA_MIB, None),
                                     ("new", ESP_MIB, DATA_MIB, preload),
                                     ("bigger", ESP_MIB, 2 * DATA_MIB, None),
                                     ("moved", ESP_MIB + 8, DATA_MIB, None)):
            kernel = base / f"{name}.elf"
            kernel.write_bytes(b"\x7fELF" + os.urandom(20000))
            self.kernels[name] = kernel.read_bytes()
            mkimage.build_image(str(loader), str(kernel), str(base / f"{name}.img"), esp,
                                data_mib=data, preload=str(pre) if pre else None)

    def __getitem__(self, name: str) -> Path:
        return self.base / f"{name}.img"


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Images:
    if any(shutil.which(t) is None for t in ("sgdisk", "mformat", "mcopy", "minfo")):
        pytest.skip("sgdisk and mtools are needed to build images")
    return Images(tmp_path_factory.mktemp("images"))


def _data_of(disk: Path) -> tuple[int, int]:
    from tools import datafs

    with open(disk, "rb") as f:
        part = datafs.find_data(f.fileno())
    return part.offset, part.size


def _files(disk: Path) -> dict[str, bytes]:
    """Every file of the disk's /data and its bytes (ValueError if it does not mount)."""
    from tools import datafs

    fd = os.open(disk, os.O_RDONLY)
    try:
        fs = datafs.open_fs(fd, datafs.find_data(fd))
        out = {}
        for path, _ in datafs.walk_files(fs):
            with fs.open(path, "rb") as f:
                out[path] = f.read()
        fs.unmount()
        return out
    finally:
        os.close(fd)


USER_FILES = {"/notes.txt": b"saved on the stick\n", "/lib/mine.py": b"X = 1\n" * 500}
USER_KIB = (sum(map(len, USER_FILES.values())) + 1023) // 1024


def _put(disk: Path, files: dict[str, bytes]) -> None:
    from tools import datafs

    with open(disk, "r+b") as f:
        fs = datafs.open_fs(f.fileno(), datafs.find_data(f.fileno()))
        for name, data in files.items():
            fs.makedirs(os.path.dirname(name), exist_ok=True)
            with fs.open(name, "wb") as g:
                g.write(data)
        fs.unmount()


def _stick(images: Images, path: Path, *, size: int = 64 * MIB,
           files: dict[str, bytes] | None = None) -> Path:
    """A stick flashed with the old image, the user's files saved in its /data."""
    shutil.copy(images["old"], path)
    with open(path, "r+b") as f:
        f.truncate(size)
    _put(path, USER_FILES if files is None else files)
    return path


def _spliced(image: Path, stick_before: bytes) -> bytes:
    """What the stick should hold after: the image, with the stick's /data in place."""
    off, size = _data_of(image)
    new = image.read_bytes()
    return new[:off] + stick_before[off:off + size] + new[off + size:]


def test_keeps_the_sticks_data(fake, images, capsys):
    node = fake.disk("sdc", 24, 64 * MIB)
    _stick(images, node)
    before = node.read_bytes()
    shown: list[str] = []

    def ask(prompt: str) -> str:
        shown.append(capsys.readouterr().out + prompt)
        return "yes"

    assert run(fake, str(node), "--image", str(images["new"]), ask=ask) == 0
    out = capsys.readouterr().out
    # Said before the question: what it keeps, and how full it is.
    assert f"keeps /data: 2 files, {USER_KIB} KiB;" in shown[0] and "used of 4.0 MiB" in shown[0]
    assert "Everything else on it will be lost" in shown[0]
    after = node.read_bytes()
    want = _spliced(images["new"], before)
    assert after[:len(want)] == want and after[len(want):] == before[len(want):]
    assert _files(node) == USER_FILES  # the user's, not NEW.txt of the image
    # The ESP is the new image's: its kernel, not the old one.
    off, _ = _data_of(images["new"])
    assert after[:off] == images["new"].read_bytes()[:off]
    assert images["new"].read_bytes()[:off] != before[:off]
    digest = hashlib.sha256(want).hexdigest()
    image_digest = hashlib.sha256(images["new"].read_bytes()).hexdigest()
    assert f"have SHA-256 {digest}" in out and f"image (SHA-256 {image_digest})" in out
    assert "its /data (4.0 MiB at byte" in out and "left as it was" in out


def test_a_cut_mid_way_leaves_the_data(tmp_path, images, capsys):
    stick = _stick(images, tmp_path / "stick.img")
    off, size = _data_of(stick)
    before = stick.read_bytes()

    def cut(done: int) -> None:
        # Past the ESP, into what follows /data: as good as the power going then,
        # nothing after runs.
        if done > off:
            raise KeyboardInterrupt

    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["new"]),
             on_chunk=cut)
    assert rc == 130
    after = stick.read_bytes()
    assert after[:off] == images["new"].read_bytes()[:off]  # the new ESP was written
    assert after[off:off + size] == before[off:off + size]
    assert _files(stick) == USER_FILES


def test_no_gpt_or_a_foreign_gpt_gets_the_images_data(tmp_path, images, capsys):
    blank = tmp_path / "blank.img"
    blank.write_bytes(b"\xff" * (64 * MIB))
    foreign = tmp_path / "foreign.img"
    with open(foreign, "wb") as f:
        f.truncate(64 * MIB)
    subprocess.run(["sgdisk", "--new=1:2048:+16M", "--change-name=1:Linux home",
                    "--new=2:0:+8M", "--change-name=2:DATA", str(foreign)], check=True,
                   capture_output=True)
    new = images["new"].read_bytes()
    for stick, why in ((blank, "no GPT"), (foreign, "its GPT has no LOCIDATA partition")):
        assert run(None, str(stick), "--stand-in", "--yes", "--image",
                   str(images["new"])) == 0
        out = capsys.readouterr().out
        assert f"/data: the image's ({stick} has none to keep: {why}" in out
        assert "Everything on it will be lost" in out
        assert stick.read_bytes()[:len(new)] == new
        assert list(_files(stick)) == ["/NEW.txt"]


def test_a_different_layout_is_refused(tmp_path, images, capsys):
    stick = _stick(images, tmp_path / "stick.img")
    before = stick.read_bytes()
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["bigger"]))
    line = refused(capsys, rc, f"{stick} holds a 4.0 MiB /data", "the image's is 8.0 MiB",
                   "mkimage.py --data-mib 4", f"tools/datafs.py {stick} get", "--fresh-data")
    assert "--esp-mib" not in line
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["moved"]))
    refused(capsys, rc, f"--esp-mib {ESP_MIB}", "--fresh-data")
    assert stick.read_bytes() == before


def test_fresh_data_writes_the_images(tmp_path, images, capsys):
    stick = _stick(images, tmp_path / "stick.img")
    assert run(None, str(stick), "--stand-in", "--yes", "--fresh-data", "--image",
               str(images["bigger"])) == 0
    out = capsys.readouterr().out
    assert f"/data: the image's (--fresh-data); {stick}'s is lost (2 files, {USER_KIB} KiB;" in out
    new = images["bigger"].read_bytes()
    assert stick.read_bytes()[:len(new)] == new and _files(stick) == {}
    assert f"have the image's SHA-256 {hashlib.sha256(new).hexdigest()}" in out


def _damage(stick: Path) -> None:
    off, _ = _data_of(stick)
    with open(stick, "r+b") as f:
        f.seek(off)
        f.write(os.urandom(2 * 4096))  # both superblocks


def test_a_damaged_data_is_replaced_only_when_the_user_says(tmp_path, images, capsys):
    stick = _stick(images, tmp_path / "stick.img")
    _damage(stick)
    before = stick.read_bytes()
    off, size = _data_of(stick)
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["new"]))
    refused(capsys, rc, "/data (LOCIDATA, 4.0 MiB) does not mount as littlefs",
            "--fresh-data", f"dd if={stick} of=data-old.bin bs=512 skip={off // 512} "
            f"count={size // 512}")
    prompts: list[str] = []

    def answer(word: str) -> Callable[[str], str]:
        def ask(prompt: str) -> str:
            prompts.append(prompt)
            return word
        return ask

    rc = run(None, str(stick), "--stand-in", "--image", str(images["new"]), ask=answer("no"))
    assert "does not mount as littlefs" in capsys.readouterr().out
    assert rc == 1 and "replace its /data" in prompts[-1]
    assert stick.read_bytes() == before
    assert run(None, str(stick), "--stand-in", "--image", str(images["new"]),
               ask=answer("yes")) == 0
    assert list(_files(stick)) == ["/NEW.txt"]
    _damage(stick)
    assert run(None, str(stick), "--stand-in", "--yes", "--fresh-data", "--image",
               str(images["new"])) == 0
    assert list(_files(stick)) == ["/NEW.txt"]


def test_without_littlefs_python_the_superblock_decides(tmp_path, images, capsys,
                                                        monkeypatch):
    # A plain `sudo python3`: no littlefs-python, only the standard library.
    monkeypatch.setattr(flash, "_datafs", lambda: None)
    stick = _stick(images, tmp_path / "stick.img")
    assert run(None, str(stick), "--stand-in", "--yes", "--image", str(images["new"])) == 0
    assert "keeps /data: littlefs, 4.0 MiB; how full it is shows with" in \
        capsys.readouterr().out
    assert _files(stick) == USER_FILES
    _damage(stick)
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["new"]))
    refused(capsys, rc, "no littlefs superblock", "--fresh-data")


def test_an_image_without_data_is_refused_over_a_stick_with_it(tmp_path, images, image,
                                                               capsys):
    stick = _stick(images, tmp_path / "stick.img")
    before = stick.read_bytes()
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(image))
    refused(capsys, rc, "has no LOCIDATA partition to carry it into", "--fresh-data")
    assert stick.read_bytes() == before


def test_two_data_partitions_are_refused(tmp_path, images, capsys):
    stick = tmp_path / "stick.img"
    with open(stick, "wb") as f:
        f.truncate(64 * MIB)
    subprocess.run(["sgdisk", "--new=1:2048:+8M", "--change-name=1:LOCIDATA",
                    "--new=2:0:+8M", "--change-name=2:LOCIDATA", str(stick)], check=True,
                   capture_output=True)
    rc = run(None, str(stick), "--stand-in", "--yes", "--image", str(images["new"]))
    refused(capsys, rc, "2 partitions named LOCIDATA", "--fresh-data")
    assert run(None, str(stick), "--stand-in", "--yes", "--fresh-data", "--image",
               str(images["new"])) == 0


def test_data_changed_while_asking(tmp_path, images, capsys):
    stick = _stick(images, tmp_path / "stick.img")

    def ask(_: str) -> str:
        _put(stick, {"/other.txt": b"written meanwhile"})
        return "yes"

    rc = run(None, str(stick), "--stand-in", "--image", str(images["new"]), ask=ask)
    refused(capsys, rc, "changed while asking; nothing was written")
    assert _files(stick) == {**USER_FILES, "/other.txt": b"written meanwhile"}


def test_read_back_checks_the_kept_data(tmp_path, images):
    stick = _stick(images, tmp_path / "stick.img")
    keep = _data_of(stick)
    t = flash.find_target(stick, flash.System(), stand_in=True)
    size = images["new"].stat().st_size
    exp = flash.expected_digest(t, images["new"], Path("/"), size, keep, chunk=CHUNK)
    flash.write_image(t, images["new"], Path("/"), force=False, chunk=CHUNK, keep=keep)
    assert flash.read_back(t, images["new"], Path("/"), size, chunk=CHUNK, keep=keep,
                           expected=exp) == exp.digest
    with open(stick, "r+b") as f:  # a byte of the kept /data changes under us
        f.seek(keep[0] + 3 * CHUNK + 5)
        b = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([b[0] ^ 1]))
    at = keep[0] + 3 * CHUNK
    with pytest.raises(flash.FlashError, match=f"kept /data \\(bytes {at} to {at + CHUNK}\\)"):
        flash.read_back(t, images["new"], Path("/"), size, chunk=CHUNK, keep=keep,
                        expected=exp)


@given(size=st.integers(1, 1 << 16), chunk=st.integers(1, 1 << 12), data=st.data())
def test_pieces_cover_the_range_and_split_at_the_kept_one(size, chunk, data):
    keep = None
    if data.draw(st.booleans()):
        off = data.draw(st.integers(0, size - 1))
        keep = (off, data.draw(st.integers(1, size - off)))
    pos = 0
    for at, n, kept in flash._pieces(size, chunk, keep):
        assert at == pos and 0 < n <= chunk
        inside = keep is not None and keep[0] <= at < keep[0] + keep[1]
        assert kept == inside
        if keep is not None:  # never across an edge of the kept range
            assert inside == (keep[0] <= at + n - 1 < keep[0] + keep[1])
        pos += n
    assert pos == size


def test_loop_keeps_data(loops, images, tmp_path, capsys):
    old = _stick(images, tmp_path / "old.img")
    dev, backing = loops.make(64 * MIB, fill=old.read_bytes())
    before = backing.read_bytes()
    assert run(None, str(dev), "--image", str(images["new"]), "--yes", "--force") == 0
    out = capsys.readouterr().out
    assert "keeps /data: 2 files" in out and "verified" in out
    want = _spliced(images["new"], before)
    assert backing.read_bytes()[:len(want)] == want
    assert _files(backing) == USER_FILES
