#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Disk benchmark: guest cycles per 4 KiB sequential write and read through the `disk`
module on a scratch disk, under -icount, for each driver: virtio-blk, NVMe (512-byte
blocks, its write guard lifted first), then a USB stick (usb-storage on qemu-xhci, Bulk-
Only Transport: a CBW, the data and a CSW per 4 KiB). The figure varies with host load:
QEMU finishes each request asynchronously while the guest spins on the used ring,
completion queue or event ring, and the spin's instructions are counted. Prints one line
per driver and direction; `bench_disk.py nvme` (or `virtio`, `usb`) runs one driver only."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

BLOCKS = 256  # 4 KiB each: 1 MiB each way

CODE = f"""
import disk, kernel
d = disk.Disk([n for n in disk.devices() if disk.Disk(n).ioctl(4, 0) == 16384][0])
d.writable(True)
b = bytearray(4096)
t = kernel.cycles()
for i in range({BLOCKS}):
    d.writeblocks(i * 8, b)
w = kernel.cycles() - t
t = kernel.cycles()
for i in range({BLOCKS}):
    d.readblocks(i * 8, b)
r = kernel.cycles() - t
print(w // {BLOCKS}, r // {BLOCKS})
"""


def qemu_args(driver: str, disk: Path) -> list[str]:
    if driver == "virtio":
        return ["-drive", f"file={disk},format=raw,if=virtio"]
    if driver == "usb":
        return ["-device", "qemu-xhci,id=xhci",
                "-drive", f"file={disk},format=raw,if=none,id=ub0",
                "-device", "usb-storage,bus=xhci.0,drive=ub0"]
    return ["-drive", f"file={disk},format=raw,if=none,id=nv0",
            "-device", "nvme,serial=bench,drive=nv0"]


def measure(driver: str) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        disk = Path(tmp) / "bench.raw"
        disk.write_bytes(bytes(8 << 20))
        g = Guest(IMAGE, icount=True, extra=qemu_args(driver, disk))
        try:
            g.boot()
            g.raw_enter()
            w, r = g.exec(CODE, timeout=300).decode().split()
        finally:
            g.close()
    return w, r


def main() -> int:
    drivers = sys.argv[1:] or ["virtio", "nvme", "usb"]
    for driver in drivers:
        if driver not in ("virtio", "nvme", "usb"):
            print(f"bench_disk: unknown driver {driver!r} (virtio, nvme or usb)",
                  file=sys.stderr)
            return 2
        w, r = measure(driver)
        print(f"{driver} write 4 KiB: {w} guest cycles")
        print(f"{driver} read 4 KiB:  {r} guest cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
