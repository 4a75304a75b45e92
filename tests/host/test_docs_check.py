# SPDX-License-Identifier: MIT
"""tools/build/docs_check.py on small throw-away git repositories: a README naming a
path and a make target that do not exist is reported line by line; one where all
exist passes."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHECKER = Path(__file__).resolve().parents[2] / "tools" / "build" / "docs_check.py"

MAKEFILE = """\
all: build
build:
\t@true
colony-%: build
\t@true
"""

GOOD_README = """\
# demo
`make build` and `make colony-foraging SEEDS=1-3` print 1.25x in 3 s.
See `kernel/arch.h`, `tools/bench/bench_vm.py`, `vm/patches/0009-*.patch`,
`vm/patches/0009`, the folder `vm/opt/`, [the kernel](kernel/README.md), `build/out.img`
(an output) and [the design](../shared/design/ARCHITECTURE.md) (outside the repository).

    make build   # the image
"""

GOOD_SUB_README = "`arch.h` and `opt/x.py` here; [up](../kernel/arch.h).\n"


def make_repo(root: Path, readme: str) -> None:
    files = {
        "Makefile": MAKEFILE,
        "README.md": readme,
        "kernel/arch.h": "",
        "kernel/README.md": "",
        "tools/bench/bench_vm.py": "",
        "vm/patches/0009-native-small-int.patch": "",
        "vm/opt/x.py": "",
        "vm/README.md": GOOD_SUB_README,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)


def run_checker(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("make") is None, reason="needs git and make"
)


def test_all_present_passes(tmp_path):
    make_repo(tmp_path, GOOD_README)
    r = run_checker(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == ""


def test_missing_path_and_target_reported(tmp_path):
    readme = GOOD_README + (
        "\nRun `make bench-nowhere` to get 2.0x (`tools/bench/gone.py`).\n[gone](kernel/gone.c)\n"
    )
    make_repo(tmp_path, readme)
    (tmp_path / "vm/README.md").write_text("`opt/missing.py`\n")
    r = run_checker(tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "README.md:9: `make bench-nowhere`: the Makefile has no target 'bench-nowhere'" in lines
    assert "README.md:9: tools/bench/gone.py: no such path in the tree" in lines
    assert "README.md:10: link to kernel/gone.c: no such path in the tree" in lines
    assert "vm/README.md:1: vm/opt/missing.py: no such path in the tree" in lines
    assert len(lines) == 4, r.stdout
