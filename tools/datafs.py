#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read and write /data (the LOCIDATA partition, littlefs) of a LociOS image or stick.

    tools/datafs.py IMAGE ls [PATH]        tools/datafs.py IMAGE get SRC DEST
    tools/datafs.py IMAGE put SRC DEST     tools/datafs.py IMAGE rm PATH
    tools/datafs.py IMAGE mkdir PATH       tools/datafs.py IMAGE cat PATH
    tools/datafs.py IMAGE info             tools/datafs.py IMAGE format --yes

For the Makefile: `keep FILE` saves the partition's bytes to FILE if it holds any
files (make clean; mkimage.py carries FILE into the next image) and `summary` prints
its file count and size (make distclean says what it deletes).

IMAGE is a disk image file or a block device (/dev/sdX); the partition is found by its
GPT name. Paths inside /data are absolute or relative to its root.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "port" / "modules"))
import gpt  # noqa: E402  (port/modules/gpt.py, the same file the guest freezes)
import littlefs  # noqa: E402

PART_NAME = "LOCIDATA"
# The config the guest mounts /data with (port/modules/storage.py: VfsLfs2 with
# readsize=progsize=512, one disk sector, so the guest's writes are whole sectors). The
# two sides must agree on the program size: littlefs appends commits at offsets aligned
# to it, and a smaller unit on one side would make the other rewrite bytes it did not own.
BLOCK = 4096
LFS_OPTS = dict(read_size=512, prog_size=512, lookahead_size=32, block_cycles=100,
                cache_size=512, name_max=255,
                # Its lfs2 is v2.8, on-disk 2.1; pin that so a newer host library
                # never writes a minor version the guest refuses.
                disk_version=0x00020001)


class RegionContext(littlefs.UserContext):
    """littlefs block I/O on a byte range of an open file or device."""

    def __init__(self, fd, offset, size):
        self.fd, self.offset, self.in_size = fd, offset, size

    def read(self, cfg, block, off, size):
        return os.pread(self.fd, size, self.offset + block * cfg.block_size + off)

    def prog(self, cfg, block, off, data):
        os.pwrite(self.fd, data, self.offset + block * cfg.block_size + off)
        return 0

    def erase(self, cfg, block):
        # littlefs does not need erased bytes to read as 0xff; skipping the write keeps
        # a USB stick's wear and a put's time down.
        return 0

    def sync(self, cfg):
        os.fsync(self.fd)
        return 0


def disk_size(fd):
    return os.lseek(fd, 0, os.SEEK_END)  # works for block devices as well as files


def find_data(fd):
    """The LOCIDATA partition of the disk open on fd (ValueError if none)."""
    size = disk_size(fd)
    return gpt.find(gpt.read_table(lambda off, n: os.pread(fd, n, off), size), PART_NAME)


def open_fs(fd, part, fresh=False):
    """A LittleFS on the partition; fresh formats it first."""
    if part.size % BLOCK:
        raise ValueError(f"{PART_NAME} is {part.size} bytes, not whole {BLOCK}-byte blocks")
    fs = littlefs.LittleFS(RegionContext(fd, part.offset, part.size), mount=False,
                           block_size=BLOCK, block_count=part.size // BLOCK, **LFS_OPTS)
    if fresh:
        fs.format()
    try:
        fs.mount()
    except littlefs.LittleFSError as e:
        raise ValueError(f"{PART_NAME} does not hold a littlefs (mount: {e}); "
                         "`datafs.py IMAGE format --yes` makes an empty one") from None
    return fs


def _p(path):
    path = "/" + path.strip("/")
    return path


def walk_files(fs):
    """(path, size) of every file."""
    for top, _dirs, files in fs.walk("/"):
        for f in files:
            p = top.rstrip("/") + "/" + f
            yield p, fs.stat(p).size


def summary(fs):
    files = list(walk_files(fs))
    return len(files), sum(s for _, s in files)


def put_tree(fs, src, dest):
    """Copy host file or directory src to dest in fs."""
    src = Path(src)
    if src.is_dir():
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src).as_posix()
            target = _p(dest + "/" + rel)
            if path.is_dir():
                fs.makedirs(target, exist_ok=True)
            else:
                fs.makedirs(os.path.dirname(target) or "/", exist_ok=True)
                with fs.open(target, "wb") as f:
                    f.write(path.read_bytes())
        return
    target = _p(dest)
    try:
        if fs.stat(target).type == littlefs.LFSStat.TYPE_DIR:
            target = target.rstrip("/") + "/" + src.name
    except littlefs.LittleFSError:
        pass
    with fs.open(target, "wb") as f:
        f.write(src.read_bytes())


