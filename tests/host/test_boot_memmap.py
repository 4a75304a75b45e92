# SPDX-License-Identifier: MIT
"""boot/memmap.c: the UEFI memory map as the kernel receives it in bootinfo: kinds
reduced, kernel pages carved out, sorted, coalesced, bounded by the caller's array."""

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

PAGE = 4096
RUNTIME_ATTR = 1 << 63
# EFI memory types used below
LOADER_CODE, BS_DATA, RT_DATA, CONVENTIONAL, ACPI_RECLAIM, MMIO = 1, 4, 6, 7, 9, 11


def raw_map(descs, desc_size=48):
    out = bytearray()
    for typ, base, pages, attr in descs:
        d = struct.pack("<IIQQQQ", typ, 0, base, 0, pages, attr)
        out += d + bytes(desc_size - len(d))
    return bytes(out)


def translate(pure, descs, kernel=(), cap=64, desc_size=48):
    ffi, lib = pure.ffi, pure.lib
    data = raw_map(descs, desc_size)
    k = ffi.new("struct memmap_range[]", [{"base": b, "pages": p} for b, p in kernel] or 1)
    out = ffi.new("struct bootinfo_mem_region[]", cap)
    dropped = ffi.new("uint32_t *")
    n = lib.memmap_translate(ffi.from_buffer(data), len(data), desc_size, k, len(kernel),
                             out, cap, dropped)
    return [(out[i].base, out[i].pages, out[i].kind, out[i].efi_type) for i in range(n)], \
        dropped[0]


def test_kinds(boot_pure):
    lib = boot_pure.lib
    assert lib.memmap_kind(CONVENTIONAL, 0) == lib.BOOTINFO_MEM_USABLE
    assert lib.memmap_kind(BS_DATA, 0) == lib.BOOTINFO_MEM_RECLAIMABLE
    assert lib.memmap_kind(LOADER_CODE, 0) == lib.BOOTINFO_MEM_RECLAIMABLE
    assert lib.memmap_kind(RT_DATA, RUNTIME_ATTR) == lib.BOOTINFO_MEM_RUNTIME
    assert lib.memmap_kind(CONVENTIONAL, RUNTIME_ATTR) == lib.BOOTINFO_MEM_RUNTIME
    assert lib.memmap_kind(MMIO, RUNTIME_ATTR) == lib.BOOTINFO_MEM_MMIO
    assert lib.memmap_kind(ACPI_RECLAIM, 0) == lib.BOOTINFO_MEM_ACPI_RECLAIM
    assert lib.memmap_kind(10, 0) == lib.BOOTINFO_MEM_ACPI_NVS
    assert lib.memmap_kind(0, 0) == lib.BOOTINFO_MEM_RESERVED
    assert lib.memmap_kind(0x70000000, 0) == lib.BOOTINFO_MEM_RESERVED


def test_sorted_coalesced_and_kernel_carved_out(boot_pure):
    lib = boot_pure.lib
    descs = [(CONVENTIONAL, 0x300000, 0x100, 0),
             (LOADER_CODE, 0x200000, 0x10, 0),        # holds the kernel and more
             (BS_DATA, 0x210000, 0x10, 0),
             (CONVENTIONAL, 0x100000, 0x100, 0),
             (ACPI_RECLAIM, 0x400000, 1, 0)]
    regions, dropped = translate(boot_pure, descs, kernel=[(0x201000, 2), (0x204000, 1)])
    assert dropped == 0
    usable, recl, kern = (lib.BOOTINFO_MEM_USABLE, lib.BOOTINFO_MEM_RECLAIMABLE,
                          lib.BOOTINFO_MEM_KERNEL)
    assert regions == [
        (0x100000, 0x100, usable, CONVENTIONAL),
        (0x200000, 1, recl, LOADER_CODE),
        (0x201000, 2, kern, LOADER_CODE),
        (0x203000, 1, recl, LOADER_CODE),
        (0x204000, 1, kern, LOADER_CODE),
        (0x205000, 0xB + 0x10, recl, LOADER_CODE),   # loader code + BS data coalesced
        (0x300000, 0x100, usable, CONVENTIONAL),
        (0x400000, 1, lib.BOOTINFO_MEM_ACPI_RECLAIM, ACPI_RECLAIM),
    ]


def test_descriptor_stride_is_honoured(boot_pure):
    descs = [(CONVENTIONAL, 0x100000, 1, 0), (BS_DATA, 0x200000, 1, 0)]
    for size in (40, 48, 64):
        regions, _ = translate(boot_pure, descs, desc_size=size)
        assert [r[0] for r in regions] == [0x100000, 0x200000]


def test_bad_descriptors_are_skipped(boot_pure):
    descs = [(CONVENTIONAL, 0x100000, 0, 0), (CONVENTIONAL, 0x100010, 1, 0),
             (CONVENTIONAL, 2**64 - PAGE, 2, 0), (CONVENTIONAL, 0x200000, 1, 0)]
    regions, _ = translate(boot_pure, descs)
    assert [r[0] for r in regions] == [0x200000]


def test_overflow_is_counted_not_overrun(boot_pure):
    descs = [(CONVENTIONAL if i % 2 else BS_DATA, 0x100000 + i * 2 * PAGE, 1, 0)
             for i in range(20)]
    regions, dropped = translate(boot_pure, descs, cap=8)
    assert len(regions) == 8 and dropped > 0


@st.composite
def maps(draw):
    base, descs = 0, []
    for _ in range(draw(st.integers(0, 40))):
        base += draw(st.integers(0, 3)) * PAGE
        pages = draw(st.integers(1, 8))
        typ = draw(st.sampled_from([0, LOADER_CODE, BS_DATA, RT_DATA, CONVENTIONAL,
                                    ACPI_RECLAIM, 10, MMIO]))
        descs.append((typ, base, pages, draw(st.sampled_from([0, RUNTIME_ATTR]))))
        base += pages * PAGE
    kernel, kbase = [], 0
    for _ in range(draw(st.integers(0, 3))):
        kbase += draw(st.integers(0, 20)) * PAGE
        kpages = draw(st.integers(1, 6))
        kernel.append((kbase, kpages))
        kbase += kpages * PAGE
    return draw(st.permutations(descs)), kernel


@settings(max_examples=300, deadline=None)
@given(maps())
def test_translation_properties(boot_pure, case):
    descs, kernel = case
    lib = boot_pure.lib
    regions, dropped = translate(boot_pure, descs, kernel=kernel, cap=512)
    assert dropped == 0
    # Same pages covered, each page with the kind of its descriptor or KERNEL.
    want = {}
    for typ, base, pages, attr in descs:
        for p in range(pages):
            want[base + p * PAGE] = lib.memmap_kind(typ, attr)
    for kb, kp in kernel:
        for p in range(kp):
            if kb + p * PAGE in want:
                want[kb + p * PAGE] = lib.BOOTINFO_MEM_KERNEL
    got = {}
    for base, pages, kind, _ in regions:
        for p in range(pages):
            assert base + p * PAGE not in got
            got[base + p * PAGE] = kind
    assert got == want
    # Sorted, and no two touching regions of the same kind.
    for a, b in zip(regions, regions[1:], strict=False):
        assert a[0] + a[1] * PAGE <= b[0]
        assert not (a[0] + a[1] * PAGE == b[0] and a[2] == b[2])
