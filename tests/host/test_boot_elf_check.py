# SPDX-License-Identifier: MIT
"""Host tests of boot/elf_check.c (built through cffi by conftest.py): a crafted kernel
for each rule, and property tests against an independent Python reader of the rules."""

import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.build import cffihost

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
PT_LOAD, PT_DYNAMIC, PT_INTERP, PT_NOTE = 1, 2, 3, 4
PF_X, PF_W, PF_R = 1, 2, 4
PAGE = 4096
# The kernel's virtual window and the most the loader places in one block.
V = 0xFFFFFFFF80000000
WINDOW = (V, 0xFFFFFFFFC0000000)
MAX_SPAN = 256 << 20
MAX_LOAD = 16


def h(off):
    """The hex text of an address `off` into the kernel window, as messages print it."""
    return f"{V + off:#x}"


@dataclass
class Seg:
    vaddr: int
    filesz: int
    memsz: int
    flags: int
    offset: int = None      # default: vaddr % PAGE + a page-aligned slot in the file
    paddr: int = None       # default: vaddr - V (the loader ignores it)
    type: int = PT_LOAD


def make_elf(segs, entry, *, etype=2, machine=62, ident=None, phentsize=56, version=1,
             phoff=64, phnum=None):
    """An ELF64 file with the given program headers; segment bytes are filled with a
    pattern so copies can be checked."""
    ident = ident or b"\x7fELF\x02\x01\x01" + bytes(9)
    slot = PAGE
    placed = []
    for s in segs:
        off = s.offset
        if off is None:
            off = slot + s.vaddr % PAGE
            slot = (off + s.filesz + PAGE - 1) // PAGE * PAGE + PAGE
        placed.append((s, off))
    count = len(segs) if phnum is None else phnum
    size = max([phoff + len(segs) * 56] + [off + s.filesz for s, off in placed
                                           if s.offset is None])
    data = bytearray(size)
    EHDR.pack_into(data, 0, ident, etype, machine, version, entry, phoff, 0, 0, 64,
                   phentsize, count, 64, 0, 0)
    for i, (s, off) in enumerate(placed):
        paddr = (s.vaddr - V) % 2**64 if s.paddr is None else s.paddr
        PHDR.pack_into(data, phoff + i * 56, s.type, s.flags, off, s.vaddr, paddr,
                       s.filesz, s.memsz, PAGE)
        if s.offset is None:
            data[off:off + s.filesz] = bytes((i * 7 + j) & 0xff for j in range(s.filesz))
    return bytes(data)


def valid_elf():
    """A minimal kernel as the kernel team links it: RX text and RW data + bss."""
    return make_elf([Seg(V + 0x200000, 0x1234, 0x1234, PF_R | PF_X),
                     Seg(V + 0x202000, 0x100, 0x3000, PF_R | PF_W)], entry=V + 0x200010)


