# SPDX-License-Identifier: MIT
"""Drives one LociOS guest in QEMU over its serial console (tests, benchmarks, tools).

A Guest boots the image through qemu/launch.py's `test` profile with the serial line on
a Unix socket — a clean byte stream, with none of a terminal's newline translation —
waits for the banner and prompt, and then talks to the REPL as console.Console does (the
friendly REPL the way a person at the console would, or the raw REPL). Everything the
guest prints is also appended to a log file.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

from tools.guest.console import PROMPT, Console, Link, clean
from tools.guest.qemuproc import IMAGE, ROOT, TEST_IMAGE, QemuError, QemuProcess

__all__ = ["IMAGE", "PROMPT", "ROOT", "TEST_IMAGE", "Guest", "clean"]

# OVMF ~4.6 s under TCG, then loader + kernel; generous for a loaded 2-core machine.
BOOT_TIMEOUT = 90
# Under -icount the firmware runs at a fixed, slower instruction rate, more so on a busy
# host: its boots get this many times longer.
ICOUNT_BOOT_FACTOR = 3


class Guest(Console):
    def __init__(self, image: Path = IMAGE, mem: str = "512M", extra: list[str] | None = None,
                 log: Path | None = None, icount: bool = False,
                 launch: list[str] | None = None, qmp: bool = False,
                 restore: Path | None = None):
        """launch: more options of qemu/launch.py (--machine pc, --cpu qemu64, ...).
        qmp: also QEMU's machine protocol, as self.qmp (screendump, send-key).
        restore: resume a guest that save_state left at its prompt, with the same image
        and options, instead of booting one (a second instead of the firmware's boot)."""
        self.started = time.monotonic()
        self.icount = icount
        self.restored = restore is not None
        self.qemu = QemuProcess(image, mem=mem, extra=extra, icount=icount, launch=launch,
                                qmp=qmp or self.restored, incoming=restore)
        self.qmp = self.qemu.qmp
        self.proc = self.qemu.proc
        super().__init__(Link(self.qemu.sock, "socket"), open(log, "ab") if log else None)
        self.exit_status: int | None = None

    def boot(self, timeout: float | None = None) -> str:
        """Waits for the first prompt; returns the console text up to it, escapes removed.
        The timeout defaults to BOOT_TIMEOUT (times ICOUNT_BOOT_FACTOR under -icount)."""
        if timeout is None:
            timeout = BOOT_TIMEOUT * (ICOUNT_BOOT_FACTOR if self.icount else 1)
        if self.restored:
            self._wait_resumed(timeout)
            self.link.write(b"\r")        # the saved guest waits at a prompt: ask again
        before = self.expect(re.escape(PROMPT), timeout=timeout)
        self.boot_seconds = time.monotonic() - self.started
        return clean(before)

    def _wait_resumed(self, timeout: float) -> None:
        # A key sent before the state is loaded would reach a UART the state replaces.
        deadline = time.monotonic() + timeout
        while (status := self.qmp.command("query-status")["status"]) != "running":
            if status not in ("inmigrate", "prelaunch") or time.monotonic() > deadline:
                raise QemuError(f"the saved guest did not resume (QEMU: {status}); "
                                f"its log:\n{self.qemu.log_path.read_text()}")
            time.sleep(0.05)

    def save_state(self, path: Path, timeout: float = 120) -> None:
        """Saves the whole machine (QMP migrate) to path, for Guest(restore=path). The
        guest must have been made with qmp=True and should wait at its prompt; it stays
        paused afterwards. The disk is not in the state: the guest must not have
        written to it (tests boot with snapshot=on, whose writes are lost)."""
        writes = sum(d["stats"]["wr_operations"] for d in self.qmp.command("query-blockstats"))
        if writes:
            raise QemuError(f"the guest wrote to its disk ({writes} writes): a saved state "
                            "would not match the image it is resumed over")
        self.qmp.command("migrate-set-parameters", **{"max-bandwidth": 1 << 40})
        self.qmp.command("migrate", uri="exec:cat > " + shlex.quote(str(path)))
        deadline = time.monotonic() + timeout
        while (info := self.qmp.command("query-migrate")).get("status") != "completed":
            if info.get("status") in ("failed", "cancelled") or time.monotonic() > deadline:
                raise QemuError(f"saving the guest's state failed: {info}")
            time.sleep(0.05)

    def wait_exit(self, timeout: float = 60) -> int:
        """Waits for QEMU to end (the serial line closes); returns its exit status."""
        self.read_eof(timeout)
        self.exit_status = self.qemu.wait(timeout=timeout)
        return self.exit_status

    def close(self) -> None:
        self.qemu.close()
        if self.log:
            self.log.close()
            self.log = None

    def __enter__(self) -> Guest:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
