# SPDX-License-Identifier: MIT
"""vm/patches/0004 (multi-block search hints in gc_alloc) changes how fast the GC finds
free memory, never which memory it finds: the unix port built from the patched tree and
one built without 0004 run a seeded allocate / grow / shrink / drop / collect workload
and must print the same trace (each object's offset in the heap, gc.mem_free(), every
MemoryError), at heap sizes that run out of memory and at one that does not. Both builds have 0024
(a free far behind the search's start leaves it there), so the workload also runs its
free, shrink and heap-end paths with gc.c's asserts on."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRISTINE = ROOT / "build" / "micropython-1.25.0"
PATCHED = ROOT / "build" / "micropython-1.25.0-lociOS"
OUT = ROOT / "build" / "host" / "gc-hint"
HINT_PATCH = "0004-gc-multi-block-search-hint.patch"
MPY_CROSS = ROOT / "build" / "port" / "mpy-cross" / "mpy-cross"
# The standard variant minus what the Debian tree lacks; -O2 without -DNDEBUG keeps
# gc.c's asserts (a head where gc_free and gc_realloc expect one) switched on.
UNIX_ARGS = ["VARIANT=standard", "COPT=-O2", "PROG=micropython", "FROZEN_MANIFEST=",
             "MICROPY_PY_BTREE=0", "MICROPY_PY_SSL=0", "MICROPY_SSL_MBEDTLS=0",
             "MICROPY_PY_FFI=0"]
SEEDS = [1, 2, 3, 4, 5, 6]
STEPS = 3000
# 512K and 1M run out (the reference raises MemoryError there); 2M never does.
HEAPS = ["512K", "1M", "2M"]

# Runs on MicroPython. Sizes span 1 block to 25 000 blocks; lists grow and shrink in
# place or move (gc_realloc, gc_free), str.format shrinks its buffer, and dropped
# objects come back through collections, automatic and explicit.
WORKLOAD = '''
import gc, sys
HEAP = 1 << 24

def run(seed, steps):
    st = [seed]
    def rnd(n):
        st[0] = (st[0] * 1103515245 + 12345) & 0x7FFFFFFF
        return (st[0] >> 8) % n
    def size():
        r = rnd(100)
        if r < 55: return 1 + rnd(64)
        if r < 85: return 65 + rnd(450)
        if r < 97: return 515 + rnd(8000)
        return 8515 + rnd(400000)
    gc.collect()
    anchor = bytearray(16)
    base = id(anchor)
    slots = [None] * 48
    for step in range(steps):
        op = rnd(100)
        k = rnd(48)
        try:
            if op < 30:
                slots[k] = bytearray(size())
            elif op < 40:
                slots[k] = (k,) * (1 + rnd(12))
            elif op < 55:
                o = slots[k]
                if isinstance(o, list):
                    o.extend([step] * rnd(40))
                elif isinstance(o, bytearray):
                    o.extend(b"x" * rnd(300))
                else:
                    slots[k] = [step] * rnd(20)
            elif op < 65:
                o = slots[k]
                if isinstance(o, list):
                    if rnd(4) == 0:
                        o.clear()
                    else:
                        for _ in range(rnd(len(o) + 1)):
                            o.pop()
                else:
                    slots[k] = "{:{}}".format("s", size() % 3000)
            elif op < 90:
                slots[k] = None
            elif op < 93:
                gc.collect()
            else:
                slots[k] = [bytearray(1 + rnd(40)) for _ in range(rnd(10))]
            o = slots[k]
            off = 0 if o is None else id(o) - base
            # objects outside the heap (interned strings) have no offset to compare
            print(step, op, k, off if -HEAP < off < HEAP else "static", gc.mem_free())
        except MemoryError:
            slots[k] = None
            print(step, op, k, "MemoryError", gc.mem_free())

for seed in sys.argv[1:]:
    run(int(seed), STEPS)
'''.replace("STEPS", str(STEPS))


def _apply(tree: Path, patch: Path) -> None:
    r = subprocess.run(["patch", "-d", str(tree), "-p1", "--batch", "--forward", "--fuzz=0",
                        "--no-backup-if-mismatch", "-r", "-", "-i", str(patch)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{patch.name} does not apply without {HINT_PATCH}:\n{r.stdout}"


def _reference_tree() -> Path:
    """The pristine tree with every VM patch but 0004, remade when that set changes."""
    patches = [p for p in sorted((ROOT / "vm" / "patches").glob("*.patch"))
               if p.name != HINT_PATCH]
    key = hashlib.sha256()
    for p in patches:
        key.update(p.name.encode() + b"\0" + p.read_bytes())
    tree, stamp = OUT / "tree-ref", OUT / "tree-ref.key"
    if tree.is_dir() and stamp.is_file() and stamp.read_text() == key.hexdigest():
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(PRISTINE, tree, symlinks=True)
    for p in patches:
        _apply(tree, p)
    stamp.write_text(key.hexdigest())
    return tree


def _unix(tree: Path, build: Path) -> Path:
    # every core: the two ports are most of this module's time on a fresh clone
    r = subprocess.run(["make", "-s", f"-j{os.cpu_count() or 1}",
                        "-C", str(tree / "ports" / "unix"), f"BUILD={build}",
                        f"MICROPY_MPYCROSS={MPY_CROSS}", *UNIX_ARGS],
                       capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return build / "micropython"


@pytest.fixture(scope="module")
def ports() -> tuple[Path, Path]:
    """(without 0004, with it): unix ports, cached in build/host/gc-hint."""
    assert (ROOT / "vm" / "patches" / HINT_PATCH).is_file()
    # the port's patched tree, remade by make whenever the patch set changes
    subprocess.run(["make", "--no-print-directory", "-s", "-C", str(ROOT), "vm-patches"],
                   check=True, capture_output=True)
    assert "gc_multi_hint" in (PATCHED / "py" / "gc.c").read_text()
    OUT.mkdir(parents=True, exist_ok=True)
    ref = _unix(_reference_tree(), OUT / "unix-ref")
    hint = _unix(PATCHED, OUT / "unix-hint")
    return ref, hint


def _trace(exe: Path, heap: str, script: Path) -> list[str]:
    p = subprocess.run([str(exe), "-X", f"heapsize={heap}", str(script),
                        *map(str, SEEDS)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.splitlines()


@pytest.mark.parametrize("heap", HEAPS)
def test_same_placement_and_failures_as_without_the_hints(ports, heap, tmp_path):
    ref, hint = ports
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    want, got = _trace(ref, heap, script), _trace(hint, heap, script)
    assert len(want) == len(SEEDS) * STEPS
    failures = sum("MemoryError" in line for line in want)
    if heap == "2M":
        assert failures == 0
    else:
        assert failures > 0, "the workload should exhaust this heap"
    assert len(got) == len(want), got[-3:]
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        assert g == w, f"line {i}: without 0004 {w!r}, with it {g!r}"