def reference_check(data):
    """The loader's rules, restated independently. Returns (ok, loads) where loads
    is a sorted list of (vaddr, memsz, filesz, offset, flags) with memsz > 0."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return False, None
    (ident, etype, machine, version, entry, phoff, _shoff, _flags, _ehsize, phentsize,
     phnum, _shentsize, _shnum, _shstrndx) = EHDR.unpack_from(data, 0)
    if ident[6] != 1 or version != 1 or etype != 2 or machine != 62 or phentsize != 56:
        return False, None
    if phnum in (0, 0xFFFF) or phoff < 64 or phoff + phnum * 56 > len(data):
        return False, None
    loads = []
    nload = 0
    for i in range(phnum):
        ptype, flags, off, vaddr, _paddr, filesz, memsz, _align = PHDR.unpack_from(
            data, phoff + i * 56)
        if ptype in (PT_INTERP, PT_DYNAMIC):
            return False, None
        if ptype != PT_LOAD:
            continue
        nload += 1
        if nload > MAX_LOAD or off % PAGE != vaddr % PAGE:
            return False, None
        if filesz > memsz or off + filesz > len(data):
            return False, None
        if flags & PF_W and flags & PF_X:
            return False, None
        if memsz == 0:
            continue
        lo = vaddr // PAGE * PAGE
        hi = (vaddr + memsz + PAGE - 1) // PAGE * PAGE
        if lo < WINDOW[0] or hi > WINDOW[1]:
            return False, None
        loads.append((vaddr, memsz, filesz, off, flags))
    loads.sort()
    if not loads:
        return False, None
    for a, b in zip(loads, loads[1:], strict=False):
        a_end = (a[0] + a[1] + PAGE - 1) // PAGE * PAGE
        if a_end > b[0] // PAGE * PAGE:
            return False, None
    if not any(f & PF_X and v <= entry < v + fs for v, _m, fs, _o, f in loads):
        return False, None
    lo = loads[0][0] // PAGE * PAGE
    hi = (loads[-1][0] + loads[-1][1] + PAGE - 1) // PAGE * PAGE
    if hi - lo > MAX_SPAN:
        return False, None
    return True, loads


def run(pure, data):
    """(code name, message, image) from the C checker."""
    img = pure.ffi.new("struct elf_image *")
    msg = pure.ffi.new("char[]", 320)
    buf = pure.ffi.from_buffer(data) if data else pure.ffi.NULL
    rc = pure.lib.elf_check(buf, len(data), img, msg, 320)
    return pure.ffi.string(pure.lib.elf_check_code_name(rc)).decode(), \
        pure.ffi.string(msg).decode(), img


def test_valid_kernel_is_accepted(boot_pure):
    code, msg, img = run(boot_pure, valid_elf())
    assert (code, msg) == ("ELF_OK", "")
    assert img.entry == V + 0x200010 and img.count == 2
    assert (img.virt_start, img.virt_end) == (V + 0x200000, V + 0x205000)
    text, data = img.seg[0], img.seg[1]
    assert (text.vaddr, text.page_base, text.page_count, text.flags) == (
        V + 0x200000, V + 0x200000, 2, PF_R | PF_X)
    assert (data.vaddr, data.memsz, data.filesz, data.page_count) == (V + 0x202000, 0x3000,
                                                                      0x100, 3)


def test_segments_come_back_sorted_and_empty_ones_dropped(boot_pure):
    elf = make_elf([Seg(V + 0x300000, 0x10, 0x10, PF_R | PF_W),
                    Seg(V + 0x280000, 0, 0, PF_R),
                    Seg(V + 0x200000, 0x20, 0x20, PF_R | PF_X)], entry=V + 0x200000)
    code, _, img = run(boot_pure, elf)
    assert code == "ELF_OK"
    assert [img.seg[i].vaddr for i in range(img.count)] == [V + 0x200000, V + 0x300000]


def test_non_load_headers_are_ignored(boot_pure):
    elf = make_elf([Seg(V + 0x200000, 0x20, 0x20, PF_R | PF_X),
                    Seg(0, 0x10, 0x10, PF_R, offset=64, type=PT_NOTE)], entry=V + 0x200004)
    assert run(boot_pure, elf)[0] == "ELF_OK"


TEXT = Seg(V + 0x200000, 0x1000, 0x1000, PF_R | PF_X)
HDR_ONLY = [TEXT]


def _patched(offset, fmt, value):
    data = bytearray(valid_elf())
    struct.pack_into(fmt, data, offset, value)
    return bytes(data)


# (expected code, crafted file, words the message must contain)
REFUSALS = {
    "too_small": ("ELF_ERR_TOO_SMALL", valid_elf()[:63], ["63 bytes", "64"]),
    "empty": ("ELF_ERR_TOO_SMALL", b"", ["0 bytes"]),
    "magic": ("ELF_ERR_MAGIC", b"MZ" + valid_elf()[2:], ["4d 5a 4c 46"]),
    "class32": ("ELF_ERR_CLASS", _patched(4, "<B", 1), ["EI_CLASS is 1"]),
    "big_endian": ("ELF_ERR_DATA", _patched(5, "<B", 2), ["EI_DATA is 2"]),
    "ident_version": ("ELF_ERR_VERSION", _patched(6, "<B", 0), ["EI_VERSION is 0"]),
    "e_version": ("ELF_ERR_VERSION", make_elf(HDR_ONLY, V + 0x200000, version=2),
                  ["e_version is 2"]),
    "dyn": ("ELF_ERR_TYPE", make_elf(HDR_ONLY, V + 0x200000, etype=3), ["e_type is 3"]),
    "machine": ("ELF_ERR_MACHINE", make_elf(HDR_ONLY, V + 0x200000, machine=3),
                ["e_machine is 3"]),
    "phentsize": ("ELF_ERR_PHENTSIZE", make_elf(HDR_ONLY, V + 0x200000, phentsize=32),
                  ["e_phentsize is 32"]),
    "phnum_zero": ("ELF_ERR_PH_RANGE", make_elf(HDR_ONLY, V + 0x200000, phnum=0), ["0 of them"]),
    "phnum_xnum": ("ELF_ERR_PH_RANGE", make_elf(HDR_ONLY, V + 0x200000, phnum=0xFFFF),
                   ["65535 of them"]),
    "phoff_huge": ("ELF_ERR_PH_RANGE", _patched(32, "<Q", 2**64 - 8), ["0xfffffffffffffff8"]),
    "phoff_in_header": ("ELF_ERR_PH_RANGE", _patched(32, "<Q", 8), ["offset 0x8"]),
    "interp": ("ELF_ERR_DYNAMIC", make_elf([TEXT, Seg(0, 8, 8, PF_R, type=PT_INTERP)],
                                           V + 0x200000), ["PT_INTERP"]),
    "dynamic": ("ELF_ERR_DYNAMIC", make_elf([TEXT, Seg(0, 8, 8, PF_R, type=PT_DYNAMIC)],
                                            V + 0x200000), ["PT_DYNAMIC"]),
    "too_many": ("ELF_ERR_TOO_MANY_LOAD",
                 make_elf([Seg(V + 0x200000 + i * 0x2000, 16, 16, PF_R | PF_X)
                           for i in range(MAX_LOAD + 1)], V + 0x200000), ["more than 16"]),
    "no_load": ("ELF_ERR_NO_LOAD", make_elf([Seg(V + 0x200000, 0, 0, PF_R)], V + 0x200000),
                ["no PT_LOAD"]),
    "span": ("ELF_ERR_SPAN", make_elf([TEXT, Seg(V + 0x200000 + MAX_SPAN, 16, 16,
                                                 PF_R | PF_W)], V + 0x200000),
             [h(0x200000), "262148 KiB", "262144 KiB"]),
    "align": ("ELF_ERR_ALIGN", make_elf([Seg(V + 0x200000, 16, 16, PF_R | PF_X,
                                             offset=0x1010)], V + 0x200000),
              ["p_offset 0x1010", "p_vaddr " + h(0x200000)]),
    "filesz": ("ELF_ERR_FILESZ", make_elf([Seg(V + 0x200000, 0x20, 0x10, PF_R | PF_X,
                                               offset=0)], V + 0x200000),
               ["p_filesz 0x20 > p_memsz 0x10"]),
    "file_range": ("ELF_ERR_FILE_RANGE", make_elf([Seg(V + 0x200000, 0x100000, 0x100000,
                                                       PF_R | PF_X, offset=0)], V + 0x200000),
                   ["+0x100000"]),
    "file_range_wrap": ("ELF_ERR_FILE_RANGE",
                        make_elf([Seg(V + 0x200000, 2**64 - 0x1000, 2**64 - 0x1000,
                                      PF_R | PF_X, offset=0x2000)], V + 0x200000), ["segment 0"]),
    "below_window": ("ELF_ERR_WINDOW", make_elf([Seg(0x200000, 16, 16, PF_R | PF_X)],
                                                0x200000),
                     ["0x200000", "0xffffffff80000000", "0xffffffffc0000000"]),
    "above_window": ("ELF_ERR_WINDOW", make_elf([Seg(WINDOW[1] - 0x1000, 16, 0x1001,
                                                     PF_R | PF_X)], WINDOW[1] - 0x1000),
                     ["0xffffffffbffff000"]),
    "memsz_wraps": ("ELF_ERR_WINDOW", make_elf([Seg(V + 0x200000, 16, 2**64 - 0x100000,
                                                    PF_R | PF_X)], V + 0x200000),
                    ["segment 0"]),
    "overlap": ("ELF_ERR_OVERLAP", make_elf([TEXT, Seg(V + 0x200800, 16, 16, PF_R | PF_W)],
                                            V + 0x200000), [h(0x200000), h(0x200800)]),
    "share_page": ("ELF_ERR_OVERLAP", make_elf([Seg(V + 0x200000, 0x10, 0x10, PF_R | PF_X),
                                                Seg(V + 0x200ff0, 0x20, 0x20, PF_R | PF_W)],
                                               V + 0x200000), ["share pages"]),
    "wx": ("ELF_ERR_WX", make_elf([Seg(V + 0x200000, 16, 16, PF_R | PF_W | PF_X)], V + 0x200000),
           ["writable and executable", "0x7"]),
    "entry_outside": ("ELF_ERR_ENTRY", make_elf(HDR_ONLY, V + 0x500000), [h(0x500000)]),
    "entry_in_data": ("ELF_ERR_ENTRY", make_elf([TEXT, Seg(V + 0x202000, 16, 16, PF_R | PF_W)],
                                                V + 0x202000), [h(0x202000)]),
    "entry_in_bss": ("ELF_ERR_ENTRY", make_elf([Seg(V + 0x200000, 16, 0x2000, PF_R | PF_X)],
                                               V + 0x201000), [h(0x201000)]),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_rule_refuses_with_a_message(boot_pure, case):
    expected, data, words = REFUSALS[case]
    code, msg, _ = run(boot_pure, data)
    assert code == expected, msg
    assert msg.startswith(expected + ": ")
    for word in words:
        assert word in msg, msg
    assert reference_check(data)[0] is False


def test_every_code_has_a_crafted_case(boot_pure):
    names = {boot_pure.ffi.string(boot_pure.lib.elf_check_code_name(c)).decode()
             for c in range(1, boot_pure.lib.ELF_ERR_COUNT)}
    assert names == {code for code, _, _ in REFUSALS.values()}


def test_message_buffer_is_never_overrun(boot_pure):
    data = REFUSALS["overlap"][1]
    img = boot_pure.ffi.new("struct elf_image *")
    for cap in range(0, 40):
        msg = boot_pure.ffi.new("char[]", b"\x55" * 48)
        boot_pure.lib.elf_check(boot_pure.ffi.from_buffer(data), len(data), img, msg, cap)
        assert all(msg[i] == b"\x55" for i in range(cap, 47))
        if cap:
            assert len(boot_pure.ffi.string(msg)) == cap - 1


def _agree(pure, data):
    code, msg, img = run(pure, data)
    ok, loads = reference_check(data)
    assert (code == "ELF_OK") == ok, (code, msg)
    if ok:
        got = [(img.seg[i].vaddr, img.seg[i].memsz, img.seg[i].filesz, img.seg[i].offset,
                img.seg[i].flags) for i in range(img.count)]
        assert got == loads
        assert img.virt_start == loads[0][0] // PAGE * PAGE
        assert img.virt_end == (loads[-1][0] + loads[-1][1] + PAGE - 1) // PAGE * PAGE
    else:
        assert code != "ELF_OK" and msg.startswith(code + ": ")
    return ok


FUZZ = settings(max_examples=400, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(st.binary(max_size=512))
def test_arbitrary_bytes(boot_pure, data):
    _agree(boot_pure, data)


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_behind_a_valid_header(boot_pure, tail):
    _agree(boot_pure, valid_elf()[:64] + tail)


@FUZZ
@given(st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), max_size=12),
       st.lists(st.tuples(st.integers(0, 0xF0), st.integers(0, 2**64 - 1)), max_size=3))
def test_mutated_valid_kernels(boot_pure, byte_flips, word_sets):
    data = bytearray(valid_elf())
    for pos, val in byte_flips:
        data[pos % len(data)] = val
    for pos, val in word_sets:
        struct.pack_into("<Q", data, 64 + pos, val)
    _agree(boot_pure, bytes(data))


@st.composite
def layouts(draw):
    """Plausible kernels near the rules' edges: page-ish addresses, mixed flags."""
    segs = []
    for _ in range(draw(st.integers(1, 5))):
        vaddr = draw(st.sampled_from([V - 0x1000, V, V + 0x200000, V + 0x201000,
                                      V + MAX_SPAN, WINDOW[1] - 0x1000, WINDOW[1]]))
        vaddr += draw(st.sampled_from([0, 0x10, 0xFF0]))
        memsz = draw(st.sampled_from([0, 1, 0x10, 0xFFF, 0x1000, 0x1001, 0x5000]))
        filesz = draw(st.sampled_from([0, memsz, memsz + 1]))
        flags = draw(st.sampled_from([PF_R, PF_R | PF_X, PF_R | PF_W, 7]))
        segs.append(Seg(vaddr, filesz, memsz, flags))
    entry = segs[draw(st.integers(0, len(segs) - 1))].vaddr + draw(st.sampled_from([0, 8]))
    return make_elf(segs, entry)


