# SPDX-License-Identifier: MIT
"""Checks on what `make build` produced, read back with pyelftools and capstone rather
than trusted: the kernel ELF obeys the loader's rules and the boot ABI, MicroPython's
x64 nlr_push has no frame prologue (a known crash: it must be frameless), the loader is a
relocatable PE32+ EFI application sealed with this kernel's digest, and the disk image
holds exactly these two files."""

from __future__ import annotations

import hashlib
import re
import struct
import subprocess
from pathlib import Path

import capstone
import pytest
from elftools.elf.elffile import ELFFile

from tools.build import seal, symtab

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
KERNEL = BUILD / "kernel.elf"
LOADER = BUILD / "boot" / "BOOTX64.EFI"
IMAGE = BUILD / "lociOS.img"


PF_X, PF_W = 1, 2
# boot/PROTOCOL.md: the virtual window kernel segments must lie in, and their most span.
WINDOW = (0xFFFFFFFF80000000, 0xFFFFFFFFC0000000)
MAX_SPAN = 256 << 20


@pytest.fixture(scope="module")
def kernel():
    if not KERNEL.is_file():
        pytest.fail(f"{KERNEL} is missing: these tests check the build; run `make build`")
    with open(KERNEL, "rb") as f:
        yield ELFFile(f)


def loads(elf):
    return [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]


def test_kernel_segments_follow_the_loader_rules(kernel):
    segs = loads(kernel)
    assert len(segs) >= 3
    for s in segs:
        flags = s["p_flags"]
        assert not (flags & PF_W and flags & PF_X), "a segment is writable and executable"
        assert s["p_vaddr"] % 4096 == 0
        assert WINDOW[0] <= s["p_vaddr"] and s["p_vaddr"] + s["p_memsz"] <= WINDOW[1]
    spans = sorted((s["p_vaddr"], s["p_vaddr"] + s["p_memsz"]) for s in segs)
    assert spans[-1][1] - spans[0][0] <= MAX_SPAN
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    entry = kernel["e_entry"]
    assert any(s["p_flags"] & PF_X and s["p_vaddr"] <= entry < s["p_vaddr"] + s["p_filesz"]
               for s in segs)
    # The symbol table is the last segment, so relinking it moves nothing else.
    last = max(segs, key=lambda s: s["p_vaddr"])
    sec = kernel.get_section_by_name(".ksymtab")
    assert sec is not None and last["p_vaddr"] <= sec["sh_addr"] < last["p_vaddr"] + last["p_memsz"]


def test_embedded_symbol_table_names_kernel_and_port_functions(kernel):
    table = symtab.decode(kernel.get_section_by_name(".ksymtab").data())
    names = {name for _, _, name in table}
    for fn in ("kernel_entry", "kmain", "port_main", "mp_execute_bytecode", "gc_collect"):
        assert fn in names, fn
    addr = {name: a for a, _, name in table}["mp_execute_bytecode"]
    assert symtab.lookup(table, addr + 5)[0] == "mp_execute_bytecode"


def _function_bytes(elf, name):
    sym = next(s for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name == name)
    text = elf.get_section_by_name(".text")
    off = sym["st_value"] - text["sh_addr"]
    return sym["st_value"], text.data()[off:off + sym["st_size"]]


def test_nlr_push_is_frameless(kernel):
    addr, code = _function_bytes(kernel, "nlr_push")
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    insns = list(md.disasm(code, addr))
    assert insns, "nlr_push did not disassemble"
    first = f"{insns[0].mnemonic} {insns[0].op_str}"
    assert not first.startswith("push rbp"), f"nlr_push starts with a prologue: {first}"
    # It saves the callee-saved registers into the nlr buffer and tail-jumps to
    # nlr_push_tail; a naked function never returns through a `ret` of its own.
    mnemonics = [i.mnemonic for i in insns]
    assert "jmp" in mnemonics and "ret" not in mnemonics, mnemonics


def test_loader_is_a_relocatable_efi_app_sealed_with_this_kernel():
    data = LOADER.read_bytes()
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe:pe + 4] == b"PE\0\0"
    machine, nsections = struct.unpack_from("<HH", data, pe + 4)
    assert machine == 0x8664
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    assert magic == 0x20B                       # PE32+
    subsystem = struct.unpack_from("<H", data, opt + 68)[0]
    assert subsystem == 10                      # EFI application
    opt_size = struct.unpack_from("<H", data, pe + 20)[0]
    names = [data[opt + opt_size + 40 * i:opt + opt_size + 40 * i + 8].rstrip(b"\0")
             for i in range(nsections)]
    assert b".reloc" in names
    at = seal.find_record(data)
    assert data[at:at + 32] == hashlib.sha256(KERNEL.read_bytes()).digest()


def test_image_holds_this_loader_and_kernel(tmp_path):
    for path, name in ((LOADER, "::/EFI/BOOT/BOOTX64.EFI"), (KERNEL, "::/LOCIOS/KERNEL.ELF")):
        out = tmp_path / Path(name).name
        subprocess.run(["mcopy", "-n", "-i", f"{IMAGE}@@1M", name, str(out)], check=True)
        assert out.read_bytes() == path.read_bytes(), name


TEST_ONLY_MODULES = {"rwops_user_cmodule": "_rwops", "mp_module_fieldbench": "_fieldbench"}


def _symbols(path: Path) -> set[str]:
    with open(path, "rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        return {s.name for s in table.iter_symbols()}


def test_test_only_modules_are_in_the_test_kernel_only():
    """`_rwops` writes into live bytecode and `_fieldbench` times the field from C: the
    kernel `make run` boots and a USB stick gets has neither, the test kernel both."""
    test_kernel = BUILD / "test" / "kernel.elf"
    if not test_kernel.is_file():
        pytest.fail(f"{test_kernel} is missing: run `make test-image`")
    shipped, test = _symbols(KERNEL), _symbols(test_kernel)
    for symbol, module in TEST_ONLY_MODULES.items():
        assert symbol not in shipped, f"{module} is in the shipped kernel"
        assert symbol in test, f"{module} is missing from the test kernel"
    assert "port_test_modules_init" in shipped and "port_test_modules_init" in test


def test_frozen_modules_are_bytecode_only():
    """The image freezes no machine code: the runtime's hot paths are C (loci/mod), and
    every frozen module is MicroPython bytecode. Frozen native code (mpy-cross -march)
    would need its own check that it holds no privileged instruction and calls nothing
    outside the runtime's table."""
    frozen = BUILD / "port" / "frozen_content.c"
    kinds = set(re.findall(r"MP_CODE_[A-Z_]+", frozen.read_text()))
    assert kinds == {"MP_CODE_BYTECODE"}, kinds
