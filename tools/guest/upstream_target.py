#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Serial bridge that makes a LociOS guest look like a board to MicroPython's own
test runner (`run-tests.py -t exec:"python tools/guest/upstream_target.py"`).

It boots the image through qemu/launch.py's `test` profile with the serial line on a
Unix socket (never -serial mon:stdio: QEMU would take Ctrl-A, the raw REPL's key),
discards the firmware's output, and forwards the guest from our banner on. Input is held
until the first `>>> ` prompt, because OVMF reads COM1 too and would eat early bytes.

If the guest stops (a kernel fault ends QEMU), the bridge logs it to stderr, boots a
fresh guest and replays what the runner sent since its last `\\r\\x03` (pyboard.py
starts every test with it), so one crash costs one test, not the rest of the run.
With --rw-aggressive, after every soft reset (pyboard.py makes one before each test) and
before the runner sees the raw REPL's prompt, the bridge itself runs
`_rw.aggressive(True)` in the guest (issue 7's correctness bar: the suite with every
function rewritten at its first call); the rewriter's counters go to --rw-stats.
Standard library only: it runs under whatever python3 the runner uses.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.guest.console import ConsoleError, ConsoleTimeout, LineClosed
from tools.guest.guestconsole import Guest
from tools.guest.qemuproc import IMAGE, QemuError

BANNER = b"LociOS "
PROMPT = b">>> "
BOOT_TIMEOUT = 120.0
SOFT_REBOOT = b"soft reboot\r\n"
RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
# Run in the fresh VM after each soft reset; __import__ leaves the test's globals alone.
# It prints the counters since boot (they survive soft resets) before switching on.
RW_ON = b"print(repr(__import__('_rw').stats()));__import__('_rw').aggressive(True)"


def log(msg: str) -> None:
    sys.stderr.write(f"upstream_target: {msg}\n")
    sys.stderr.flush()


class GuestLink:
    """One booted guest (QEMU and its serial line) and where QEMU's own log goes."""

    def __init__(self, image: Path, mem: str, icount: bool, qemu_log: Path | None):
        self.qemu_log = qemu_log
        try:
            self.guest = Guest(image, mem=mem, icount=icount)
        except QemuError as e:
            raise RuntimeError(str(e)) from e
        self.link = self.guest.link

    def wait_banner(self) -> bytes:
        """Reads until the banner and the first prompt; returns the console text from
        the banner on (what the runner may see)."""
        g = self.guest
        deadline = time.monotonic() + BOOT_TIMEOUT
        try:
            g.expect(re.escape(BANNER), timeout=BOOT_TIMEOUT)
            g.expect(re.escape(PROMPT), timeout=max(deadline - time.monotonic(), 0))
        except ConsoleTimeout:
            raise RuntimeError(f"no banner within {BOOT_TIMEOUT:.0f} s:\n{g.buf[-2000:]!r}") \
                from None
        except LineClosed:
            raise RuntimeError(f"guest stopped during boot:\n{g.buf[-2000:]!r}") from None
        return BANNER + g.before + PROMPT + self.unread()

    def read(self) -> bytes:
        """What the guest sent (b"" once the line closed): the bridge forwards it."""
        try:
            return self.link.read(0)
        except LineClosed:
            return b""

    def unread(self) -> bytes:
        """Output the console read past what it waited for (forwarded next)."""
        data, self.guest.buf = self.guest.buf, b""
        return data

    def send(self, data: bytes) -> None:
        self.link.write(data)

    def close(self) -> int | None:
        if self.qemu_log:
            with open(self.qemu_log, "ab") as out:
                out.write(self.guest.qemu.log_path.read_bytes())
        return self.guest.qemu.close()


# Guests still running, closed on every way out.
LINKS: list[GuestLink] = []


def write_all(fd: int, data: bytes) -> None:
    while data:
        n = os.write(fd, data)
        data = data[n:]


def marker_split(buf: bytes, marker: bytes) -> tuple[bytes, bytes]:
    """(what can be forwarded now, what must wait): the bytes through `marker` if it is
    in buf, else all but a tail that could be the start of a marker still arriving."""
    i = buf.find(marker)
    if i >= 0:
        return buf[:i + len(marker)], buf[i + len(marker):]
    for k in range(min(len(marker) - 1, len(buf)), 0, -1):
        if marker.startswith(buf[-k:]):
            return buf[:-k], buf[-k:]
    return buf, b""


class AggressiveSwitch:
    """Holds the guest's raw REPL prompt after a soft reboot until `_rw.aggressive(True)`
    has run, so the runner (waiting for that prompt) sends the test only afterwards."""

    def __init__(self, stats: Path | None):
        self.stats = stats
        self.held = b""
        self.after_reboot = False
        self.switched = 0

    def feed(self, link: GuestLink, data: bytes) -> bytes:
        """Guest output in; what the runner may see now out."""
        out = b""
        self.held += data
        while True:
            if not self.after_reboot:
                now, self.held = marker_split(self.held, SOFT_REBOOT)
                out += now
                if not now.endswith(SOFT_REBOOT):
                    return out
                self.after_reboot = True
            i = self.held.find(RAW_PROMPT)
            if i < 0:
                return out
            self.switch_on(link)
            out += self.held[:i + len(RAW_PROMPT)]
            self.held = self.held[i + len(RAW_PROMPT):] + link.unread()
            self.after_reboot = False

    def switch_on(self, link: GuestLink) -> None:
        g = link.guest
        try:
            g.raw_send(RW_ON, timeout=30)
            out, err = g.raw_finish(timeout=30)
        except (ConsoleTimeout, LineClosed) as e:
            raise ConnectionError(f"no reply to _rw.aggressive(True): {e}") from e
        except ConsoleError as e:
            raise RuntimeError(f"_rw.aggressive(True) failed in the guest: {e}") from e
        if err.strip():
            raise RuntimeError(f"_rw.aggressive(True) failed in the guest: {out + err!r}")
        self.switched += 1
        if self.stats:
            with open(self.stats, "a") as f:
                f.write(f"{self.switched} {out.decode(errors='replace').strip()}\n")
def bridge(args: argparse.Namespace) -> int:
    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    # Runner input waits in the stdin pipe while a guest boots. After a reboot, what
    # the runner sent since its last \r\x03 is replayed.
    since_break = b""
    boots = 0
    while True:
        boots += 1
        switch = AggressiveSwitch(args.rw_stats) if args.rw_aggressive else None
        if switch and args.rw_stats:
            with open(args.rw_stats, "a") as f:
                f.write(f"boot {boots}\n")
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
            link.send(since_break)
        while True:
            r, _, _ = select.select([link.link, stdin], [], [])
            if link.link in r:
                data = link.read()
                if not data:
                    status = link.close()
                    LINKS.remove(link)
                    log(f"guest stopped (QEMU status {status}); booting a fresh one")
                    break
                if switch:
                    try:
                        data = switch.feed(link, data)
                    except ConnectionError as e:
                        status = link.close()
                        LINKS.remove(link)
                        log(f"{e} (QEMU status {status}); booting a fresh one")
                        break
                    except RuntimeError as e:
                        log(str(e))
                        return 3
                write_all(stdout, data)
            if stdin in r:
                data = os.read(stdin, 65536)
                if not data:
                    return 0  # the runner is done with the guest
                k = data.rfind(b"\r\x03")
                since_break = data[k:] if k >= 0 else since_break + data
                link.send(data)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", type=Path, default=IMAGE)
    ap.add_argument("--mem", default="512M")
    ap.add_argument("--icount", action="store_true")
    ap.add_argument("--qemu-log", type=Path, help="append QEMU's own messages here")
    ap.add_argument("--rw-aggressive", action="store_true",
                    help="run _rw.aggressive(True) in the guest after every soft reset")
    ap.add_argument("--rw-stats", type=Path, help="append the guest's _rw.stats() here "
                    "(one line per switch, `boot N` at each boot)")
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
