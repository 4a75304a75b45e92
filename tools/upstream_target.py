#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Serial bridge that makes a LociOS guest look like a board to MicroPython's own
test runner (`run-tests.py -t exec:"python tools/upstream_target.py"`).

It boots the image through qemu/launch.py's `test` profile with the serial line on a
Unix socket (never -serial mon:stdio: QEMU would take Ctrl-A, the raw REPL's key),
discards the firmware's output, and forwards the guest from our banner on. Input is held
until the first `>>> ` prompt, because OVMF reads COM1 too and would eat early bytes.

If the guest stops (a kernel fault ends QEMU), the bridge logs it to stderr, boots a
fresh guest and replays what the runner sent since its last `\\r\\x03` (pyboard.py
starts every test with it), so one crash costs one test, not the rest of the run.
Standard library only: it runs under whatever python3 the runner uses.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
from pathlib import Path

from qemuproc import IMAGE, QemuError, QemuProcess

BANNER = b"LociOS "
PROMPT = b">>> "
BOOT_TIMEOUT = 120.0
# Keep at most this much pre-banner output for the error message of a failed boot.
BOOT_LOG_MAX = 64 * 1024


def log(msg: str) -> None:
    sys.stderr.write(f"upstream_target: {msg}\n")
    sys.stderr.flush()


class GuestLink:
    """One QEMU process and the connected serial socket."""

    def __init__(self, image: Path, mem: str, icount: bool, qemu_log: Path | None):
        self.qemu_log = qemu_log
        try:
            self.qemu = QemuProcess(image, mem=mem, icount=icount)
        except QemuError as e:
            raise RuntimeError(str(e)) from e
        self.proc, self.sock = self.qemu.proc, self.qemu.sock

    def wait_banner(self) -> bytes:
        """Reads until the banner and the first prompt; returns the console text from
        the banner on (what the runner may see)."""
        buf = b""
        deadline = time.monotonic() + BOOT_TIMEOUT
        while True:
            i = buf.find(BANNER)
            if i >= 0 and buf.find(PROMPT, i) >= 0:
                return buf[i:]
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no banner within {BOOT_TIMEOUT:.0f} s:\n{buf[-2000:]!r}")
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                data = self.sock.recv(65536)
                if not data:
                    raise RuntimeError(f"guest stopped during boot:\n{buf[-2000:]!r}")
                buf = (buf + data)[-BOOT_LOG_MAX:]

    def close(self) -> int | None:
        if self.qemu_log:
            with open(self.qemu_log, "ab") as out:
                out.write(self.qemu.log_path.read_bytes())
        return self.qemu.close()


# Guests still running, closed on every way out.
LINKS: list[GuestLink] = []


def write_all(fd: int, data: bytes) -> None:
    while data:
        n = os.write(fd, data)
        data = data[n:]


def bridge(args: argparse.Namespace) -> int:
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    # Runner input waits in the stdin pipe while a guest boots. After a reboot, what
    # the runner sent since its last \r\x03 is replayed.
    since_break = b""
    boots = 0
    while True:
        boots += 1
        link = GuestLink(args.image, args.mem, args.icount, args.qemu_log)
        LINKS.append(link)
        try:
            text = link.wait_banner()
        except RuntimeError as e:
            log(f"boot {boots} failed: {e}")
            return 3
        if boots == 1:
            write_all(stdout, text)
        elif since_break:
            link.sock.sendall(since_break)
        while True:
            r, _, _ = select.select([link.sock, stdin], [], [])
            if link.sock in r:
                try:
                    data = link.sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    status = link.close()
                    LINKS.remove(link)
                    log(f"guest stopped (QEMU status {status}); booting a fresh one")
                    break
                write_all(stdout, data)
            if stdin in r:
                data = os.read(stdin, 65536)
                if not data:
                    return 0  # the runner is done with the guest
                k = data.rfind(b"\r\x03")
                since_break = data[k:] if k >= 0 else since_break + data
                link.sock.sendall(data)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=IMAGE)
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--icount", action="store_true")
    ap.add_argument("--qemu-log", type=Path, help="append QEMU's own messages here")
    args = ap.parse_args(argv)
    # The runner ends us with SIGTERM to our process group; QEMU's launcher is in its
    # own session, so take it down explicitly.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        return bridge(args)
    except BrokenPipeError:
        return 0
    finally:
        for link in LINKS:
            link.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
