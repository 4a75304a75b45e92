#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Build the LociOS disk image: GPT (with a protective MBR), one EFI system partition
from 1 MiB, FAT32, holding \\EFI\\BOOT\\BOOTX64.EFI and \\LOCIOS\\KERNEL.ELF. The same
file boots in QEMU and, written with dd, from a USB stick.

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

SECTOR = 512
MIB = 1 << 20
ESP_START_MIB = 1
# GPT keeps a backup header and table in the last 33 sectors; leave a whole MiB.
TAIL_MIB = 1
DEFAULT_ESP_MIB = 64
# edk2's FAT driver (and the FAT spec) call a volume FAT32 only from this many clusters.
FAT32_MIN_CLUSTERS = 65525
ESP_TYPE = "EF00"
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


def build_image(loader, kernel, out, esp_mib=DEFAULT_ESP_MIB, options=None, extra=()):
    """Writes the image to `out`; `kernel` and `options` (the boot options file) may be
    None; `extra` is (source file, ESP path like "LOCIOS/LOADER.EFI") pairs, for test
    images. Returns the FAT cluster count."""
    _check_tools()
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
            f.truncate((ESP_START_MIB + esp_mib + TAIL_MIB) * MIB)
        _run(["sgdisk", "--clear", f"--new=1:{first}:{first + esp_sectors - 1}",
              "--typecode=1:" + ESP_TYPE, "--change-name=1:EFI system partition", tmp])
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
    args = ap.parse_args(argv)
    try:
        extra = [tuple(e.split("=", 1)) for e in args.extra]
        if any(len(e) != 2 or not e[1] for e in extra):
            raise ImageError("--extra takes FILE=ESP/PATH, e.g. x.efi=LOCIOS/LOADER.EFI")
        build_image(args.loader, args.kernel, args.output, args.esp_mib, args.options,
                    extra)
    except (OSError, ImageError) as e:
        print(f"mkimage.py: error: {e}", file=sys.stderr)
        return 1
    print(f"mkimage.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