@FUZZ
@given(layouts())
def test_generated_layouts(boot_pure, data):
    _agree(boot_pure, data)


def test_generated_layouts_do_get_accepted_sometimes(boot_pure):
    # Guards against a property test that only ever exercises refusals.
    accepted = sum(_agree(boot_pure, make_elf([Seg(V + 0x200000 + i * 0x1000, 8, 8,
                                                   PF_R | PF_X)],
                                              V + 0x200000 + i * 0x1000)) for i in range(8))
    assert accepted == 8


# ASan cannot be loaded into an already running Python, so the same inputs also go
# through a small native driver built with -fsanitize=address,undefined (each file in a
# buffer of exactly its size: tools/build/cffihost.py's FILES_MAIN).
ASAN_CHECK = r"""
#include <stdio.h>
#include "elf_check.h"
static void check_file(const unsigned char *buf, size_t n) {
    struct elf_image img; char msg[320];
    int rc = elf_check(buf, (uint64_t)n, &img, msg, sizeof msg);
    printf("%d\n", rc);
}
"""


def _asan_driver():
    boot = Path(__file__).resolve().parents[2] / "boot"
    try:
        return cffihost.executable("elf_check_asan", [boot / "elf_check.c", boot / "fmt.c"],
                                   [boot], check_file=ASAN_CHECK, warn=False)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail("cannot build with -fsanitize=address: " + str(getattr(e, "stderr", e))[-300:])


def test_corpus_under_address_sanitizer(boot_pure, tmp_path):
    import random

    exe = _asan_driver()
    rng = random.Random(1)
    corpus = [valid_elf(), b""] + [case[1] for case in REFUSALS.values()]
    for _ in range(300):
        data = bytearray(rng.choice(corpus[:1] + corpus[2:]))
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        corpus.append(bytes(data))
    corpus += [rng.randbytes(rng.randrange(300)) for _ in range(100)]
    paths = []
    for i, data in enumerate(corpus):
        path = tmp_path / f"{i}.elf"
        path.write_bytes(data)
        paths.append(str(path))
    p = subprocess.run([str(exe), *paths], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    codes = [int(line) for line in p.stdout.split()]
    assert len(codes) == len(corpus)
    for data, code in zip(corpus, codes, strict=True):
        assert (code == 0) == reference_check(data)[0]
