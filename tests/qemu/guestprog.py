# SPDX-License-Identifier: MIT
"""Guest programs of the QEMU tests, kept as files in tests/qemu/progs/ (as MicroPython
keeps its tests as data) rather than as strings in the tests. Each file opens with comment
lines (the SPDX line, what the program is for) that the guest never sees."""

from pathlib import Path

from tools.guest.console import program

PROGS = Path(__file__).resolve().parent / "progs"


def prog(name: str) -> str:
    """The text of progs/<name>.py as the guest gets it (console.program)."""
    return program(PROGS / f"{name}.py")
