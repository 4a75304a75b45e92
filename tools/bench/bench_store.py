#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Field save/load benchmark: guest cycles of lo.save() and lo.load() of a field of
4 grid flavours of 256x256 on /data (a writable copy of build/lociOS.img, its LOCIDATA
emptied first), under -icount. Each is split into its parts: the snapshot (or its check)
in memory, and the file work on littlefs over virtio-blk; and the restore at boot of the
same field from an autosave. Prints one line per figure."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a file: `tools` importable

from tools.guest.guestconsole import IMAGE, Guest  # noqa: E402

CODE = """
import kernel, gc, lo, lo_store, field
from field import Field, grid
F = lo.use(Field([grid('f%d' % i, 256, 256, E=0.1, G=0.4) for i in range(4)]))
s = 1
for i in range(4):
    for _ in range(500):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        F.deposit(i, ((s >> 8) % 256, (s >> 16) % 256), 5.0)
F.tick()
def cyc(fn, *a):
    gc.collect()
    t = kernel.cycles()
    fn(*a)
    return kernel.cycles() - t
snap = cyc(F.snap)
save = cyc(lo_store.save, 'bench')
read = cyc(lo_store._read, '/data/field/bench.snap')
check = cyc(field.Snapshot, lo_store._read('/data/field/bench.snap'))
load = cyc(lo_store.load, 'bench', True)
lo.F = None
gc.collect()
fresh = cyc(lo_store.load, 'bench', True)
F = lo.F
lo_store.autosave(ticks=100, keep=2)
lo_store._auto_save(F)
lo.F = None
gc.collect()
boot = cyc(lo_store.boot, True)
print(len(F.snapshot()), snap, save, read, check, load, fresh, boot)
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        image = Path(tmp) / "lociOS.img"
        shutil.copyfile(IMAGE, image)
        subprocess.run([sys.executable, str(ROOT / "tools" / "datafs.py"), str(image),
                        "format", "--yes"], check=True, capture_output=True)
        g = Guest(image, icount=True, launch=["--writable"])
        try:
            g.boot()
            g.raw_enter()
            out = g.exec(CODE, timeout=900).decode().split()
        finally:
            g.close()
    size, snap, save, read, check, load, fresh, boot = (int(x) for x in out[-8:])
    print(f"snapshot of 256x256x4 ({size} B) in memory: {snap:,} guest cycles")
    print(f"lo.save (snapshot, journal, write, rename): {save:,} guest cycles")
    print(f"read the file: {read:,} guest cycles")
    print(f"check the bytes read (CRC, rules, digest): {check:,} guest cycles")
    print(f"lo.load into the same field: {load:,} guest cycles")
    print(f"lo.load into a new field: {fresh:,} guest cycles")
    print(f"the restore at boot (lo_store.boot: settings, newest autosave, re-arm): "
          f"{boot:,} guest cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
