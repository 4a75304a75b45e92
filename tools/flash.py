#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the LociOS image to a USB stick, then read it back and check it.

    tools/flash.py --list [--all]           the disks that could be the stick
    tools/flash.py /dev/sdX                 write build/lociOS.img to it (asks first)
    tools/flash.py --image IMG --yes DEV    another image, no question (for scripts)
    tools/flash.py --fresh-data DEV         the image's /data too, not the stick's

Before anything is written the device must exist, be a whole disk (not a partition), be
writable and large enough, and — unless --force — be removable (or on USB), hold no
mounted, swap or otherwise claimed partition and not be the disk of `/`. It shows what
will be overwritten (model, size, partitions and their labels) and asks. It then writes
with progress, syncs (fsync, and the block device's buffers flushed), reads the written
range back from the device and compares its SHA-256 with the image's. Every refusal is
one line on stderr and exit status 1.

/data survives: when the target already holds a GPT with a LOCIDATA partition (a stick
flashed before), that partition stays as it is and the image is written around it, so
the user's files are there after and a cut at any moment leaves them untouched. It
must sit where the image's LOCIDATA is, with the same size (else a refusal that says how
to move the files); one that does not mount as littlefs is replaced only if the user
says so (the question, or --fresh-data); --fresh-data writes the image's /data whatever
the stick holds. The read-back then checks the image with the kept partition in place.

What it knows about disks it reads from /sys/block, /proc/self/mountinfo, /proc/swaps
and /dev/disk/by-label; the hidden option --sysroot DIR reads those under DIR instead
(the tests build fake trees there), and a plain file DIR/dev/NAME then stands in for the
block device NAME. A plain file also stands in for a stick with --stand-in. Standard
library only, so `sudo python3 tools/flash.py ...` needs no virtual environment (with
littlefs-python, as in the venv, it also says how full the kept /data is).
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_IMAGE = ROOT / "build" / "lociOS.img"
SECTOR = 512  # /sys/block/*/size counts these, whatever the disk's block size
CHUNK = 4 << 20  # bytes per write; each is synced on a block device, so progress is real
PROGRESS_EVERY = 0.25  # seconds between progress updates on a terminal
PROGRESS_LINE_EVERY = 10.0  # ... and between progress lines when stderr is not one
PROBE_BYTES = 36 << 10  # enough for the FAT, ext2/3/4 and ISO 9660 labels
BLKFLSBUF = 0x1261  # <linux/fs.h>: flush the block device's buffer cache
BLKRRPART = 0x125F  # <linux/fs.h>: re-read the partition table
MIB = 1 << 20
# Errors a block device gives when it has been unplugged.
GONE_ERRNOS = frozenset({errno.ENODEV, errno.ENXIO, errno.ENOENT, errno.EIO, errno.ESHUTDOWN,
                         errno.ENOMEDIUM})


class FlashError(Exception):
    """A refusal or a failure: one line for the user."""


class Vanished(FlashError):
    """The device went away (unplugged) before or while it was written."""


# ---- what /sys, /proc and /dev say ---------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _unescape_mount(s: str) -> str:
    """/proc's octal escapes (`\\040` for a space) decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def _unescape_udev(s: str) -> str:
    """udev's `\\x20` escapes in /dev/disk/by-label names decoded."""
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), s)


@dataclass(frozen=True)
class Block:
    """One entry of /sys/block: a disk, or one of its partitions."""

    name: str
    dev: str  # "major:minor"
    disk: str  # the whole disk's name (its own for a disk)
    size: int  # bytes
    sysdir: Path

    @property
    def is_part(self) -> bool:
        return self.name != self.disk


@dataclass(frozen=True)
class Mount:
    dev: str | None  # "major:minor" (mountinfo), None from /proc/mounts
    source: str
    point: str


@dataclass(frozen=True)
class Use:
    """A reason not to write a disk that --force overrides, and what to do about it."""

    what: str
    hint: str


@dataclass
class Disk:
    name: str
    dev: str
    size: int
    removable: bool  # the kernel's removable flag
    readonly: bool
    vendor: str
    model: str
    transport: str  # usb, nvme, mmc, sata, virtio, scsi, virtual, file, or ""
    parts: list[Block] = field(default_factory=list)
    seq: str = ""  # the kernel's disk sequence number: a new one for each disk plugged in

    @property
    def hotplug(self) -> bool:
        """Counts as removable: the kernel's flag, or on USB (USB hard disks and SSDs,
        and some sticks, report removable=0; an internal eMMC or SATA disk does not
        count)."""
        return self.removable or self.transport == "usb"

    @property
    def description(self) -> str:
        words = " ".join(w for w in (self.vendor, self.model) if w)
        return words or "(no model name)"


def _transport(sysdir: Path) -> str:
    """The bus a disk hangs on, from the device path its /sys/block link points to."""
    parts = Path(os.path.realpath(sysdir)).parts
    below = [i for i in range(1, len(parts)) if parts[i - 1:i + 1] == ("sys", "devices")]
    parts = parts[below[-1] + 1:] if below else ()
    for prefix, name in (("usb", "usb"), ("nvme", "nvme"), ("mmc", "mmc"), ("ata", "sata"),
                         ("virtio", "virtio"), ("virtual", "virtual"), ("host", "scsi")):
        if any(p.startswith(prefix) for p in parts):
            return name
    return ""


