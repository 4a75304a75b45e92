# SPDX-License-Identifier: MIT
"""A CPU exception at ring 0 ends in a register dump and a clean stop, never a triple
fault or a reboot loop. QEMU runs with -no-reboot, so a triple fault would show up as
QEMU exiting 0 without the dump; isa-debug-exit gives the kernel's own status."""

from __future__ import annotations

import re

from guestconsole import IMAGE, Guest

# kernel/config.h: the isa-debug-exit value after a fatal exception, and QEMU's status.
PANIC_EXIT_STATUS = (0x31 << 1) | 1


def test_null_read_from_python_gives_symbolised_page_fault_dump(tmp_path):
    g = Guest(IMAGE, log=tmp_path / "serial.log")
    try:
        g.boot()
        g.send("import machine; machine.mem32[0]\r")
        status = g.wait_exit(timeout=60)
        dump = (tmp_path / "serial.log").read_bytes().decode(errors="replace")
    finally:
        g.close()
    dump = dump[dump.index("machine.mem32[0]"):]
    assert re.search(r"(?i)page fault", dump), dump
    assert re.search(r"CR2\s*[=:]?\s*0x0+\b", dump), dump
    for reg in ("RIP", "RSP", "CR3", "error"):
        assert reg in dump, dump
    # RIP is named by the embedded symbol table, e.g. "RIP 0x21a3f0 <machine_mem_get+0x1c>".
    assert re.search(r"RIP\S*\s*[=:]?\s*0x[0-9a-f]+\s*<\w+\+0x[0-9a-f]+>", dump), dump
    assert status == PANIC_EXIT_STATUS, f"QEMU exit status {status}\n{dump}"
