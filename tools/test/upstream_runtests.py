#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fetched tree's tests/run-tests.py, with each test run in its own folder on the
guest, as the runner does for the unix port (it starts the interpreter with the cwd set
to the test's folder, so `import import1b` finds tests/import/import1b.py).

    upstream_runtests.py --guest-tree /data/mpy-tests --guest-dirs import -- ARGS...

ARGS go to run-tests.py unchanged (run from the tree's tests/ folder). For a test whose
folder (relative to tests/) is one of --guest-dirs, which tools/test/upstream_run.py has
copied into the guest's /data under --guest-tree, the test is preceded, after the raw
REPL's soft reset, by an exec that changes the guest's cwd to that folder. sys.path
keeps its '' entry first, so a sibling module is found there.

Through .mpy, run-tests.py loads the test with a hook that mounts a one-file VFS at
/__vfstest and changes the cwd into it, where no sibling module is. For these tests the
hook is given that mount as a sys.path entry instead, so the test still comes from its
.mpy and its cwd stays its own folder (as unix does with `micropython -m test` in the
test's folder). Every other test runs exactly as run-tests.py sends it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

TESTS = Path(os.environ.get("MICROPY_DIR", Path(__file__).resolve().parents[2] / "build"
                            / "micropython-1.25.0")).resolve() / "tests"
# Edits of run-tests.py's hook (injected_import_hook_code) for a test run in its folder:
# the mount goes on sys.path instead of becoming the cwd, and its stat() is then asked
# for the absolute path within the mount (the VFS passes a relative one only when the
# cwd is in that mount).
HOOK_EDITS = (
    ("os.chdir('/__vfstest')\n__import__('__injected_test')\n",
     "sys.path.insert(0, '/__vfstest')\n__import__('__injected_test')\n"),
    ("if path == '__injected_test.mpy':",
     "if path in ('__injected_test.mpy', '/__injected_test.mpy'):"),
)


def load_run_tests(path: Path):
    spec = importlib.util.spec_from_file_location("run_tests", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["run_tests"] = mod
    spec.loader.exec_module(mod)  # its main() runs only under __name__ == "__main__"
    return mod


def install(rt, guest_tree: str, guest_dirs: set[str]) -> None:
    """Wraps run-tests.py's remote-target runner (it binds it to pyboard.Pyboard when it
    opens the target, after this)."""
    plain_hook = in_dir_hook = rt.injected_import_hook_code
    for old, new in HOOK_EDITS:
        if in_dir_hook.count(old) != 1:
            raise SystemExit(f"upstream_runtests.py: run-tests.py's .mpy import hook has no "
                             f"single {old!r}; this tree is not the one it was written for")
        in_dir_hook = in_dir_hook.replace(old, new)
    original = rt.run_script_on_remote_target

    def run_in_test_dir(pyb, args, test_file, is_special):
        rel = os.path.relpath(os.path.dirname(os.path.abspath(test_file)), TESTS)
        if rel not in guest_dirs:
            rt.injected_import_hook_code = plain_hook
            return original(pyb, args, test_file, is_special)
        guest_dir = f"{guest_tree}/{rel}"
        try:
            pyb.enter_raw_repl()  # the soft reset a test starts from
            # __import__ leaves the test's globals as a fresh VM has them.
            pyb.exec_(f"__import__('os').chdir({guest_dir!r})")
            # The test's own enter_raw_repl() would soft-reset again and lose the cwd.
            enter = pyb.enter_raw_repl
            pyb.enter_raw_repl = lambda *a, **k: None
            rt.injected_import_hook_code = in_dir_hook
            try:
                return original(pyb, args, test_file, is_special)
            finally:
                pyb.enter_raw_repl = enter
                rt.injected_import_hook_code = plain_hook
        except rt.pyboard.PyboardError as e:
            return True, f"chdir({guest_dir!r}) on the target failed: {e}\n".encode() + b"CRASH"

    rt.run_script_on_remote_target = run_in_test_dir


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--guest-tree", required=True, help="guest folder holding the test dirs")
    ap.add_argument("--guest-dirs", required=True, help="comma list of dirs copied there")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    os.chdir(TESTS)
    rt = load_run_tests(TESTS / "run-tests.py")
    install(rt, args.guest_tree.rstrip("/"), set(args.guest_dirs.split(",")))
    sys.argv = [str(TESTS / "run-tests.py"), *rest]
    rt.main()


if __name__ == "__main__":
    main(sys.argv[1:])