class System:
    """A snapshot of the block devices, mounts, swaps and labels under `root`."""

    def __init__(self, root: Path = Path("/")) -> None:
        self.root = root
        self.blocks: dict[str, Block] = {}
        self.by_dev: dict[str, Block] = {}
        sysblock = root / "sys" / "block"
        for d in sorted(sysblock.iterdir()) if sysblock.is_dir() else []:
            self._add(d, d.name)
            for p in sorted(d.iterdir()):
                if (p / "partition").exists():
                    self._add(p, d.name)
        self.mounts = self._mounts()
        self.swaps = self._swaps()
        self.labels = self._udev_labels()

    def _add(self, sysdir: Path, disk: str) -> None:
        dev = _read(sysdir / "dev") or ""
        size = int(_read(sysdir / "size") or 0) * SECTOR
        b = Block(sysdir.name, dev, disk, size, sysdir)
        self.blocks[b.name] = b
        if dev:
            self.by_dev[dev] = b

    def _mounts(self) -> list[Mount]:
        text = _read(self.root / "proc" / "self" / "mountinfo")
        out: list[Mount] = []
        if text is not None:
            for line in text.splitlines():
                f = line.split()
                if "-" not in f[6:]:
                    continue
                sep = f.index("-", 6)
                source = f[sep + 2] if len(f) > sep + 2 else ""
                out.append(Mount(f[2], _unescape_mount(source), _unescape_mount(f[4])))
            return out
        for line in (_read(self.root / "proc" / "mounts") or "").splitlines():
            f = line.split()
            if len(f) >= 2:
                out.append(Mount(None, _unescape_mount(f[0]), _unescape_mount(f[1])))
        return out

    def _swaps(self) -> list[str]:
        lines = (_read(self.root / "proc" / "swaps") or "").splitlines()[1:]
        return [_unescape_mount(f[0]) for f in (ln.split() for ln in lines)
                if len(f) >= 2 and f[1] == "partition"]

    def _udev_labels(self) -> dict[str, str]:
        d = self.root / "dev" / "disk" / "by-label"
        out: dict[str, str] = {}
        for link in sorted(d.iterdir()) if d.is_dir() else []:
            out[Path(os.path.realpath(link)).name] = _unescape_udev(link.name)
        return out

    def node(self, name: str) -> Path:
        return self.root / "dev" / name

    def name_of_source(self, source: str) -> str | None:
        """The block device a mount or swap source names (/dev/sdb1, /dev/mapper/x,
        /dev/disk/by-uuid/...), or None when it names none."""
        if not source.startswith("/dev/"):
            return None
        name = Path(os.path.realpath(self.root / source.lstrip("/"))).name
        return name if name in self.blocks else None

    def block_of_mount(self, m: Mount) -> Block | None:
        if m.dev is not None and m.dev in self.by_dev:
            return self.by_dev[m.dev]
        name = self.name_of_source(m.source)
        return self.blocks[name] if name else None

    def disk(self, name: str) -> Disk:
        b = self.blocks[name]
        d = b.sysdir
        vendor = _read(d / "device" / "vendor") or ""
        model = _read(d / "device" / "model") or _read(d / "device" / "name") or ""
        backing = _read(d / "loop" / "backing_file")
        if backing:
            model = f"loop device on {backing}"
        if re.fullmatch(r"0x[0-9a-f]+", vendor):  # a PCI vendor id (virtio), not a name
            vendor = ""
        parts = sorted((p for p in self.blocks.values() if p.disk == name and p.is_part),
                       key=lambda p: _natural(p.name))
        return Disk(name, b.dev, b.size, _read(d / "removable") == "1", _read(d / "ro") == "1",
                    vendor, model, _transport(d), parts, _read(d / "diskseq") or "")

    def disks(self) -> list[Disk]:
        return [self.disk(b.name) for b in self.blocks.values() if not b.is_part]

    def _lower(self, name: str) -> set[str]:
        """The physical disks under a block device: itself, or what its slaves (device
        mapper, md RAID) are on, to any depth."""
        b = self.blocks.get(name)
        if b is None:
            return set()
        slaves = b.sysdir / "slaves"
        below = sorted(s.name for s in slaves.iterdir()) if slaves.is_dir() else []
        if not below:
            return {b.disk}
        return set().union(*(self._lower(s) for s in below))

    def root_disks(self) -> set[str]:
        """The disks that hold `/` (several under LVM or RAID; none in a container whose
        `/` is an overlay)."""
        found: set[str] = set()
        tops = [m for m in self.mounts if m.point == "/"]
        b = self.block_of_mount(tops[-1]) if tops else None
        if b:
            found |= self._lower(b.name)
        if self.root == Path("/"):
            # In a chroot the mount table does not show the file system `/` lives on,
            # but its device number still names it.
            st = os.stat("/")
            b = self.by_dev.get(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
            if b:
                found |= self._lower(b.name)
        return found

    def uses(self, disk: Disk) -> list[Use]:
        """What holds the disk or one of its partitions: mounts, swap, stacked devices."""
        found: list[Use] = []
        for b in [self.blocks[disk.name], *disk.parts]:
            what = f"/dev/{b.name}" if not b.is_part else f"its partition /dev/{b.name}"
            for p in self._mount_points(b.name):
                found.append(Use(f"{what} is mounted at {p}",
                                 f"unmount it first (umount {p}) or give --force"))
            if any(self.name_of_source(s) == b.name for s in self.swaps):
                found.append(Use(f"{what} is in use as swap",
                                 f"swapoff /dev/{b.name} first or give --force"))
            for h in self._holders(b.name):
                dm = _read(self.blocks[h].sysdir / "dm" / "name") if h in self.blocks else None
                via = f"{h} ({dm})" if dm else h
                points = self._mount_points(h)
                for p in points:
                    found.append(Use(f"{what} is mounted at {p} through {via}",
                                     f"unmount it first (umount {p}) or give --force"))
                if any(self.name_of_source(s) == h for s in self.swaps):
                    found.append(Use(f"{what} is in use as swap through {via}",
                                     f"swapoff /dev/{h} first or give --force"))
                elif not points:
                    found.append(Use(f"{what} is held by {via} (LVM, RAID or an encrypted "
                                     "volume)", "close that first or give --force"))
        return found

    def _mount_points(self, name: str) -> list[str]:
        return [m.point for m in self.mounts
                if (b := self.block_of_mount(m)) is not None and b.name == name]

    def _holders(self, name: str) -> list[str]:
        """Every device stacked on `name` (its holders, their holders, ...)."""
        out: list[str] = []
        todo = [name]
        while todo:
            b = self.blocks.get(todo.pop())
            hd = b.sysdir / "holders" if b else None
            for h in sorted(x.name for x in hd.iterdir()) if hd and hd.is_dir() else []:
                if h not in out:
                    out.append(h)
                    todo.append(h)
        return out

    def label(self, name: str) -> tuple[str, str]:
        """(file system type, label) of a disk or partition: udev's label if there is
        one, else read from the device's first sectors when readable; "" when unknown."""
        fstype, label = _probe(self.node(name))
        return fstype, self.labels.get(name, label)


def _natural(s: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _probe(node: Path) -> tuple[str, str]:
    """The file system type and label in a device's first sectors: FAT, ext2/3/4 and
    ISO 9660 (what sticks usually hold); NTFS and exFAT by type only."""
    try:
        with open(node, "rb") as f:
            head = f.read(PROBE_BYTES)
    except OSError:
        return "", ""

    def text(b: bytes) -> str:
        return b.decode("latin-1").strip(" \0")

    if len(head) >= 0x8028 + 32 and head[0x8001:0x8006] == b"CD001":
        return "iso9660", text(head[0x8028:0x8048])
    if len(head) >= 1024 + 136 and head[1024 + 56:1024 + 58] == b"\x53\xef":
        return "ext4", text(head[1024 + 120:1024 + 136])
    if len(head) >= 512 and head[510:512] == b"\x55\xaa":
        if head[3:11] in (b"NTFS    ", b"EXFAT   "):  # their labels live further in
            return head[3:11].decode().strip().lower(), ""
        for typ_at, label_at in ((82, 71), (54, 43)):
            if head[typ_at:typ_at + 3] == b"FAT":
                label = text(head[label_at:label_at + 11])
                return "vfat", "" if label == "NO NAME" else label
    return "", ""


def human(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


# ---- the target ------------------------------------------------------------------------


@dataclass
class Target:
    path: Path
    disk: Disk
    is_block: bool
    ident: tuple[int, int]  # (st_rdev, 0) of a block device, (st_dev, st_ino) of a file
    in_sysfs: bool  # the disk is one /sys/block lists (always for a block device)


def _ident(st: os.stat_result) -> tuple[int, int]:
    return (st.st_rdev, 0) if stat.S_ISBLK(st.st_mode) else (st.st_dev, st.st_ino)


def find_target(path: Path, system: System, *, stand_in: bool) -> Target:
    """The disk `path` names; refuses what is not a whole disk."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FlashError(f"{path} does not exist (is the stick plugged in? "
                         "tools/flash.py --list shows the candidates)") from None
    except OSError as e:
        raise FlashError(f"cannot look at {path}: {e.strerror}") from None
    if stat.S_ISBLK(st.st_mode):
        dev = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        b = system.by_dev.get(dev)
        if b is None:
            raise FlashError(f"{path} is block device {dev}, which /sys/block does not list")
        in_sysfs = True
    elif stat.S_ISREG(st.st_mode):
        # Under a fake root (--sysroot), ROOT/dev/NAME stands in for the block device NAME.
        fake = (system.root != Path("/") and path.name in system.blocks
                and path.resolve().parent == (system.root / "dev").resolve())
        if not (stand_in or fake):
            raise FlashError(f"{path} is a plain file, not a block device (give --stand-in "
                             "if it stands in for a stick)")
        b = system.blocks[path.name] if fake else None
        in_sysfs = fake
    else:
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a block device"
        raise FlashError(f"{path} is {kind}; give the stick's disk, e.g. /dev/sdb "
                         "(tools/flash.py --list)")
    if b is not None and b.is_part:
        raise FlashError(f"{path} is the partition {b.name} of /dev/{b.disk}; give the whole "
                         f"disk: /dev/{b.disk}")
    if b is not None:
        disk = system.disk(b.name)
    else:
        disk = Disk(path.name, "", st.st_size, True, False, "", "plain file", "file")
    return Target(path, disk, stat.S_ISBLK(st.st_mode), _ident(st), in_sysfs)


def check_target(t: Target, system: System, image: Path, image_size: int, *,
                 force: bool) -> list[Use]:
    """Refuses (FlashError) what must not be written; returns the reasons that --force
    overrode."""
    name = f"/dev/{t.disk.name}" if t.in_sysfs else str(t.path)
    overridable: list[Use] = []
    if t.in_sysfs:
        if t.disk.name in system.root_disks():
            overridable.append(Use(f"{name} holds / (the disk of the running system)",
                                   "that is not the stick; --force overrides"))
        overridable += system.uses(t.disk)
        if not t.disk.hotplug:
            overridable.append(Use(f"{name} ({t.disk.transport or 'unknown bus'}) is not a "
                                   "removable disk", "if it really is the stick, give --force"))
    if overridable and not force:
        raise FlashError(f"{overridable[0].what}; {overridable[0].hint}")
    try:
        same = os.path.samefile(t.path, image)
    except OSError:
        same = False
    if same:
        raise FlashError(f"{t.path} is the image itself")
    image_dev = os.stat(image).st_dev
    holder = system.by_dev.get(f"{os.major(image_dev)}:{os.minor(image_dev)}")
    if t.in_sysfs and holder is not None and holder.disk == t.disk.name:
        raise FlashError(f"the image {image} lives on {name} itself; copy it elsewhere first")
    if t.disk.readonly:
        raise FlashError(f"{name} is read-only (a write-protect switch?)")
    if t.disk.size == 0 and t.in_sysfs:
        raise FlashError(f"{name} has no medium (size 0): insert the stick or card")
    if t.disk.size < image_size:
        raise FlashError(f"{name} holds {human(t.disk.size)}, the image needs "
                         f"{human(image_size)}; use a larger stick")
    if not os.access(t.path, os.R_OK | os.W_OK):
        raise FlashError(_no_permission(t.path))
    return overridable


def _no_permission(path: Path) -> str:
    return (f"no permission to write {path}: run it as root (sudo python3 tools/flash.py "
            f"{path}) or get write access to it")


def still_there(t: Target, system_root: Path) -> bool:
    """The device is the one we checked: its node names the same device (a file the
    same inode) and, for a disk /sys/block lists, its entry is still there with the same
    numbers (a stick pulled and another plugged in as /dev/sdb gets a new diskseq)."""
    try:
        if _ident(os.stat(t.path)) != t.ident:
            return False
    except OSError:
        return False
    if t.in_sysfs:
        d = system_root / "sys" / "block" / t.disk.name
        return _read(d / "dev") == t.disk.dev and (_read(d / "diskseq") or "") == t.disk.seq
    return True


def _target_name(t: Target) -> str:
    return f"/dev/{t.disk.name}" if t.in_sysfs else str(t.path)


def describe(t: Target, system: System, image: Path, image_size: int,
             data: DataPlan | None = None) -> Iterator[str]:
    """What will be overwritten: the disk, its partitions and their labels, what becomes
    of its /data, the image."""
    d = t.disk
    name = _target_name(t)
    size = human(d.size) + (f" ({d.size / 1e9:.1f} GB)" if d.size >= 1e9 else "")
    bits = [d.description, size]
    if d.transport:
        bits.append(d.transport)
    if d.hotplug:
        bits.append("removable")
    yield f"About to overwrite {name}: " + ", ".join(bits)
    if t.in_sysfs or t.is_block:
        fstype, label = system.label(d.name)
        if fstype or label:
            yield f"  whole disk: {_fs(fstype, label)}"
        for p in d.parts:
            fstype, label = system.label(p.name)
            yield f"  {p.name:<12} {human(p.size):>10}  {_fs(fstype, label)}"
        if not d.parts and not (fstype or label):
            yield "  no partitions the kernel knows of"
    for use in system.uses(d) if t.in_sysfs else []:
        yield f"  warning: {use.what}"
    yield from data.lines if data else ()
    lost = "Everything else" if data and data.keep else "Everything"
    yield f"{lost} on it will be lost. The image: {image} ({human(image_size)})."


def _fs(fstype: str, label: str) -> str:
    words = [fstype or "unknown file system"]
    if label:
        words.append(f"'{label}'")
    return " ".join(words)


# ---- /data: the LOCIDATA partition a stick flashed before holds ------------------------

DATA_NAME = "LOCIDATA"  # the GPT name /data is found by (tools/datafs.py's PART_NAME)
LFS_BLOCK = 4096  # tools/datafs.py's BLOCK
# littlefs's superblock entry, named so, comes first in each block of the pair 0/1.
LFS_MAGIC, LFS_MAGIC_AT = b"littlefs", 8


@dataclass(frozen=True)
class DataPlan:
    """What becomes of the target's /data. `keep` is (offset, size) of its LOCIDATA
    partition, left in place while the image is written around it, or None when the
    image's own /data is written; `lines` say which before the question; `replaces` is
    set when a /data that does not mount is to be replaced (the question says so)."""

    keep: tuple[int, int] | None
    lines: tuple[str, ...] = ()
    replaces: bool = False


@dataclass(frozen=True)
class _Region:
    offset: int
    size: int


def _datafs() -> ModuleType | None:
    """tools/datafs.py, or None without littlefs-python (a plain `sudo python3`)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    try:
        from tools import datafs
    except ImportError:
        return None
    return datafs


def _gpt() -> ModuleType | None:
    """port/modules/gpt.py (standard library only, as tools/datafs.py imports it), or
    None when this file runs outside the checkout."""
    modules = str(ROOT / "port" / "modules")
    if modules not in sys.path:
        sys.path.insert(0, modules)
    try:
        import gpt
    except ImportError:
        return None
    return gpt


def _data_parts(fd: int, gpt: ModuleType) -> tuple[list[Any], str]:
    """The LOCIDATA partitions in the GPT of the disk or image open on fd, or [] and
    why there are none."""
    size = os.lseek(fd, 0, os.SEEK_END)
    try:
        parts = gpt.read_table(lambda off, n: os.pread(fd, n, off), size)
    except ValueError as e:
        return [], str(e)
    hits = [p for p in parts if p.name == DATA_NAME]
    return hits, "" if hits else f"its GPT has no {DATA_NAME} partition"


def inspect_data(fd: int, offset: int, size: int) -> tuple[bool, str]:
    """(whether it is a littlefs, what it holds or why not) of the partition at offset:
    its files and use through tools/datafs.py, or without littlefs-python only whether
    littlefs's superblock is there."""
    datafs = _datafs()
    if datafs is None:
        heads = [os.pread(fd, len(LFS_MAGIC), offset + b * LFS_BLOCK + LFS_MAGIC_AT)
                 for b in (0, 1)]
        if LFS_MAGIC in heads:
            return True, (f"littlefs, {human(size)}; how full it is shows with "
                          ".venv/bin/python, which has littlefs-python")
        return False, "no littlefs superblock in its first two blocks"
    try:
        fs = datafs.open_fs(fd, _Region(offset, size))
    except (ValueError, OSError):
        return False, ""  # littlefs's error code says no more than that
    try:
        files, total = datafs.summary(fs)
        used = fs.used_block_count * datafs.BLOCK
    except (datafs.littlefs.LittleFSError, OSError) as e:
        return False, f"littlefs mounts it but cannot read it through: {e}"
    finally:
        fs.unmount()
    return True, f"{files} files, {datafs.kib(total)}; {human(used)} used of {human(size)}"


def _mismatch(name: str, old: Any, new: Any) -> str:
    opts = []
    if old.size != new.size and old.size % MIB == 0:
        opts.append(f"--data-mib {old.size // MIB}")
    if old.offset != new.offset and old.offset > MIB and old.offset % MIB == 0:
        opts.append(f"--esp-mib {old.offset // MIB - 1}")
    build = (f"build the image with tools/build/mkimage.py {' '.join(opts)}" if opts
             else "build the image with the stick's layout")
    return (f"{name} holds a {human(old.size)} /data at byte {old.offset} but the image's "
            f"is {human(new.size)} at byte {new.offset}; {build}, or save the files "
            f"(tools/datafs.py {name} get ...), flash with --fresh-data, and put them back "
            f"(tools/datafs.py {name} put ...)")


def plan_data(t: Target, image: Path, *, fresh: bool, yes: bool) -> DataPlan:
    """Decides what becomes of the target's /data; refuses (FlashError) what would lose
    it without the user saying so."""
    name = _target_name(t)
    gpt = _gpt()
    if gpt is None:
        if fresh:
            return DataPlan(None, ("  /data: the image's (--fresh-data)",))
        raise FlashError(f"no {ROOT / 'port' / 'modules' / 'gpt.py'}, so whether {name} "
                         "holds a /data to keep is unknown: run tools/flash.py of a LociOS "
                         "checkout, or give --fresh-data to write the image's /data")
    with open(image, "rb") as img:
        new_parts, _ = _data_parts(img.fileno(), gpt)
    mounts, what = False, ""
    fd = _open_target(t, os.O_RDONLY, gone="before it could be read; nothing was written")
    try:
        old_parts, why = _data_parts(fd, gpt)
        if len(old_parts) == 1:
            old = old_parts[0]
            mounts, what = inspect_data(fd, old.offset, old.size)
    finally:
        os.close(fd)
    if not old_parts:
        return DataPlan(None, (f"  /data: the image's ({name} has none to keep: {why})",)
                        if new_parts else ())
    if len(old_parts) > 1:
        if fresh:
            return DataPlan(None, (f"  /data: the image's (--fresh-data), over {name}'s "
                                   f"{len(old_parts)} {DATA_NAME} partitions",))
        raise FlashError(f"{name} has {len(old_parts)} partitions named {DATA_NAME}, so "
                         "which is /data is unclear; give --fresh-data to write the "
                         "image's over them")
    held = what if mounts else f"it does not mount as littlefs{_detail(what)}"
    if fresh:
        return DataPlan(None, (f"  /data: the image's (--fresh-data); {name}'s is lost "
                               f"({held})",))
    if len(new_parts) != 1:
        has = (f"no {DATA_NAME} partition to carry it into" if not new_parts else
               f"{len(new_parts)} partitions named {DATA_NAME}, not one to carry it into")
        raise FlashError(f"{name} holds a /data ({held}) but the image {image} has {has}; "
                         f"flash a current image (make image), or save the files "
                         f"(tools/datafs.py {name} get ...) and give --fresh-data")
    new = new_parts[0]
    if (old.offset, old.size) != (new.offset, new.size):
        raise FlashError(_mismatch(name, old, new))
    if mounts:
        return DataPlan((old.offset, old.size),
                        (f"  keeps /data: {what} (left in place; the image is written "
                         "around it)",))
    dd = (f"dd if={name} of=data-old.bin bs={SECTOR} skip={old.offset // SECTOR} "
          f"count={old.size // SECTOR}")
    if yes:
        raise FlashError(f"{name}'s /data ({DATA_NAME}, {human(old.size)}) does not mount "
                         f"as littlefs{_detail(what)}; give --fresh-data to replace it with "
                         f"the image's, or save its bytes first ({dd})")
    return DataPlan(None, (f"  /data: {name}'s does not mount as littlefs{_detail(what)}; "
                           "it is replaced by the image's if you say yes (to save its bytes "
                           f"first: {dd})",), replaces=True)


def _detail(why: str) -> str:
    return f" ({why})" if why else ""


# ---- writing and reading back ----------------------------------------------------------


class Progress:
    """`writing 12.0 MiB / 66.0 MiB 18%` on a terminal (redrawn), a line every
    PROGRESS_LINE_EVERY seconds otherwise; nothing for short jobs off a terminal."""

    def __init__(self, what: str, total: int, out: TextIO | None = None) -> None:
        self.what, self.total = what, total
        self.out = out if out is not None else sys.stderr
        self.tty = self.out.isatty()
        self.start = self.last = time.monotonic()
        self.shown = False

    def __call__(self, done: int) -> None:
        now = time.monotonic()
        every = PROGRESS_EVERY if self.tty else PROGRESS_LINE_EVERY
        if now - self.last < every and done < self.total:
            return
        if not self.tty and done >= self.total and not self.shown:
            return
        self.last = now
        pct = 100 * done // max(self.total, 1)
        rate = done / max(now - self.start, 1e-6) / 1e6
        line = f"{self.what} {human(done)} / {human(self.total)}  {pct}%  {rate:.1f} MB/s"
        if self.tty:
            self.out.write("\r" + line.ljust(60) + ("\n" if done >= self.total else ""))
        else:
            self.out.write(line + "\n")
        self.out.flush()
        self.shown = True


def _open_target(t: Target, flags: int, *, gone: str) -> int:
    try:
        return os.open(t.path, flags | os.O_CLOEXEC)
    except PermissionError:
        raise FlashError(_no_permission(t.path)) from None
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise FlashError(f"{t.path} is in use by the kernel (mounted, swap, LVM or RAID); "
                             "--force overrides") from None
        if e.errno == errno.EROFS:
            raise FlashError(f"{t.path} is read-only (a write-protect switch?)") from None
        if e.errno in GONE_ERRNOS:
            raise Vanished(f"{t.path} vanished {gone}") from None
        raise FlashError(f"cannot open {t.path}: {e.strerror}") from None


def _pieces(size: int, chunk: int, keep: tuple[int, int] | None
            ) -> Iterator[tuple[int, int, bool]]:
    """(offset, length, kept) of the pieces of the first `size` bytes, at most `chunk`
    long, split where the kept range begins and ends; the writer, the expected digest
    and the read-back walk the same pieces."""
    cuts = sorted({0, size, *((keep[0], keep[0] + keep[1]) if keep else ())})
    for a, b in zip(cuts, cuts[1:], strict=False):
        kept = keep is not None and a == keep[0]
        for pos in range(a, b, chunk):
            yield pos, min(chunk, b - pos), kept


@dataclass(frozen=True)
class Expected:
    """What the target must read back when part of it is kept: the SHA-256 of the
    whole range and of each kept piece."""

    digest: str
    kept: tuple[str, ...]


def expected_digest(t: Target, image: Path, root: Path, size: int, keep: tuple[int, int],
                    *, chunk: int = CHUNK) -> Expected:
    """The SHA-256 the target will read back after the write: the image's bytes, with
    the target's own in the kept range (read from it now, before anything is written)."""
    h = hashlib.sha256()
    kept: list[str] = []
    fd = _open_target(t, os.O_RDONLY, gone="before it could be read; nothing was written")
    try:
        progress = Progress("reading the kept /data", keep[1])
        with open(image, "rb") as img:
            for pos, n, is_kept in _pieces(size, chunk, keep):
                if is_kept:
                    os.lseek(fd, pos, os.SEEK_SET)
                    buf = _read_exact(t, root, fd, n, pos, size)
                    if len(buf) != n:
                        raise FlashError(f"{t.path} ends at byte {pos + len(buf)}, inside "
                                         "its /data; nothing was written")
                    kept.append(hashlib.sha256(buf).hexdigest())
                    progress(pos + n - keep[0])
                else:
                    img.seek(pos)
                    buf = img.read(n)
                h.update(buf)
    finally:
        os.close(fd)
    return Expected(h.hexdigest(), tuple(kept))


def write_image(t: Target, image: Path, root: Path, *, force: bool, chunk: int = CHUNK,
                on_chunk: Callable[[int], None] | None = None,
                keep: tuple[int, int] | None = None) -> str:
    """Writes the image to the start of the target and syncs; returns its SHA-256. The
    range `keep` (offset, size) is not written: what the target holds there stays (its
    /data), so no moment of the write leaves it without it."""
    h = hashlib.sha256()
    with open(image, "rb") as img:
        size = os.fstat(img.fileno()).st_size
        to_write = size - (keep[1] if keep else 0)
        flags = os.O_WRONLY | (os.O_EXCL if t.is_block and not force else 0)
        fd = _open_target(t, flags, gone="before writing; nothing was written")
        done = 0
        try:
            if t.is_block:
                end = os.lseek(fd, 0, os.SEEK_END)
                if end < size:
                    raise FlashError(f"{t.path} holds {human(end)}, the image needs "
                                     f"{human(size)}; use a larger stick")
            progress = Progress("writing", to_write)
            for pos, n, kept in _pieces(size, chunk, keep):
                buf = img.read(n)
                h.update(buf)
                if kept:
                    continue
                view = memoryview(buf)
                at = pos
                while view:
                    wrote = _io(t, root, "write", done, to_write,
                                partial(os.pwrite, fd, view, at), at=at)
                    view = view[wrote:]
                    done += wrote
                    at += wrote
                if t.is_block:
                    _io(t, root, "write", done, to_write, partial(os.fdatasync, fd), at=at)
                if on_chunk is not None:
                    on_chunk(done)
                if not still_there(t, root):
                    raise Vanished(_gone(t, done, to_write))
                progress(done)
            _io(t, root, "sync", done, to_write, partial(os.fsync, fd))
            if t.is_block:
                _flush_buffers(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return h.hexdigest()


def _io(t: Target, root: Path, what: str, done: int, size: int, op: Callable[[], int | None],
        *, at: int | None = None) -> int:
    """op(), its OSError made a FlashError: Vanished after `done` of `size` bytes, or an
    error at byte `at` of the disk (`done` when not given)."""
    try:
        return op() or 0
    except OSError as e:
        if not still_there(t, root) or e.errno in (errno.ENODEV, errno.ENXIO, errno.ENOMEDIUM):
            raise Vanished(_gone(t, done, size)) from None
        where = done if at is None else at
        raise FlashError(f"{what} error on {t.path} at byte {where}: {e.strerror}") from None


def _gone(t: Target, done: int, size: int) -> str:
    return (f"{t.path} vanished after {human(done)} of {human(size)} were written; it holds "
            "a partial image: plug it in again and re-run")


def _flush_buffers(fd: int) -> None:
    """Drops the block device's cached pages, so the read-back comes from the device
    (needs root; without it the read-back may come from the page cache)."""
    try:
        fcntl.ioctl(fd, BLKFLSBUF)
    except OSError:
        pass


def read_back(t: Target, image: Path, root: Path, size: int, *, chunk: int = CHUNK,
              keep: tuple[int, int] | None = None, expected: Expected | None = None) -> str:
    """The SHA-256 of the first `size` bytes of the target; refuses at the first byte
    that differs from the image, or, in the kept range, at the first piece whose SHA-256
    is not `expected`'s."""
    h = hashlib.sha256()
    kept = iter(expected.kept if expected else ())
    fd = _open_target(t, os.O_RDONLY, gone="before it could be read back")
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        progress = Progress("reading back", size)
        with open(image, "rb") as img:
            for pos, n, is_kept in _pieces(size, chunk, keep):
                got = _read_exact(t, root, fd, n, pos, size)
                if is_kept:
                    if hashlib.sha256(got).hexdigest() != next(kept, None):
                        raise FlashError(f"what {t.path} reads back of its kept /data (bytes "
                                         f"{pos} to {pos + n}) differs from what it held "
                                         "before the write: the stick may be faulty; try "
                                         "another")
                else:
                    img.seek(pos)
                    want = img.read(n)
                    if got != want:
                        at = pos + _first_difference(got, want)
                        raise FlashError(f"what {t.path} reads back differs from the image "
                                         f"at byte {at}: the stick may be faulty or smaller "
                                         "than it claims; try another")
                h.update(got)
                progress(pos + n)
    finally:
        os.close(fd)
    return h.hexdigest()


def _first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _read_exact(t: Target, root: Path, fd: int, n: int, done: int, size: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        try:
            b = os.read(fd, n - len(out))
        except OSError as e:
            if not still_there(t, root) or e.errno in GONE_ERRNOS:
                raise Vanished(f"{t.path} vanished while being read back") from None
            raise FlashError(f"read error on {t.path} at byte {done + len(out)}: "
                             f"{e.strerror}") from None
        if not b:
            break
        out += b
    return bytes(out)


def _reread_partitions(t: Target) -> None:
    """Tells the kernel the disk's partition table changed (it shows the new one)."""
    if not t.is_block:
        return
    try:
        fd = os.open(t.path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        fcntl.ioctl(fd, BLKRRPART)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- the command -----------------------------------------------------------------------


def list_disks(system: System, *, every: bool, out: TextIO) -> None:
    roots = system.root_disks()
    shown = 0
    for d in system.disks():
        if not every and (d.transport == "virtual" or not d.hotplug or d.name in roots):
            continue
        notes = []
        if d.size == 0:
            notes.append("no medium")
        if d.name in roots:
            notes.append("holds /")
        uses = system.uses(d)
        if uses:
            notes.append("in use")
        if not d.hotplug:
            notes.append("not removable")
        note = f"  ({', '.join(notes)})" if notes else ""
        out.write(f"/dev/{d.name:<10} {human(d.size):>10}  {d.transport or '?':<7} "
                  f"{d.description}{note}\n")
        if not d.parts and d.size:
            fstype, label = system.label(d.name)
            if fstype or label:
                out.write(f"  whole disk: {_fs(fstype, label)}\n")
        for p in d.parts:
            fstype, label = system.label(p.name)
            out.write(f"  {p.name:<12} {human(p.size):>10}  {_fs(fstype, label)}\n")
        shown += 1
    if shown == 0:
        out.write("no removable disk found: plug the stick in (tools/flash.py --list --all "
                  "shows every disk)\n")


def _ask_terminal(prompt: str) -> str:
    if not sys.stdin.isatty():
        raise FlashError("cannot ask for confirmation (stdin is not a terminal); give --yes "
                         "to write without asking")
    try:
        return input(prompt)
    except EOFError:
        return ""


def flash(dev: Path, image: Path, *, system_root: Path = Path("/"), force: bool = False,
          yes: bool = False, stand_in: bool = False, ask: Callable[[str], str] | None = None,
          chunk: int = CHUNK, on_chunk: Callable[[int], None] | None = None,
          out: TextIO | None = None, fresh_data: bool = False) -> str:
    """Checks, asks, writes, syncs and verifies; returns the SHA-256 both have."""
    out = out if out is not None else sys.stdout
    stand_in = stand_in or force
    system = System(system_root)
    t = find_target(dev, system, stand_in=stand_in)
    if not image.is_file():
        raise FlashError(f"no image at {image}: run make build first, or give --image PATH")
    image_size = image.stat().st_size
    if image_size == 0:
        raise FlashError(f"the image {image} is empty")
    warnings = check_target(t, system, image, image_size, force=force)
    data = plan_data(t, image, fresh=fresh_data, yes=yes)
    for line in describe(t, system, image, image_size, data):
        out.write(line + "\n")
    for w in warnings:
        out.write(f"going on because of --force, although {w.what}\n")
    out.flush()
    if not yes:
        also = " and replace its /data" if data.replaces else ""
        answer = (ask or _ask_terminal)(f"Type yes to write it to {dev}{also}: ")
        if answer.strip().lower() != "yes":
            raise FlashError("not confirmed; nothing was written")
    # Between the question and now the stick may have been pulled, or mounted by a desktop.
    if not still_there(t, system_root):
        raise Vanished(f"{dev} vanished before writing; nothing was written")
    system = System(system_root)
    t = find_target(dev, system, stand_in=stand_in)
    check_target(t, system, image, image_size, force=force)
    if plan_data(t, image, fresh=fresh_data, yes=False) != data:
        raise FlashError(f"the /data of {dev} changed while asking; nothing was written: "
                         "run it again")

    expected = None
    if data.keep is not None:
        expected = expected_digest(t, image, system_root, image_size, data.keep, chunk=chunk)
    start = time.monotonic()
    digest = write_image(t, image, system_root, force=force, chunk=chunk, on_chunk=on_chunk,
                         keep=data.keep)
    took = time.monotonic() - start
    if data.keep is None:
        out.write(f"wrote {human(image_size)} to {dev} in {took:.1f} s and synced\n")
    else:
        out.write(f"wrote {human(image_size - data.keep[1])} to {dev} in {took:.1f} s and "
                  f"synced; its /data ({human(data.keep[1])} at byte {data.keep[0]}) was "
                  "left as it was\n")
    out.flush()
    back = read_back(t, image, system_root, image_size, chunk=chunk, keep=data.keep,
                     expected=expected)
    want = expected.digest if expected else digest
    if back != want:
        raise FlashError(f"{dev} reads back SHA-256 {back}, it should have {want}")
    if expected is None:
        out.write(f"verified: the {human(image_size)} read back from {dev} have the image's "
                  f"SHA-256 {digest}\n")
    else:
        out.write(f"verified: the {human(image_size)} read back from {dev} have SHA-256 "
                  f"{back}, that of the image (SHA-256 {digest}) with the stick's /data in "
                  "place of the image's\n")
    _reread_partitions(t)
    out.write(f"done: {dev} holds {image.name}{' and its /data' if expected else ''}; it "
              "can be unplugged\n")
    return back


def main(argv: list[str] | None = None, *, ask: Callable[[str], str] | None = None,
         on_chunk: Callable[[int], None] | None = None, chunk: int = CHUNK) -> int:
    ap = argparse.ArgumentParser(
        prog="tools/flash.py",
        description="Write the LociOS image to a USB stick and check it by reading it back.")
    ap.add_argument("device", nargs="?", type=Path, help="the stick's disk, e.g. /dev/sdb")
    ap.add_argument("--list", action="store_true", help="list the disks that could be the stick")
    ap.add_argument("--all", action="store_true", help="with --list: every disk")
    ap.add_argument("--image", type=Path, default=DEFAULT_IMAGE,
                    help=f"the image to write (default {DEFAULT_IMAGE.relative_to(ROOT)})")
    ap.add_argument("--yes", action="store_true", help="do not ask before writing (scripts)")
    ap.add_argument("--force", action="store_true",
                    help="write even to a disk that is mounted, in use, the disk of / or "
                         "not removable, or to a plain file")
    ap.add_argument("--fresh-data", action="store_true",
                    help="write the image's /data even where the stick has one (its "
                         "files are lost); without it, the stick's /data is kept")
    ap.add_argument("--stand-in", action="store_true",
                    help="the device is a plain file standing in for a stick (testing)")
    ap.add_argument("--sysroot", type=Path, default=Path("/"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        if args.list or args.device is None:
            list_disks(System(args.sysroot), every=args.all, out=sys.stdout)
            if args.device is None and not args.list:
                print("flash: give the stick's disk: tools/flash.py /dev/sdX", file=sys.stderr)
                return 2
            return 0
        flash(args.device, args.image, system_root=args.sysroot, force=args.force,
              yes=args.yes, stand_in=args.stand_in, ask=ask, chunk=chunk, on_chunk=on_chunk,
              fresh_data=args.fresh_data)
    except FlashError as e:
        sys.stdout.flush()
        print(f"flash: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("flash: interrupted (if writing had begun, the stick holds a partial image)",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
