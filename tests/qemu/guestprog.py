# SPDX-License-Identifier: MIT
"""Guest programs of the QEMU tests, kept as files in tests/qemu/progs/ (as MicroPython
keeps its tests as data) rather than as strings in the tests. Each file opens with comment
lines (the SPDX line, what the program is for) that the guest never sees."""

from pathlib import Path

PROGS = Path(__file__).resolve().parent / "progs"


def prog(name: str) -> str:
    """The text of progs/<name>.py from its first line that is not a comment: what is
    pasted, so line numbers in the guest count from there."""
    lines = (PROGS / f"{name}.py").read_text().splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return "".join(lines[start:])
