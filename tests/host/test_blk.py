# SPDX-License-Identifier: MIT
"""kernel/dev/blk.c on the host (cffi): the registry, and the range checks in front of
every driver: a request reaches the driver exactly when it lies inside the device and
is not empty, writes to a read-only device are refused, and no block number or count
overflows the check."""
import pathlib

from hypothesis import given
from hypothesis import strategies as st

from tools.build import cffihost

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "kernel"
M = cffihost.build("blk", [KERNEL / "dev" / "blk.c"], [KERNEL / "dev" / "blk.h"],
                   [KERNEL / "dev"])
ffi, lib = M.ffi, M.lib
calls: list[tuple[str, int, int]] = []


@ffi.callback("int(struct blk_dev *, uint64_t, uint32_t, void *)")
def _read(d, block, count, buf):
    calls.append(("r", block, count))
    return 0


@ffi.callback("int(struct blk_dev *, uint64_t, uint32_t, const void *)")
def _write(d, block, count, buf):
    calls.append(("w", block, count))
    return 0


def make(count: int, read_only: bool = False):
    d = ffi.new("struct blk_dev *")
    d.block_size, d.block_count, d.read_only = 512, count, read_only
    d.read, d.write = _read, _write
    return d


U64 = st.integers(0, 2**64 - 1)


@given(U64, U64, st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_range_checks(size, block, count, write, ro):
    d = make(size, ro)
    calls.clear()
    r = lib.blk_write(d, block, count, ffi.NULL) if write else lib.blk_read(d, block, count,
                                                                             ffi.NULL)
    if write and ro:
        assert r == lib.BLK_EROFS and not calls
    elif block + count > size:
        assert r == lib.BLK_EINVAL and not calls
    elif count == 0:
        assert r == 0 and not calls
    else:
        assert r == 0 and calls == [("w" if write else "r", block, count)]


def test_registry_finds_by_name_and_fills_up():
    keep = []
    names = [f"t{i}".encode() for i in range(lib.BLK_MAX_DEVICES)]
    for n in names:
        d = make(8)
        d.name = n
        keep.append(d)
        if not lib.blk_register(d):
            break
    assert lib.blk_count() == lib.BLK_MAX_DEVICES
    assert not lib.blk_register(make(8))
    assert lib.blk_find(b"t3") == keep[3]
    assert lib.blk_find(b"t") == ffi.NULL and lib.blk_find(b"t33") == ffi.NULL
    assert lib.blk_get(lib.BLK_MAX_DEVICES) == ffi.NULL


@given(st.booleans(), st.booleans(), st.lists(st.booleans(), max_size=6))
def test_write_guard(ro, guarded, steps):
    """Only a guarded device (read-only by policy) can be made writable; a read-only
    medium refuses; any device can be made read-only and one so made, writable again."""
    d = make(8, ro)
    d.guarded = guarded
    medium_ro = ro and not guarded
    for want in steps:
        r = lib.blk_set_writable(d, want)
        if want and medium_ro:
            assert r == lib.BLK_EROFS and d.read_only
        else:
            assert r == 0 and d.read_only == (not want)
        calls.clear()
        w = lib.blk_write(d, 0, 1, ffi.NULL)
        assert (w == lib.BLK_EROFS) == bool(d.read_only)
