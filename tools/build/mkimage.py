#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the LociOS disk image: GPT (with a protective MBR), an EFI system partition
from 1 MiB, FAT32, holding \\EFI\\BOOT\\BOOTX64.EFI and \\LOCIOS\\KERNEL.ELF, then the
LOCIDATA partition (/data, littlefs). The same file boots in QEMU and, written with dd,
from a USB stick.

Rebuilding never loses /data: if OUTPUT already has a LOCIDATA partition (or
OUTPUT-minus-.img-data.keep, which `make clean` leaves, exists) its bytes go into the
new image unchanged.

    tools/build/mkimage.py --loader build/boot/BOOTX64.EFI --kernel build/kernel.elf -o IMG

Needs sgdisk (gdisk) and mtools; no root, no loop devices.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools import datafs  # noqa: E402

SECTOR = 512
MIB = 1 << 20
ESP_START_MIB = 1
# GPT keeps a backup header and table in the last 33 sectors; leave a whole MiB.
TAIL_MIB = 1
DEFAULT_ESP_MIB = 64
# edk2's FAT driver (and the FAT spec) call a volume FAT32 only from this many clusters.
FAT32_MIN_CLUSTERS = 65525
ESP_TYPE = "EF00"
DEFAULT_DATA_MIB = 32
# 8300, Linux filesystem data: partition tools show it as a plain data partition and no
# OS treats it as its own. We find it by its name (LOCIDATA), not by type, so a project
# GUID would buy nothing but an "unknown type" in gdisk and lsblk.
DATA_TYPE = "8300"
DATA_NAME = datafs.PART_NAME
LOADER_PATH = ("EFI", "BOOT", "BOOTX64.EFI")
KERNEL_PATH = ("LOCIOS", "KERNEL.ELF")
OPTIONS_PATH = ("LOCIOS", "OPTIONS.TXT")
TOOLS = {"sgdisk": "gdisk", "mformat": "mtools", "mmd": "mtools", "mcopy": "mtools",
         "minfo": "mtools"}


class ImageError(Exception):
    pass


def _check_tools():
    missing = sorted({pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None})
    if missing:
        raise ImageError("missing host tools; install the Debian/Ubuntu packages: "
                         "sudo apt-get install " + " ".join(missing))


def _run(cmd):
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1", MTOOLSRC=os.devnull)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        raise ImageError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n"
                         f"{p.stdout.strip()}")
    return p.stdout


def fat_cluster_count(minfo_text):
    """Data clusters of a FAT32 volume, from `minfo` output."""
    def field(name):
        m = re.search(rf"^{re.escape(name)}[:=]\s*(\d+)", minfo_text, re.M)
        if not m:
            raise ImageError(f"minfo output has no {name!r} field")
        return int(m.group(1))
    total = field("big size")
    overhead = field("reserved (boot) sectors") + field("fats") * field("Big fatlen")
    return (total - overhead) // field("cluster size")


def keep_path(out):
    """Where `make clean` saves /data of image `out`: build/lociOS.img ->
    build/lociOS-data.keep."""
    base = out[:-4] if out.endswith(".img") else out
    return base + "-data.keep"


def old_data(out):
    """(bytes, where from) of the /data partition to carry into the new image, or
    (None, None) for a fresh one."""
    if os.path.exists(out):
        with open(out, "rb") as f:
            try:
                part = datafs.find_data(f.fileno())
            except ValueError:
                part = None  # an image from before /data existed, or not an image
            if part is not None:
                f.seek(part.offset)
                return f.read(part.size), out
    keep = keep_path(out)
    if os.path.exists(keep):
        with open(keep, "rb") as f:
            return f.read(), keep
    return None, None


def fresh_data(data_mib, preload):
    """A new littlefs of data_mib MiB, holding the files of host folder preload."""
    size = data_mib * MIB
    with tempfile.TemporaryFile() as f:
        f.truncate(size)
        fd = f.fileno()
        fs = datafs.open_fs(fd, _Region(0, size), fresh=True)
        if preload:
            datafs.put_tree(fs, preload, "/")
        fs.unmount()
        return os.pread(fd, size, 0)


class _Region:
    def __init__(self, offset, size):
        self.offset, self.size = offset, size


