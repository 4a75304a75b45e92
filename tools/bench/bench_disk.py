#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Disk benchmark through the `disk` module on a scratch disk, for each driver: virtio-blk,
NVMe (512-byte blocks, its write guard lifted first), then a USB stick (usb-storage on
qemu-xhci, Bulk-Only Transport: a CBW, the data and a CSW per 4 KiB). Four passes of 4 KiB
requests: sequential write, sequential read, then random write and random read (the same
number of requests at 4 KiB slots drawn from a fixed generator over the whole disk).

Each driver boots twice: under -icount for guest cycles per 4 KiB, and under plain TCG
for MB/s of wall time (the guest's microsecond clock, which follows the host's). Neither
figure repeats exactly: QEMU finishes each request asynchronously while the guest spins
on the used ring, completion queue or event ring, and a busy host makes that spin longer.
Prints one line per driver and pass; `bench_disk.py nvme` (or `virtio`, `usb`) runs one
driver only."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest

DISK_MIB = 8
REQUESTS = 256  # 4 KiB each: 1 MiB a pass
PASSES = ("seq write", "seq read", "random write", "random read")

# One line out: per pass, guest cycles and microseconds for all REQUESTS.
CODE = f"""
import disk, kernel, time
d = disk.Disk([n for n in disk.devices() if disk.Disk(n).ioctl(4, 0) == {DISK_MIB << 11}][0])
d.writable(True)
b = bytearray(4096)
slots = {DISK_MIB << 8}
s = 12345
rnd = []
for i in range({REQUESTS}):
    s = (s * 1103515245 + 12345) & 0x7FFFFFFF
    rnd.append((s >> 8) % slots * 8)
seq = [i * 8 for i in range({REQUESTS})]
out = []
for order, op in ((seq, d.writeblocks), (seq, d.readblocks), (rnd, d.writeblocks),
                  (rnd, d.readblocks)):
    t, u = kernel.cycles(), time.ticks_us()
    for blk in order:
        op(blk, b)
    out.append((kernel.cycles() - t, time.ticks_diff(time.ticks_us(), u)))
print(' '.join('%d,%d' % c for c in out))
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


def measure(driver: str, icount: bool) -> list[tuple[int, int]]:
    """[(guest cycles, microseconds)] of the four passes, REQUESTS each."""
    with tempfile.TemporaryDirectory() as tmp:
        disk = Path(tmp) / "bench.raw"
        disk.write_bytes(bytes(DISK_MIB << 20))
        g = Guest(IMAGE, icount=icount, extra=qemu_args(driver, disk))
        try:
            g.boot()
            g.raw_enter()
            out = g.exec(CODE, timeout=300).decode().split()
        finally:
            g.close()
    return [tuple(int(v) for v in p.split(",")) for p in out]


def main() -> int:
    drivers = sys.argv[1:] or ["virtio", "nvme", "usb"]
    for driver in drivers:
        if driver not in ("virtio", "nvme", "usb"):
            print(f"bench_disk: unknown driver {driver!r} (virtio, nvme or usb)",
                  file=sys.stderr)
            return 2
    print(f"{'driver':8} {'pass':13} {'cycles/4KiB (-icount)':>22} {'MB/s (TCG)':>11}")
    for driver in drivers:
        counted = measure(driver, icount=True)
        timed = measure(driver, icount=False)
        for name, (cyc, _us), (_c, us) in zip(PASSES, counted, timed, strict=True):
            mbs = REQUESTS * 4096 / max(us, 1)  # bytes per microsecond = MB/s
            print(f"{driver:8} {name:13} {cyc // REQUESTS:>22,} {mbs:>11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
