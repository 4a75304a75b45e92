# SPDX-License-Identifier: MIT
"""kernel/dev/nvme_prp.c on the host (cffi): the PRP entries of one transfer name exactly
the pages the buffer covers, in order (PRP1 with its offset, PRP2 the second page or
the list of every later one), a list that would overflow is refused, and the per-command
block limit honours the buffer, the controller's MDTS and the 16-bit block count."""
import pathlib

from hypothesis import given
from hypothesis import strategies as st

from tools.build import cffihost

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "kernel"
M = cffihost.build("nvme_prp", [KERNEL / "dev" / "nvme_prp.c"],
                   [KERNEL / "dev" / "nvme_prp.h"], [KERNEL / "dev"])
ffi, lib = M.ffi, M.lib
PAGE = lib.NVME_PAGE
LIST_PHYS = 0x7777_0000


def prp(phys: int, size: int, list_max: int = 512):
    lst = ffi.new("uint64_t[]", max(list_max, 1))
    p1, p2 = ffi.new("uint64_t *"), ffi.new("uint64_t *")
    n = lib.nvme_prp(phys, size, LIST_PHYS, lst, list_max, p1, p2)
    return n, p1[0], p2[0], [lst[i] for i in range(max(n, 0))]


def pages_of(phys: int, size: int) -> list[int]:
    first = phys // PAGE * PAGE
    return list(range(first, phys + size, PAGE))


@given(st.integers(0, 2**40).map(lambda a: a * 4), st.integers(1, 2 << 20))
def test_entries_cover_the_buffer(phys, size):
    n, p1, p2, lst = prp(phys, size)
    want = pages_of(phys, size)
    assert p1 == phys
    if len(want) == 1:
        assert (n, p2) == (0, 0)
    elif len(want) == 2:
        assert (n, p2) == (0, want[1])
    elif len(want) - 1 > 512:
        assert n == -1
    else:
        assert p2 == LIST_PHYS and lst == want[1:]
        assert all(e % PAGE == 0 for e in lst)


def test_edges():
    assert prp(0x10000, PAGE)[:3] == (0, 0x10000, 0)            # one page exactly
    assert prp(0x10000, PAGE + 1)[:3] == (0, 0x10000, 0x11000)  # spills by a byte
    assert prp(0x10ffc, 8)[:3] == (0, 0x10ffc, 0x11000)         # straddles a boundary
    assert prp(0x10000, 3 * PAGE) == (2, 0x10000, LIST_PHYS, [0x11000, 0x12000])
    assert prp(0x10000, 64 << 10)[0] == 15                      # the driver's bounce buffer
    assert prp(0x10000, 17 * PAGE, list_max=15)[0] == -1


@given(st.sampled_from([512, 1024, 2048, 4096]), st.integers(0, 1 << 26), st.integers(0, 40))
def test_max_blocks(bs, buf, mdts):
    n = lib.nvme_max_blocks(bs, buf, mdts)
    limit = buf if mdts == 0 or mdts >= 32 else min(buf, PAGE << mdts)
    assert n == min(limit // bs, 65536)
    assert n * bs <= buf


def test_max_blocks_examples():
    assert lib.nvme_max_blocks(512, 64 << 10, 0) == 128
    assert lib.nvme_max_blocks(512, 64 << 10, 1) == 16   # 8 KiB by MDTS
    assert lib.nvme_max_blocks(4096, 2048, 7) == 0
    assert lib.nvme_max_blocks(0, 4096, 0) == 0
