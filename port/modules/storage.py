# SPDX-License-Identifier: MIT
# The user's data partition: LOCIDATA, littlefs, mounted at /data when the VM starts.
#
# The disk drivers (module `disk`) speak 512-byte sectors; littlefs wants erase blocks.
# A Partition is the window of one disk that holds LOCIDATA, in 4 KiB blocks, with the
# block-device protocol MicroPython's VFS calls (readblocks/writeblocks with an offset,
# ioctl). littlefs is mounted with 512-byte read and program units, so almost every
# request is whole sectors; the disk merges the rest into the sectors they touch.
import sys

import vfs

SECTOR = 512
BLOCK = 4096
NAME = "LOCIDATA"
MOUNT = "/data"

# Block-device ioctl numbers (MicroPython's extended block protocol).
_INIT, _DEINIT, _SYNC, _COUNT, _SIZE, _ERASE = 1, 2, 3, 4, 5, 6


class Partition:
    """Blocks of BLOCK bytes over sectors [first, first + sectors) of `dev`."""

    def __init__(self, dev, first, sectors, where="disk"):
        self.dev = dev
        self.first = first
        self.blocks = sectors * SECTOR // BLOCK
        self.where = where

    def _span(self, block, off, n):
        pos = block * BLOCK + off
        if block < 0 or off < 0 or pos + n > self.blocks * BLOCK:
            raise OSError(22, "%s: bytes %d..%d are outside the partition (%d bytes)"
                          % (self.where, pos, pos + n, self.blocks * BLOCK))
        return pos

    # The disk takes a byte offset itself (it merges partial sectors), so a request
    # is passed through as the sector it starts in plus the offset into it.
    def readblocks(self, block, buf, off=0):
        pos = self._span(block, off, len(buf))
        if len(buf):
            self.dev.readblocks(self.first + pos // SECTOR, buf, pos % SECTOR)

    def writeblocks(self, block, buf, off=0):
        pos = self._span(block, off, len(buf))
        if len(buf):
            self.dev.writeblocks(self.first + pos // SECTOR, buf, pos % SECTOR)

    def ioctl(self, op, arg):
        if op == _COUNT:
            return self.blocks
        if op == _SIZE:
            return BLOCK
        if op == _SYNC:
            self.dev.ioctl(_SYNC, 0)
            return 0
        if op in (_INIT, _DEINIT, _ERASE):
            return 0
        return None


class _Bytes:
    """read(offset, n) over a disk's sectors, for the GPT parser."""

    def __init__(self, dev):
        self.dev = dev

    def __call__(self, offset, n):
        lo = offset // SECTOR
        hi = (offset + n + SECTOR - 1) // SECTOR
        buf = bytearray((hi - lo) * SECTOR)
        self.dev.readblocks(lo, buf)
        skip = offset - lo * SECTOR
        return bytes(memoryview(buf)[skip:skip + n])


def find(name=NAME):
    """(device name, Partition) of the first disk whose GPT has a partition `name`, or
    None. A disk whose GPT does not parse is passed over (most disks are not ours). A
    disk that may be written comes before one that is read-only until made writable
    (an internal NVMe drive): the stick LociOS runs from is where its data belongs."""
    import disk
    import gpt

    guarded = None
    for dev_name in disk.devices():
        dev = disk.Disk(dev_name)
        if dev.ioctl(_SIZE, 0) != SECTOR:
            continue
        try:
            parts = gpt.read_table(_Bytes(dev), dev.ioctl(_COUNT, 0) * SECTOR)
            p = gpt.find(parts, name)
        except (ValueError, OSError):
            continue
        where = "%s partition %d (%s)" % (dev_name, p.index, name)
        found = dev_name, Partition(dev, p.first_lba, p.last_lba - p.first_lba + 1, where)
        if dev.writable():
            return found
        if guarded is None:
            guarded = found
    return guarded


def exists(path):
    """Whether path names a file or directory (os has no exists())."""
    import os

    try:
        os.stat(path)
        return True
    except OSError:
        return False


mounted = None  # "virtio0 partition 2 (LOCIDATA)" once /data is mounted
_part = None     # its Partition


def sync():
    """Asks the disk under /data to make what it was given durable (a write cache)."""
    if _part is not None:
        _part.ioctl(_SYNC, 0)


def mount(quiet=False):
    """Mount LOCIDATA at /data and put /data/lib and /data on sys.path. Returns True when
    mounted; prints why not otherwise (the machine goes on without /data)."""
    global mounted
    if mounted:
        return True
    try:
        found = find()
    except ImportError:
        return False  # a kernel built without disk drivers
    if found is None:
        if not quiet:
            print("data: no LOCIDATA partition on any disk; /data is not mounted")
        return False
    dev_name, part = found
    # littlefs writes even to mount (it may finish an interrupted commit), so a disk that
    # is read-only until made writable is mounted read-only.
    ro = not part.dev.writable()
    try:
        fs = vfs.VfsLfs2(part, readsize=SECTOR, progsize=SECTOR)
        vfs.mount(fs, MOUNT, readonly=ro)
    except OSError as e:
        print("data: %s does not mount as littlefs (%s); /data is not mounted."
              % (part.where, e))
        print("      storage.format() erases it and makes an empty one.")
        return False
    global _part
    mounted, _part = part.where, part
    for p in (MOUNT + "/lib", MOUNT):
        if p not in sys.path:
            sys.path.append(p)
    if not quiet:
        print("data: %s mounted at %s, %d KiB%s" % (
            part.where, MOUNT, part.blocks * BLOCK // 1024,
            ", read-only (disk.Disk(%r).writable(True), then storage.remount())" % dev_name
            if ro else ""))
    return True


def remount():
    """Mount /data again (after disk.Disk(name).writable(True), say)."""
    global mounted, _part
    if mounted:
        vfs.umount(MOUNT)
        mounted = _part = None
    return mount()


def format(yes=False):
    """Erase LOCIDATA and make an empty littlefs on it (asks unless yes=True)."""
    found = find()
    if found is None:
        raise OSError(19, "no LOCIDATA partition on any disk")
    _, part = found
    if not yes:
        answer = input("erase everything on %s? type yes: " % part.where)
        if answer.strip() != "yes":
            print("not formatted")
            return False
    global mounted
    if mounted:
        vfs.umount(MOUNT)
        mounted = None
    vfs.VfsLfs2.mkfs(part, readsize=SECTOR, progsize=SECTOR)
    return mount()