def build_image(loader, kernel, out, esp_mib=DEFAULT_ESP_MIB, options=None, extra=(),
                data_mib=DEFAULT_DATA_MIB, preload=None):
    """Writes the image to `out`; `kernel` and `options` (the boot options file) may be
    None; `extra` is (source file, ESP path like "LOCIOS/LOADER.EFI") pairs, for test
    images; `preload` a host folder copied into /data of a fresh image. Returns the FAT
    cluster count."""
    _check_tools()
    if preload is not None and not os.path.isdir(preload):
        raise ImageError(f"--data {preload}: not a folder")
    data, data_from = old_data(out)
    if data is not None:
        if len(data) != data_mib * MIB:
            raise ImageError(
                f"{data_from} holds a {len(data) // MIB} MiB /data but the new image's is "
                f"{data_mib} MiB; build with --data-mib {len(data) // MIB}, or save the "
                f"files (tools/datafs.py {data_from} get ...), move {data_from} away, "
                "build, and put them back")
        if preload is not None:
            raise ImageError(f"--data fills only a fresh /data, but {data_from} has one "
                             f"to keep; add files with tools/datafs.py {out} put")
    else:
        data = fresh_data(data_mib, preload)
    files = [(loader, LOADER_PATH)] + ([(kernel, KERNEL_PATH)] if kernel else [])
    files += [(options, OPTIONS_PATH)] if options else []
    files += [(src, tuple(dest.upper().split("/"))) for src, dest in extra]
    for path, _ in files:
        if not os.path.isfile(path):
            raise ImageError(f"{path}: no such file")
    payload = sum(os.path.getsize(path) for path, _ in files)
    # FAT tables, directories and slack take a few MiB of the partition.
    if payload > (esp_mib - 4) * MIB:
        raise ImageError(f"loader + kernel are {payload} bytes; they do not fit a "
                         f"{esp_mib} MiB ESP (use --esp-mib)")
    esp_sectors = esp_mib * MIB // SECTOR
    first = ESP_START_MIB * MIB // SECTOR
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".mkimage-")
    os.close(fd)
    try:
        with open(tmp, "wb") as f:
            f.truncate((ESP_START_MIB + esp_mib + data_mib + TAIL_MIB) * MIB)
        dfirst = first + esp_sectors
        dlast = dfirst + data_mib * MIB // SECTOR - 1
        _run(["sgdisk", "--clear", f"--new=1:{first}:{first + esp_sectors - 1}",
              "--typecode=1:" + ESP_TYPE, "--change-name=1:EFI system partition",
              f"--new=2:{dfirst}:{dlast}", "--typecode=2:" + DATA_TYPE,
              "--change-name=2:" + DATA_NAME, tmp])
        with open(tmp, "r+b") as f:
            f.seek(dfirst * SECTOR)
            f.write(data)
        part = f"{tmp}@@{ESP_START_MIB}M"
        _run(["mformat", "-i", part, "-F", "-c", "1", "-T", str(esp_sectors),
              "-H", str(first), "-v", "LOCIOS", "::"])
        clusters = fat_cluster_count(_run(["minfo", "-i", part, "::"]))
        if clusters < FAT32_MIN_CLUSTERS:
            raise ImageError(f"the ESP got {clusters} FAT32 clusters; firmware needs at "
                             f"least {FAT32_MIN_CLUSTERS} (make it bigger with --esp-mib)")
        made = set()
        for src, dest in files:
            for depth in range(1, len(dest)):
                folder_path = "::/" + "/".join(dest[:depth])
                if folder_path not in made:
                    _run(["mmd", "-i", part, folder_path])
                    made.add(folder_path)
            _run(["mcopy", "-i", part, src, "::/" + "/".join(dest)])
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    if data_from == keep_path(out):
        # Its bytes are in the new image now; a second copy would come back later and
        # shadow newer files.
        os.unlink(data_from)
    if data_from:
        print(f"mkimage.py: /data carried over from {data_from}")
    return clusters


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loader", required=True, help="sealed BOOTX64.EFI")
    ap.add_argument("--kernel", help="kernel ELF (leave out only to build an image "
                    "that tests the loader's missing-kernel message)")
    ap.add_argument("--options", help="boot options file, copied to \\LOCIOS\\OPTIONS.TXT "
                    "(words like heap_percent=50; see boot/PROTOCOL.md)")
    ap.add_argument("--extra", action="append", default=[], metavar="FILE=ESP/PATH",
                    help="also copy FILE to ESP/PATH on the ESP (test images)")
    ap.add_argument("-o", "--output", required=True, help="disk image to write")
    ap.add_argument("--esp-mib", type=int, default=DEFAULT_ESP_MIB,
                    help="ESP size in MiB (default %(default)s)")
    ap.add_argument("--data-mib", type=int, default=DEFAULT_DATA_MIB,
                    help="LOCIDATA (/data) size in MiB (default %(default)s)")
    ap.add_argument("--data", metavar="DIR",
                    help="copy the files of DIR into /data of a fresh image")
    args = ap.parse_args(argv)
    try:
        extra = [tuple(e.split("=", 1)) for e in args.extra]
        if any(len(e) != 2 or not e[1] for e in extra):
            raise ImageError("--extra takes FILE=ESP/PATH, e.g. x.efi=LOCIOS/LOADER.EFI")
        if args.data_mib < 1:
            raise ImageError("--data-mib must be at least 1")
        build_image(args.loader, args.kernel, args.output, args.esp_mib, args.options,
                    extra, args.data_mib, args.data)
    except (OSError, ValueError, ImageError) as e:
        print(f"mkimage.py: error: {e}", file=sys.stderr)
        return 1
    print(f"mkimage.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
