#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Disk benchmark: guest cycles per 4 KiB sequential write and read through the `disk`
module on a scratch virtio disk, under -icount. The figure varies with host load: QEMU
finishes each request asynchronously while the guest spins on the used ring, and the
spin's instructions are counted. Prints one line per direction."""

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


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        disk = Path(tmp) / "bench.raw"
        disk.write_bytes(bytes(8 << 20))
        g = Guest(IMAGE, icount=True, extra=["-drive", f"file={disk},format=raw,if=virtio"])
        try:
            g.boot()
            g.raw_enter()
            w, r = g.exec(CODE, timeout=300).decode().split()
        finally:
            g.close()
    print(f"write 4 KiB: {w} guest cycles")
    print(f"read 4 KiB:  {r} guest cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
