# SPDX-License-Identifier: MIT
"""Drives one LociOS guest in QEMU over its serial console (tests and benchmarks).

A Guest boots the image through qemu/launch.py's `test` profile with the serial line on
a Unix socket — a clean byte stream, with none of a terminal's newline translation —
waits for the banner and prompt, and then talks to the friendly REPL the way a person at
the console would. Everything the guest prints is also appended to a log file.
"""

from __future__ import annotations

import ast
import re
import threading
import time
from pathlib import Path

import pexpect
import pexpect.fdpexpect

from tools.guest.qemuproc import IMAGE, ROOT, QemuProcess

__all__ = ["IMAGE", "ROOT", "Guest", "clean"]

PROMPT = ">>> "
# OVMF ~4.6 s under TCG, then loader + kernel; generous for a loaded 2-core machine.
BOOT_TIMEOUT = 90
# Under -icount the firmware runs at a fixed, slower instruction rate, more so on a busy
# host: its boots get this many times longer.
ICOUNT_BOOT_FACTOR = 3
ANSI = re.compile(rb"\x1b\[[0-9;=?]*[A-Za-z]")


class Guest:
    def __init__(self, image: Path = IMAGE, mem: str = "512M", extra: list[str] | None = None,
                 log: Path | None = None, icount: bool = False):
        self.started = time.monotonic()
        self.icount = icount
        self.qemu = QemuProcess(image, mem=mem, extra=extra, icount=icount)
        self.proc = self.qemu.proc
        self.child = pexpect.fdpexpect.fdspawn(self.qemu.sock.fileno(), timeout=30)
        self.log = open(log, "ab") if log else None
        if self.log:
            self.child.logfile_read = self.log
        self.exit_status: int | None = None

    # ---- waiting ------------------------------------------------------------------
    def expect(self, pattern, timeout: float = 30) -> bytes:
        """Waits for a regex (str or bytes); returns everything before it."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        self.child.expect(pattern, timeout=timeout)
        return self.child.before

    def boot(self) -> str:
        """Waits for the first prompt; returns the console text up to it, escapes removed."""
        timeout = BOOT_TIMEOUT * (ICOUNT_BOOT_FACTOR if self.icount else 1)
        before = self.expect(re.escape(PROMPT), timeout=timeout)
        self.boot_seconds = time.monotonic() - self.started
        return clean(before)

    def wait_exit(self, timeout: float = 60) -> int:
        """Waits for QEMU to end (the serial line closes); returns its exit status."""
        self.child.expect(pexpect.EOF, timeout=timeout)
        self.exit_status = self.qemu.wait(timeout=timeout)
        return self.exit_status

    # ---- talking to the REPL -----------------------------------------------------------
    def send(self, text: str | bytes) -> None:
        self.child.send(text.encode() if isinstance(text, str) else text)

    def run(self, line: str, timeout: float = 30) -> str:
        """Types one line at the prompt; returns what it printed (without the echo)."""
        self.send(line + "\r")
        out = clean(self.expect(re.escape(PROMPT), timeout=timeout))
        echoed = line + "\r\n"
        if out.startswith(echoed):
            out = out[len(echoed):]
        return out.replace("\r\n", "\n")

    def eval(self, expr: str, timeout: float = 30) -> str:
        return self.run(expr, timeout=timeout).strip()

    def ask(self, expr: str, timeout: float = 30):
        """The value of expr, read back from its repr (numbers, strings, containers)."""
        out = self.eval(expr, timeout=timeout)
        try:
            return ast.literal_eval(out)
        except (ValueError, SyntaxError):
            raise AssertionError(f"{expr!r} printed {out!r}") from None

    def paste(self, source: str, timeout: float = 30) -> str:
        """Sends a block in paste mode (Ctrl-E ... Ctrl-D), as a person pasting code."""
        self.send(b"\x05")
        self.expect(r"paste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== ")
        # The lines go from a second thread while this one reads the echo: past a few KiB
        # the echo would fill the socket towards us, the guest would block on output and
        # stop reading input, and both sides would wait for ever.
        text = "\r".join(source.strip("\n").split("\n")) + "\r\x04"
        sender = threading.Thread(target=self.send, args=(text,))
        sender.start()
        try:
            out = self.expect(re.escape(PROMPT), timeout=timeout)
        finally:
            sender.join()
        return clean(out).replace("\r\n", "\n")

    def close(self) -> None:
        self.qemu.close()
        if self.log:
            self.log.close()
            self.log = None


def clean(data: bytes) -> str:
    return ANSI.sub(b"", data).decode("utf-8", "replace")
