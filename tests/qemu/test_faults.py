# SPDX-License-Identifier: MIT
"""A CPU exception the kernel cannot turn into a Python exception (a fault inside the
kernel's own C) ends in a register dump and a clean stop, never a triple fault or a
reboot loop. QEMU runs with -no-reboot, so a triple fault would show up as QEMU exiting
0 without the dump; isa-debug-exit gives the kernel's own status. Faults caused from
Python (machine.mem32[0]) are recovered instead: see test_hardening.py."""

from __future__ import annotations

import re

import pytest

from tools.guest.guestconsole import IMAGE, Guest

# kernel/config.h: the isa-debug-exit value after a fatal exception, and QEMU's status.
PANIC_EXIT_STATUS = (0x31 << 1) | 1


def crash(tmp_path, kind: str) -> tuple[str, int]:
    g = Guest(IMAGE, log=tmp_path / "serial.log")
    try:
        g.boot()
        g.send(f"import kernel; kernel.crash('{kind}')\r")
        status = g.wait_exit(timeout=60)
        dump = (tmp_path / "serial.log").read_bytes().decode(errors="replace")
    finally:
        g.close()
    return dump[dump.index("kernel.crash("):], status


def test_null_read_in_kernel_c_gives_symbolised_page_fault_dump(tmp_path):
    dump, status = crash(tmp_path, "null")
    assert re.search(r"(?i)page fault", dump), dump
    assert re.search(r"CR2\s*[=:]?\s*0x0+8\b", dump), dump
    assert "NULL pointer dereference" in dump, dump
    for reg in ("RIP", "RSP", "CR3", "error"):
        assert reg in dump, dump
    # RIP is named by the embedded symbol table: the fault is inside kcrash.
    assert re.search(r"RIP\S*\s*[=:]?\s*0x[0-9a-f]+\s*<kcrash\+0x[0-9a-f]+>", dump), dump
    # The backtrace scan finds the Python-facing caller on the stack.
    assert "<kernel_crash+" in dump, dump
    assert status == PANIC_EXIT_STATUS, f"QEMU exit status {status}\n{dump}"


@pytest.mark.parametrize("kind, expect", [
    ("stack", r"guard page below the main stack: stack overflow"),
    ("ud", r"#UD invalid opcode"),
])
def test_other_kernel_faults_are_reported(tmp_path, kind, expect):
    dump, status = crash(tmp_path, kind)
    assert re.search(expect, dump), dump
    assert "KERNEL FAULT" in dump, dump
    assert status == PANIC_EXIT_STATUS, f"QEMU exit status {status}\n{dump}"