def _is_dir(fs, path):
    return fs.stat(path).type == littlefs.LFSStat.TYPE_DIR


def kib(n):
    return f"{(n + 1023) // 1024} KiB"


def keep(fd, image, dest):
    try:
        part = find_data(fd)
    except ValueError:
        return  # an image from before /data, or no GPT: nothing of the user's to keep
    try:
        fs = open_fs(fd, part)
        n, total = summary(fs)
        fs.unmount()
        what = f"{n} files, {kib(total)}"
    except (ValueError, littlefs.LittleFSError):
        n, what = -1, "not a readable littlefs; its raw bytes"
    if n == 0:
        return
    if os.path.exists(dest):
        raise ValueError(f"{dest} already exists (an older /data); move it away or put "
                         "its files back first, so neither copy is lost")
    tmp = dest + ".tmp"
    with open(tmp, "wb") as f:
        f.write(os.pread(fd, part.size, part.offset))
    os.replace(tmp, dest)
    print(f"kept /data of {image} ({what}) in {dest}")


def cmd(fs, args, out):
    c = args.command
    if c == "ls":
        path = _p(args.path or "/")
        if not _is_dir(fs, path):
            print(f"{fs.stat(path).size:10d}  {path}", file=out)
            return
        for st in fs.scandir(path):
            kind = "/" if st.type == littlefs.LFSStat.TYPE_DIR else ""
            size = "" if kind else st.size
            print(f"{size:>10}  {st.name}{kind}", file=out)
    elif c == "get":
        data = fs.open(_p(args.src), "rb").read()
        dest = Path(args.dest)
        if dest.is_dir():
            dest = dest / os.path.basename(_p(args.src))
        dest.write_bytes(data)
    elif c == "put":
        put_tree(fs, args.src, args.dest)
    elif c == "rm":
        fs.remove(_p(args.path), recursive=args.recursive)
    elif c == "mkdir":
        fs.makedirs(_p(args.path), exist_ok=True)
    elif c == "cat":
        out.flush()
        with fs.open(_p(args.path), "rb") as f:
            sys.stdout.buffer.write(f.read())
    elif c == "info":
        n, total = summary(fs)
        used = fs.used_block_count
        print(f"{PART_NAME}: littlefs, {fs.block_count} blocks of {BLOCK} bytes, "
              f"{used} used; {n} files, {total} bytes", file=out)
    elif c == "summary":
        n, total = summary(fs)
        print(f"{n} files, {kib(total)}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", help="disk image file or block device")
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("ls").add_argument("path", nargs="?")
    for name in ("get", "put"):
        s = sub.add_parser(name)
        s.add_argument("src")
        s.add_argument("dest")
    s = sub.add_parser("rm")
    s.add_argument("path")
    s.add_argument("-r", "--recursive", action="store_true")
    sub.add_parser("mkdir").add_argument("path")
    sub.add_parser("cat").add_argument("path")
    sub.add_parser("info")
    sub.add_parser("summary")
    sub.add_parser("keep").add_argument("file")
    sub.add_parser("format").add_argument("--yes", action="store_true",
                                          help="really erase every file in /data")
    args = ap.parse_args(argv)
    writes = args.command in ("put", "rm", "mkdir", "format")
    try:
        fd = os.open(args.image, os.O_RDWR if writes else os.O_RDONLY)
    except OSError as e:
        print(f"datafs.py: error: {args.image}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        if args.command == "keep":
            keep(fd, args.image, args.file)
            return 0
        part = find_data(fd)
        if args.command == "format":
            if not args.yes:
                print(f"datafs.py: format erases every file in /data of {args.image}; "
                      "run again with --yes", file=sys.stderr)
                return 2
            open_fs(fd, part, fresh=True).unmount()
            print(f"datafs.py: formatted {PART_NAME} of {args.image}")
            return 0
        fs = open_fs(fd, part)
        cmd(fs, args, sys.stdout)
        fs.unmount()
    except littlefs.LittleFSError as e:
        print(f"datafs.py: error: {args.command}: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"datafs.py: error: {args.image}: {e}", file=sys.stderr)
        return 1
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
