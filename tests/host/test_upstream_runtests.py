# SPDX-License-Identifier: MIT
"""tools/test/upstream_runtests.py against the fetched run-tests.py, with a recording
stand-in for the board: what goes over the raw REPL for a test in a folder copied to the
guest (a chdir exec first, then the test) and for any other test (only the test), and
the .mpy hook's edits."""

from __future__ import annotations

import types
from argparse import Namespace
from pathlib import Path

import pytest

from tools.test import upstream_runtests as urt

RUN_TESTS = urt.TESTS / "run-tests.py"
MPY_CROSS = Path(__file__).resolve().parents[2] / "build" / "port" / "mpy-cross" / "mpy-cross"
pytestmark = pytest.mark.skipif(not RUN_TESTS.is_file(), reason="MicroPython tree not fetched")


class Board:
    """Takes what run-tests.py sends; soft resets and execs in order."""

    def __init__(self):
        self.sent: list[str] = []

    def enter_raw_repl(self, *a, **k):
        self.sent.append("<soft reset>")

    def exec_(self, script):
        self.sent.append(script.decode() if isinstance(script, bytes) else script)
        return b"ok\n"


@pytest.fixture()
def rt(monkeypatch):
    mod = urt.load_run_tests(RUN_TESTS)
    mod.pyboard = types.SimpleNamespace(PyboardError=RuntimeError)
    urt.install(mod, "/data/t", {"import"})
    return mod


def run(rt, test: str, **args) -> list[str]:
    board = Board()
    ns = Namespace(**{"via_mpy": False, "emit": "bytecode", "mpy_cross_flags": "", **args})
    crashed, out = rt.run_script_on_remote_target(board, ns, str(urt.TESTS / test), False)
    assert not crashed and out == b"ok\n"
    assert board.enter_raw_repl.__func__ is Board.enter_raw_repl  # put back afterwards
    return board.sent


def test_test_in_a_copied_folder_runs_there(rt):
    sent = run(rt, "import/import1a.py")
    assert sent[:2] == ["<soft reset>", "__import__('os').chdir('/data/t/import')"]
    assert sent[2] == (urt.TESTS / "import" / "import1a.py").read_text()
    assert len(sent) == 3  # no second soft reset between the chdir and the test


def test_other_tests_are_sent_unchanged(rt):
    sent = run(rt, "basics/0prelim.py")
    assert sent == ["<soft reset>", (urt.TESTS / "basics" / "0prelim.py").read_text()]


@pytest.mark.skipif(not MPY_CROSS.is_file(), reason="mpy-cross not built")
def test_mpy_hook_keeps_the_test_folder_as_cwd(rt):
    rt.MPYCROSS = str(MPY_CROSS)
    in_dir = run(rt, "import/import1a.py", via_mpy=True)
    other = run(rt, "basics/0prelim.py", via_mpy=True)
    assert in_dir[1] == "__import__('os').chdir('/data/t/import')"
    assert "sys.path.insert(0, '/__vfstest')" in in_dir[-1]
    assert "os.chdir('/__vfstest')" not in in_dir[-1]
    assert "'/__injected_test.mpy'" in in_dir[-1]
    # Any other test gets run-tests.py's hook as it is.
    assert other[-1].endswith(rt.injected_import_hook_code)
    assert "os.chdir('/__vfstest')" in other[-1] and "'/__injected_test.mpy'" not in other[-1]


def test_a_tree_without_the_expected_hook_is_refused():
    mod = urt.load_run_tests(RUN_TESTS)
    mod.injected_import_hook_code = mod.injected_import_hook_code.replace("os.chdir", "os.cd")
    with pytest.raises(SystemExit, match="not the one it was written for"):
        urt.install(mod, "/data/t", {"import"})
