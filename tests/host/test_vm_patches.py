# SPDX-License-Identifier: MIT
"""vm/patches: each patch says why in its first line and applies cleanly to the pristine
MicroPython tree; the build's patched copy is exactly pristine plus the patches; and
vm/patches.mk rebuilds that copy when, and only when, the patch set changes."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRISTINE = ROOT / "build" / "micropython-1.25.0"
PATCHED = ROOT / "build" / "micropython-1.25.0-lociOS"
STAMP = ".lociOS-patches.sha256"
PATCHES = sorted((ROOT / "vm" / "patches").glob("*.patch"))
NAME = re.compile(r"^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.patch$")


def _apply(tree: Path, patch: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["patch", "-d", str(tree), "-p1", "--batch", "--forward",
                           "--fuzz=0", "--no-backup-if-mismatch", "-r", "-", "-i",
                           str(patch)], capture_output=True, text=True)


def _digests(tree: Path) -> dict[str, str]:
    return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in tree.rglob("*") if p.is_file() and p.name != STAMP}


def test_patches_are_named_numbered_and_give_a_reason():
    assert PATCHES, "vm/patches holds no patch"
    numbers = []
    for p in PATCHES:
        m = NAME.match(p.name)
        assert m, f"{p.name}: want NNNN-short-name.patch"
        numbers.append(int(m.group(1)))
        first, _, rest = p.read_text().partition("\n")
        assert re.fullmatch(r"Reason: \S.{9,}", first), f"{p.name}: first line {first!r}"
        assert rest.startswith("--- a/"), f"{p.name}: the diff must follow the reason line"
    assert numbers == list(range(1, len(PATCHES) + 1)), numbers


@pytest.fixture(scope="module")
def fresh_patched(tmp_path_factory) -> Path:
    """A fresh copy of the pristine tree with every patch applied, in order."""
    tree = tmp_path_factory.mktemp("vm") / "tree"
    shutil.copytree(PRISTINE, tree, symlinks=True)
    for p in PATCHES:
        r = _apply(tree, p)
        assert r.returncode == 0, f"{p.name} does not apply cleanly:\n{r.stdout}{r.stderr}"
        assert "fuzz" not in r.stdout and "offset" not in r.stdout, r.stdout
    return tree


def test_build_copy_is_pristine_plus_patches(fresh_patched):
    assert (PATCHED / STAMP).is_file(), "make build makes the patched tree"
    want, got = _digests(fresh_patched), _digests(PATCHED)
    assert sorted(set(want) ^ set(got)) == []
    assert [f for f in want if want[f] != got[f]] == []
    # and it is up to date with the patch set as make sees it
    stamp = str((PATCHED / STAMP).relative_to(ROOT))
    r = subprocess.run(["make", "-s", "-q", stamp], cwd=ROOT, capture_output=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_patches_change_what_they_say(fresh_patched):
    gc = (fresh_patched / "py" / "gc.c").read_text()
    assert gc.count("MICROPY_GC_ALLOC_HOOK(") == 3  # gc_alloc, in-place growth, move
    cfg = (fresh_patched / "py" / "mpconfig.h").read_text()
    assert "#define MICROPY_GC_ALLOC_HOOK(n_bytes) (0)" in cfg
    assert "import * needs a module" in (fresh_patched / "py" / "runtime.c").read_text()
    assert "super() argument 1 must be a type" in (
        fresh_patched / "py" / "objtype.c").read_text()



def test_rewrite_opcodes_patch_hooks_the_dispatch(fresh_patched):
    """0007: the port's opcode bodies are included inside the dispatch (before the MULTI
    entries and the default case) and its table entries inside the computed-goto table;
    the pristine tree has neither hook."""
    vm = (fresh_patched / "py" / "vm.c").read_text()
    hook = vm.index("#include MICROPY_VM_EXTRA_OPCODES_H")
    assert vm.index("ENTRY(MP_BC_IMPORT_STAR)") < hook < vm.index(
        "ENTRY(MP_BC_LOAD_CONST_SMALL_INT_MULTI)") < vm.index("ENTRY_DEFAULT:")
    table = (fresh_patched / "py" / "vmentrytable.h").read_text()
    entries = table.index("#include MICROPY_VM_EXTRA_ENTRIES_H")
    assert table.index("&&entry_MP_BC_BINARY_OP_MULTI,") < entries < table.index("};")
    for f in ("vm.c", "vmentrytable.h"):
        assert "MICROPY_VM_EXTRA_" not in (PRISTINE / "py" / f).read_text()

def test_c_loop_poll_patch_reaches_every_long_loop(fresh_patched):
    """0014: the long C loops poll MICROPY_C_LOOP_POLL_WORK, which py/mpconfig.h defaults to
    nothing (upstream and the unix oracle unchanged) and vm/vm_hooks.h defines for the
    image; the map and set probe loops only count (they run inside mp_map_rehash, where a
    raise would lose entries). The pristine tree has neither macro."""
    py = fresh_patched / "py"
    want = {"mpz.c": 4,        # mpn_mul, mpn_div, mpz_set_from_str, mpz_as_str_inpl
            "objstr.c": 4,     # find_subbytes, join, split(sep), count
            "objlist.c": 2,    # both scans of mp_quicksort's partition
            "sequence.c": 3,   # mp_seq_cmp_objs, index, count
            "runtime.c": 1}    # mp_iternext
    for f, n in want.items():
        text = (py / f).read_text()
        assert text.count("MICROPY_C_LOOP_POLL_WORK(") == n, f
        assert "MICROPY_C_LOOP_POLL" not in (PRISTINE / "py" / f).read_text(), f
    m = (py / "map.c").read_text()
    assert m.count("MICROPY_C_LOOP_WORK(1);") == 2 and "MICROPY_C_LOOP_POLL" not in m
    cfg = (py / "mpconfig.h").read_text()
    assert "#define MICROPY_C_LOOP_POLL_WORK(work) (void)0" in cfg
    assert "#define MICROPY_C_LOOP_WORK(work) (void)0" in cfg
    # The poll in mp_quicksort sits inside each scan, so a sorted list polls per compare.
    qs = (py / "objlist.c").read_text().split("static void mp_quicksort(", 1)[1]
    qs = qs.split("\n}\n", 1)[0]
    assert qs.count("do {++h;\n                MICROPY_C_LOOP_POLL_WORK(16);") == 1
    hooks = (ROOT / "vm" / "vm_hooks.h").read_text()
    block = hooks.split("#if LOCIOS_BUDGET_HOOKS", 1)[1].split("\n#endif\n#endif", 1)[0]
    assert "#define MICROPY_C_LOOP_POLL_WORK(work)" in block and "budget_poll();" in block
    assert "void budget_poll(void) {" in (ROOT / "vm" / "budget" / "budget.c").read_text()


# ---- vm/patches.mk itself, on a toy tree --------------------------------------------

TOY_MAKEFILE = """\
BUILD := build
MICROPY_DIR := pristine
SETUP_STAMP :=
.PHONY: FORCE
include {mk}
"""

GOOD = """Reason: turns one into two.
--- a/py/x.c
+++ b/py/x.c
@@ -1,2 +1,2 @@
 int x;
