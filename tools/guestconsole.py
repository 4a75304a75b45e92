# SPDX-License-Identifier: MIT
"""Drives one LociOS guest in QEMU over its serial console (tests and benchmarks).

A Guest boots the image through qemu/launch.py's `test` profile (serial on stdio, no
QEMU escape key), waits for the banner and prompt, and then talks to the friendly REPL
the way a person at the console would.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "qemu" / "launch.py"
IMAGE = ROOT / "build" / "lociOS.img"

PROMPT = ">>> "
# OVMF ~4.6 s under TCG, then loader + kernel; generous for a loaded 2-core machine.
BOOT_TIMEOUT = 90
ANSI = re.compile(rb"\x1b\[[0-9;=?]*[A-Za-z]")


class Guest:
    def __init__(self, image: Path = IMAGE, mem: str = "512M", extra: list[str] | None = None,
                 log: Path | None = None):
        if not image.is_file():
            raise FileNotFoundError(f"{image} is missing: run `make image` first")
        args = [str(LAUNCH), "test", "--image", str(image), "--mem", mem]
        if extra:
            args += ["--", *extra]
        self.started = time.monotonic()
        self.child = pexpect.spawn(sys.executable, args, timeout=30, echo=False)
        self.log = open(log, "wb") if log else None
        if self.log:
            self.child.logfile_read = self.log

    # ---- waiting ------------------------------------------------------------------
    def expect(self, pattern, timeout: float = 30) -> bytes:
        """Waits for a regex (str or bytes); returns everything before it."""
        if isinstance(pattern, str):
            pattern = pattern.encode()
        self.child.expect(pattern, timeout=timeout)
        return self.child.before

    def boot(self) -> str:
        """Waits for the first prompt; returns the console text up to it, escapes removed."""
        before = self.expect(re.escape(PROMPT), timeout=BOOT_TIMEOUT)
        self.boot_seconds = time.monotonic() - self.started
        return clean(before)

    def wait_exit(self, timeout: float = 60) -> int:
        """Waits for QEMU to end; returns its exit status."""
        self.child.expect(pexpect.EOF, timeout=timeout)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1

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

    def paste(self, source: str, timeout: float = 30) -> str:
        """Sends a block in paste mode (Ctrl-E ... Ctrl-D), as a person pasting code."""
        self.send(b"\x05")
        self.expect(r"paste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== ")
        for line in source.strip("\n").split("\n"):
            self.send(line + "\r")
        self.send(b"\x04")
        return clean(self.expect(re.escape(PROMPT), timeout=timeout)).replace("\r\n", "\n")

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        if self.log:
            self.log.close()


def clean(data: bytes) -> str:
    return ANSI.sub(b"", data).decode("utf-8", "replace")
