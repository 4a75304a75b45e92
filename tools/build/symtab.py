#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The kernel's symbol table for symbolised fault dumps (read by kernel/ksym.c).

  symtab.py build KERNEL.elf OUT.bin     function symbols -> compact sorted table
  symtab.py check STAGE1.elf STAGE2.elf  fail if linking the table moved anything else

Table layout (little-endian, see kernel/ksymtab.h): a 16-byte header (magic "KSYM",
version, count, names offset), `count` 16-byte entries (address u64, size u32, name
offset u32) sorted by address, then NUL-terminated names.
"""
import struct
import sys

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

MAGIC = 0x4D59534B
VERSION = 1
HEADER = struct.Struct("<IIII")
ENTRY = struct.Struct("<QII")
SECTION = ".ksymtab"


def function_symbols(elf):
    """(address, size, name) of every function in an executable section, one per address."""
    sections = list(elf.iter_sections())
    best = {}
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        raise SystemExit("symtab: the ELF has no .symtab (was it stripped?)")
    for sym in symtab.iter_symbols():
        if sym["st_info"]["type"] != "STT_FUNC" or not sym.name:
            continue
        shndx = sym["st_shndx"]
        if not isinstance(shndx, int) or shndx >= len(sections):
            continue
        if not sections[shndx]["sh_flags"] & SH_FLAGS.SHF_EXECINSTR:
            continue
        addr, size = sym["st_value"], sym["st_size"]
        rank = (sym["st_info"]["bind"] == "STB_GLOBAL", size > 0, sym.name)
        if addr not in best or rank > best[addr][0]:
            best[addr] = (rank, size, sym.name)
    return [(addr, min(size, 0xFFFFFFFF), name) for addr, (_, size, name) in sorted(best.items())]


def encode(symbols):
    names = bytearray()
    entries = bytearray()
    for addr, size, name in symbols:
        entries += ENTRY.pack(addr, size, len(names))
        names += name.encode() + b"\0"
    strtab_off = HEADER.size + len(entries)
    return HEADER.pack(MAGIC, VERSION, len(symbols), strtab_off) + bytes(entries) + bytes(names)


def decode(blob):
    """The (address, size, name) entries of a table; raises ValueError if malformed."""
    if len(blob) < HEADER.size:
        raise ValueError("table shorter than its header")
    magic, version, count, strtab_off = HEADER.unpack_from(blob)
    if magic != MAGIC or version != VERSION:
        raise ValueError(f"bad magic/version {magic:#x}/{version}")
    out = []
    for i in range(count):
        addr, size, name_off = ENTRY.unpack_from(blob, HEADER.size + i * ENTRY.size)
        start = strtab_off + name_off
        end = blob.index(b"\0", start)
        out.append((addr, size, blob[start:end].decode()))
    return out


def lookup(symbols, addr):
    """(name, offset) for addr, the way kernel/ksym.c resolves it; None if no function."""
    lo, hi = 0, len(symbols)
    while lo < hi:
        mid = (lo + hi) // 2
        if symbols[mid][0] <= addr:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return None
    i = lo - 1
    start, size, name = symbols[i]
    off = addr - start
    if size:
        return (name, off) if off < size else None
    if i + 1 < len(symbols) and addr >= symbols[i + 1][0]:
        return None
    return name, off


def _layout(elf):
    """Symbols and sections that must not move, and the .ksymtab address."""
    ks = elf.get_section_by_name(SECTION)
    if ks is None:
        raise SystemExit(f"symtab: no {SECTION} section in the ELF")
    limit = ks["sh_addr"]
    sections = list(elf.iter_sections())
    syms = []
    for sym in elf.get_section_by_name(".symtab").iter_symbols():
        shndx = sym["st_shndx"]
        if isinstance(shndx, int) and shndx < len(sections) and sections[shndx].name == SECTION:
            continue
        if sym.name.startswith("_binary_") or sym["st_value"] >= limit:
            continue
        if sym["st_info"]["type"] in ("STT_FILE", "STT_SECTION"):
            continue
        syms.append((sym.name, sym["st_value"], sym["st_size"]))
    secs = [
        (s.name, s["sh_addr"], s["sh_size"])
        for s in sections
        if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s.name != SECTION
    ]
    return sorted(syms), secs, elf.header["e_entry"]


def cmd_build(elf_path, out_path):
    with open(elf_path, "rb") as f:
        blob = encode(function_symbols(ELFFile(f)))
    with open(out_path, "wb") as f:
        f.write(blob)
    return 0


def cmd_check(stage1_path, stage2_path):
    with open(stage1_path, "rb") as f1, open(stage2_path, "rb") as f2:
        e1, e2 = ELFFile(f1), ELFFile(f2)
        syms1, secs1, entry1 = _layout(e1)
        syms2, secs2, entry2 = _layout(e2)
        problems = []
        if entry1 != entry2:
            problems.append(f"entry point moved: {entry1:#x} -> {entry2:#x}")
        if secs1 != secs2:
            changed = [(a, b) for a, b in zip(secs1, secs2, strict=False) if a != b]
            a, b = changed[0] if changed else (len(secs1), len(secs2))
            problems.append(f"sections changed: {a} -> {b}")
        if syms1 != syms2:
            moved = sorted(set(syms1) ^ set(syms2))[:10]
            problems.append("symbols moved or changed: " + ", ".join(
                f"{n}@{v:#x}" for n, v, _ in moved))
        table = e2.get_section_by_name(SECTION).data()
        try:
            linked = decode(table)
        except ValueError as exc:
            problems.append(f"{SECTION} in {stage2_path} is malformed: {exc}")
            linked = None
        if linked is not None and linked != function_symbols(e2):
            problems.append(f"{SECTION} in {stage2_path} does not match its own functions")
    if problems:
        print(f"symtab: check failed: linking {SECTION} moved the kernel layout "
              f"({stage1_path} vs {stage2_path}); .ksymtab must stay the last section "
              "in kernel/linker.ld:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "build":
        return cmd_build(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "check":
        return cmd_check(argv[2], argv[3])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