-int one;
+int two;
"""


@pytest.fixture
def toy(tmp_path) -> Path:
    (tmp_path / "pristine" / "py").mkdir(parents=True)
    (tmp_path / "pristine" / "py" / "x.c").write_text("int x;\nint one;\n")
    (tmp_path / "vm" / "patches").mkdir(parents=True)
    (tmp_path / "Makefile").write_text(TOY_MAKEFILE.format(mk=ROOT / "vm" / "patches.mk"))
    return tmp_path


def _make(where: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "vm-patches"], cwd=where,
                          capture_output=True, text=True)


def test_patches_mk_rebuilds_only_on_change(toy):
    patch = toy / "vm" / "patches" / "0001-two.patch"
    patch.write_text(GOOD)
    r = _make(toy)
    assert r.returncode == 0, r.stderr
    copy = toy / "build" / "micropython-1.25.0-lociOS"
    assert (copy / "py" / "x.c").read_text() == "int x;\nint two;\n"
    assert (toy / "pristine" / "py" / "x.c").read_text() == "int x;\nint one;\n"
    r = _make(toy)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r  # quiet
    patch.touch()
    assert _make(toy).stdout == ""  # same content: nothing to do
    patch.write_text(GOOD.replace("two", "three"))
    r = _make(toy)
    assert "PATCH" in r.stdout and (copy / "py" / "x.c").read_text() == "int x;\nint three;\n"
    patch.unlink()  # a removed patch is noticed too
    r = _make(toy)
    assert "PATCH" in r.stdout and (copy / "py" / "x.c").read_text() == "int x;\nint one;\n"


def test_patches_mk_fails_loudly_naming_the_patch(toy):
    (toy / "vm" / "patches" / "0001-two.patch").write_text(GOOD)
    (toy / "vm" / "patches" / "0002-stale.patch").write_text(
        GOOD.replace("Reason: turns one into two.", "Reason: expects an older x.c."))
    r = _make(toy)
    assert r.returncode != 0
    assert "vm/patches/0002-stale.patch does not apply" in r.stderr, r.stderr
    assert not (toy / "build" / "micropython-1.25.0-lociOS").exists()


def test_patches_mk_refuses_a_patch_without_reason(toy):
    (toy / "vm" / "patches" / "0001-two.patch").write_text(GOOD.split("\n", 1)[1])
    r = _make(toy)
    assert r.returncode != 0 and "first line must be 'Reason: <why>'" in r.stderr, r.stderr
