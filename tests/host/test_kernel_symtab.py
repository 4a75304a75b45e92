# SPDX-License-Identifier: MIT
"""tools/build/symtab.py: the table built from a small host-compiled ELF resolves addresses
to function+offset, and `check` refuses a stage 2 whose layout moved."""
import pathlib
import subprocess

import pytest
from elftools.elf.elffile import ELFFile

from tools.build import symtab

ROOT = pathlib.Path(__file__).resolve().parents[2]

SOURCE = """
static int helper(int x) { return x * 3 + 1; }
int alpha(int x) { return helper(x) + 2; }
int beta(int x) { return alpha(x) * alpha(x + 1); }
void _start(void) { for (;;) { beta(1); } }
"""

# Same shape as kernel/linker.ld: .ksymtab last, or (bad) first.
def script(ksymtab_last):
    ks = ".ksymtab : ALIGN(4096) { KEEP(*(.ksymtab)) }"
    body = ".text : ALIGN(4096) { *(.text .text.*) }\n .data : ALIGN(4096) { *(.data .bss) }"
    order = f"{body}\n {ks}" if ksymtab_last else f"{ks}\n {body}"
    discard = "/DISCARD/ : { *(.eh_frame .note* .comment) }"
    return f"ENTRY(_start)\nSECTIONS {{\n . = 0x200000;\n {order}\n {discard}\n}}\n"


def run(*cmd, cwd):
    subprocess.run([str(c) for c in cmd], check=True, cwd=cwd, capture_output=True)


def link(tmp, name, ksymtab_obj, last=True):
    lds = tmp / f"{name}.ld"
    lds.write_text(script(last))
    out = tmp / f"{name}.elf"
    run("ld", "-nostdlib", "-static", "-no-pie", "-z", "noexecstack", "-T", lds,
        "-o", out, tmp / "prog.o", ksymtab_obj, cwd=tmp)
    return out


def blob_object(tmp, blob_path, name):
    out = tmp / f"{name}.o"
    run("objcopy", "-I", "binary", "-O", "elf64-x86-64", "-B", "i386:x86-64",
        "--rename-section", ".data=.ksymtab,alloc,load,readonly,data,contents",
        blob_path, out, cwd=tmp)
    return out


@pytest.fixture
def stages(tmp_path):
    (tmp_path / "prog.c").write_text(SOURCE)
    run("gcc", "-O1", "-fno-pic", "-fno-pie", "-fno-asynchronous-unwind-tables",
        "-fno-inline", "-c", "prog.c", "-o", "prog.o", cwd=tmp_path)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(symtab.encode([]))
    stage1 = link(tmp_path, "stage1", blob_object(tmp_path, empty, "empty"))
    table = tmp_path / "symtab.bin"
    assert symtab.main(["symtab.py", "build", str(stage1), str(table)]) == 0
    ks_obj = blob_object(tmp_path, table, "ks")
    return tmp_path, stage1, table, ks_obj


def functions(elf_path):
    with open(elf_path, "rb") as f:
        return {s.name: (s["st_value"], s["st_size"])
                for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                if s["st_info"]["type"] == "STT_FUNC"}


def test_table_is_sorted_and_resolves(stages):
    tmp, stage1, table, _ = stages
    entries = symtab.decode(table.read_bytes())
    funcs = functions(stage1)
    assert {n for _, _, n in entries} == set(funcs) >= {"helper", "alpha", "beta", "_start"}
    assert [a for a, _, _ in entries] == sorted(a for a, _, _ in entries)
    for name, (addr, size) in funcs.items():
        assert symtab.lookup(entries, addr) == (name, 0)
        assert symtab.lookup(entries, addr + size - 1) == (name, size - 1)
    lowest = min(a for a, _ in funcs.values())
    assert symtab.lookup(entries, lowest - 1) is None
    highest = max(funcs.values())
    assert symtab.lookup(entries, highest[0] + highest[1] + 64) is None


def test_check_accepts_ksymtab_last(stages):
    tmp, stage1, _, ks_obj = stages
    stage2 = link(tmp, "stage2", ks_obj)
    assert symtab.main(["symtab.py", "check", str(stage1), str(stage2)]) == 0
    assert functions(stage1) == functions(stage2)


def test_check_refuses_moved_symbols(stages, capsys):
    tmp, stage1, _, ks_obj = stages
    stage2 = link(tmp, "stage2_bad", ks_obj, last=False)
    assert symtab.main(["symtab.py", "check", str(stage1), str(stage2)]) == 1
    assert "moved" in capsys.readouterr().err


def test_check_refuses_stale_table(stages, capsys):
    tmp, stage1, _, _ = stages
    wrong = tmp / "wrong.bin"
    wrong.write_bytes(symtab.encode([(0x200000, 4, "not_a_real_function")]))
    stage2 = link(tmp, "stage2_stale", blob_object(tmp, wrong, "wrong"))
    assert symtab.main(["symtab.py", "check", str(stage1), str(stage2)]) == 1
    assert "does not match" in capsys.readouterr().err
