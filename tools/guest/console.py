#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The MicroPython REPL of a LociOS machine over its serial line, for people and programs.

  console.py term  PORT        the REPL on this terminal (raw mode; Ctrl-] quits)
  console.py qemu              boot build/lociOS.img in QEMU and attach the terminal
  console.py snap  PORT EXPR -o FILE   write the snapshot of field EXPR (e.g. lo.F)

PORT is a serial device or pty (/dev/ttyUSB0, /dev/pts/3: pyserial, --baud), a Unix
socket (unix:PATH, as `qemu/launch.py test --serial-socket PATH` makes), TCP (tcp:HOST:PORT,
QEMU `-serial tcp::4444,server`) or any pyserial URL (rfc2217://...).

As a library: `Console(open_link(port))` speaks both REPLs over any line: the friendly one
as a person types (run, eval, ask, paste, expect) and the raw one tools use (raw_enter,
exec, raw_bytes). tools/guest/guestconsole.py's Guest is a Console on a QEMU it started.
Standard library only (pyserial for serial ports), so the upstream test bridge can use it
under whatever python3 MicroPython's runner starts.
"""

from __future__ import annotations

import argparse
import ast
import base64
import os
import re
import select
import socket
import sys
import threading
import time
from pathlib import Path

ESCAPE = 0x1D          # Ctrl-]: leaves the pass-through (as telnet does)
PROMPT = ">>> "
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"
PASTE_BANNER = r"paste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== "
ANSI = re.compile(rb"\x1b\[[0-9;=?]*[A-Za-z]")


class ConsoleError(Exception):
    pass


class ConsoleTimeout(ConsoleError, TimeoutError):
    """What was waited for did not come within the timeout."""


class LineClosed(ConsoleError):
    """The line closed: the machine or QEMU went away."""


def clean(data: bytes) -> str:
    """Console bytes as text, terminal escapes removed."""
    return ANSI.sub(b"", data).decode("utf-8", "replace")


# ---- the line: a byte stream with a file descriptor -----------------------------------
class Link:
    """A bidirectional byte stream with a pollable descriptor: a socket or a pyserial
    port. read() returns what is there within `timeout` (b"" on timeout)."""

    def __init__(self, obj, kind: str):
        self.obj, self.kind = obj, kind

    def fileno(self) -> int:
        return self.obj.fileno()

    def write(self, data: bytes) -> None:
        if self.kind == "serial":
            self.obj.write(data)
            self.obj.flush()
        else:
            self.obj.sendall(data)

    def read(self, timeout: float) -> bytes:
        r, _, _ = select.select([self.fileno()], [], [], max(timeout, 0))
        if not r:
            return b""
        try:
            if self.kind == "serial":
                data = self.obj.read(max(1, self.obj.in_waiting))
            else:
                data = self.obj.recv(65536)
        except OSError as e:
            raise LineClosed(f"the line failed ({e}): the machine or QEMU went away") from e
        if not data:
            raise LineClosed("the line closed (the machine or QEMU went away)")
        return data

    def close(self) -> None:
        self.obj.close()


def open_link(port: str, baud: int = 115200, wait: float = 0.0) -> Link:
    """unix:PATH, tcp:HOST:PORT, or a device / pyserial URL. `wait`: keep retrying a
    socket for that many seconds (QEMU creates it a moment after starting)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            if port.startswith("unix:"):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(port[5:])
                return Link(s, "socket")
            if port.startswith("tcp:"):
                host, _, p = port[4:].rpartition(":")
                return Link(socket.create_connection((host or "localhost", int(p))), "socket")
            import serial  # pyserial: devices, ptys, rfc2217:// and socket:// URLs

            return Link(serial.serial_for_url(port, baudrate=baud, timeout=0), "serial")
        except (OSError, ValueError) as e:
            if time.monotonic() >= deadline:
                raise ConsoleError(f"cannot open {port}: {e}") from e
            time.sleep(0.05)


def program(path: Path) -> str:
    """A guest program kept as a file (tests/qemu/progs/): its text from the first line
    that is not a comment. The header (SPDX line, what the program is for) stays on the
    host, so the guest's line numbers count from the program's first line."""
    lines = Path(path).read_text().splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    return "".join(lines[start:])


def _regex(pattern) -> re.Pattern:
    # DOTALL: a `.` in a console pattern may cross line ends.
    if isinstance(pattern, re.Pattern):
        return pattern
    return re.compile(pattern.encode() if isinstance(pattern, str) else pattern, re.DOTALL)


# ---- talking to the REPL ---------------------------------------------------------------
class Console:
    """The MicroPython REPL on a Link. Everything read goes through one buffer (and to
    `log`, a binary file, if given): after expect(), .before is what came before the
    match, .after the match itself and .match its re.Match."""

    def __init__(self, link: Link, log=None):
        self.link = link
        self.log = log
        self.buf = b""
        self.before = self.after = b""
        self.match: re.Match | None = None

    # -- reading ------------------------------------------------------------------------
    def _read(self, timeout: float) -> None:
        data = self.link.read(timeout)
        if data:
            if self.log:
                self.log.write(data)
                self.log.flush()
            self.buf += data

    def _wait(self, find, what: str, timeout: float):
        """Reads until find(buf) gives a result (not None); ConsoleTimeout after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            found = find(self.buf)
            if found is not None:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConsoleTimeout(f"no {what} within {timeout} s; last output: "
                                     f"{self.buf[-200:]!r}")
            self._read(min(left, 0.5))

    def expect_any(self, patterns, timeout: float = 30) -> int:
        """Waits until one of the regexes (str or bytes) matches; of several, the one that
        matches earliest in the output wins. Returns its index; .before, .after, .match
        say what was read."""
        regexes = [_regex(p) for p in patterns]

        def first(buf: bytes):
            best = None
            for i, rx in enumerate(regexes):
                m = rx.search(buf)
                if m and (best is None or m.start() < best[1].start()):
                    best = (i, m)
            return best

        what = " or ".join(repr(rx.pattern) for rx in regexes)
        index, m = self._wait(first, what, timeout)
        self.before, self.after, self.match = self.buf[:m.start()], m.group(0), m
        self.buf = self.buf[m.end():]
        return index

    def expect(self, pattern, timeout: float = 30) -> bytes:
        """Waits for a regex (str or bytes); returns everything before it."""
        self.expect_any([pattern], timeout)
        return self.before

    def read_until(self, token: bytes, timeout: float = 30.0) -> bytes:
        """Everything up to and including `token`."""
        i = self._wait(lambda buf: buf.find(token) if token in buf else None, repr(token),
                       timeout)
        out, self.buf = self.buf[:i + len(token)], self.buf[i + len(token):]
        return out

    def read_exact(self, n: int, timeout: float = 60.0) -> bytes:
        self._wait(lambda buf: True if len(buf) >= n else None, f"{n} bytes", timeout)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_eof(self, timeout: float) -> bytes:
        """Everything until the line closes (the guest powered off or stopped)."""
        try:
            self._wait(lambda buf: None, "end of the line", timeout)
        except LineClosed:
            pass
        out, self.buf = self.buf, b""
        return out

    def drain(self, quiet: float = 0.2) -> bytes:
        """Reads until the line is quiet for `quiet` seconds; returns what came and
        forgets it, with whatever was still unread."""
        start = len(self.buf)
        while True:
            n = len(self.buf)
            self._read(quiet)
            if len(self.buf) == n:
                break
        got, self.buf = self.buf[start:], b""
        return got

    # -- the friendly REPL, as a person at the console ------------------------------------
    def send(self, text: str | bytes) -> None:
        self.link.write(text.encode() if isinstance(text, str) else text)

    def prompt(self, timeout: float = 30.0) -> None:
        """Interrupts whatever runs and waits for a fresh friendly prompt."""
        self.send(b"\r\x03\x03")
        self.drain()
        self.send(b"\r")
        self.read_until(PROMPT.encode(), timeout)

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

    def paste(self, source: str, timeout: float = 30, end: str = re.escape(PROMPT)) -> str:
        """Sends a block in paste mode (Ctrl-E ... Ctrl-D), as a person pasting code, and
        returns the console text up to `end` (a regex; the next prompt by default)."""
        self.send(b"\x05")
        self.expect(PASTE_BANNER)
        # The lines go from a second thread while this one reads the echo: past a few KiB
        # the echo would fill the line towards us, the guest would block on output and
        # stop reading input, and both sides would wait for ever.
        text = "\r".join(source.strip("\n").split("\n")) + "\r\x04"
        sender = threading.Thread(target=self.send, args=(text,))
        sender.start()
        try:
            out = self.expect(end, timeout=timeout)
        finally:
            sender.join()
        return clean(out).replace("\r\n", "\n")

    # -- the raw REPL: Ctrl-A in, code, Ctrl-D; "OK", stdout, \x04, stderr, \x04, ">" --
    def raw_enter(self) -> None:
        self.send(b"\r\x03\x03")
        self.drain()
        self.send(b"\x01")
        self.read_until(RAW_BANNER, 10)

    def raw_exit(self) -> None:
        self.send(b"\x02")
        self.read_until(PROMPT.encode(), 10)

    def raw_send(self, code: str | bytes, timeout: float = 30.0) -> None:
        """Sends code and starts it; the caller then reads its output. Code goes in
        chunks with pauses: a real UART has a small receive FIFO and no flow control."""
        data = code.encode() if isinstance(code, str) else code
        for i in range(0, len(data), 256):
            self.link.write(data[i:i + 256])
            if self.link.kind == "serial":
                time.sleep(0.01)
        self.link.write(b"\x04")
        ok = self.read_exact(2, timeout)
        if ok != b"OK":
            raise ConsoleError(f"raw REPL did not accept the code: {ok + self.buf[:200]!r}")

    def raw_finish(self, timeout: float = 60.0) -> tuple[bytes, bytes]:
        """(stdout, exception text) of the code raw_send started, up to the next '>'."""
        out = self.read_until(b"\x04", timeout)[:-1]
        err = self.read_until(b"\x04", timeout)[:-1]
        self.read_until(b">", timeout)
        return out, err

    def exec(self, code: str, timeout: float = 60.0) -> bytes:
        """Runs code in the raw REPL (entered beforehand); returns stdout, raises on error."""
        self.raw_send(code, timeout)
        out, err = self.raw_finish(timeout)
        if err:
            raise ConsoleError(f"guest error:\n{err.decode(errors='replace')}")
        return out

    def raw_bytes(self, expr: str, mode: str = "binary", timeout: float = 120.0) -> bytes:
        """The bytes the guest expression `expr` evaluates to, from the raw REPL (entered
        beforehand). mode "binary": raw bytes through sys.stdout.buffer after a length
        line; "base64": the text-safe fallback for lines that are not 8-bit clean."""
        if mode == "binary":
            code = (f"import sys\n_d = {expr}\n"
                    "sys.stdout.write('%d\\n' % len(_d))\nsys.stdout.buffer.write(_d)\n"
                    "del _d\n")
        elif mode == "base64":
            code = (f"import sys, binascii\n_d = {expr}\n"
                    "sys.stdout.write('%d\\n' % len(_d))\n"
                    "for _i in range(0, len(_d), 3072):\n"
                    "    sys.stdout.write(binascii.b2a_base64(_d[_i:_i + 3072]))\n"
                    "del _d\n")
        else:
            raise ValueError(f"mode {mode!r}: 'binary' or 'base64'")
        self.raw_send(code, timeout)
        head = self.read_until(b"\n", timeout)
        m = re.fullmatch(rb"\s*(\d+)\r?\n", head)
        if not m:
            out, err = self.raw_finish(timeout)
            raise ConsoleError(f"guest error:\n{(head + out + err).decode(errors='replace')}")
        n = int(m.group(1))
        if mode == "binary":
            data = self.read_exact(n, timeout)
            out, err = self.raw_finish(timeout)
            if out or err:
                raise ConsoleError(f"unexpected output after the bytes: {out + err!r}")
        else:
            out, err = self.raw_finish(timeout)
            if err:
                raise ConsoleError(f"guest error:\n{err.decode(errors='replace')}")
            data = base64.b64decode(re.sub(rb"\s+", b"", out), validate=True)
        if len(data) != n:
            raise ConsoleError(f"got {len(data)} bytes, the guest announced {n}")
        return data

    # -- people: the pass-through -------------------------------------------------------
    def interact(self, escape: int = ESCAPE) -> None:
        """Copies this terminal to the line and back in raw tty mode until the escape
        byte (Ctrl-] by default) is typed or the line closes."""
        import termios
        import tty

        fd = sys.stdin.fileno()
        old = termios.tcgetattr(fd) if os.isatty(fd) else None
        if old:
            tty.setraw(fd)
        out = sys.stdout.buffer
        try:
            if self.buf:
                out.write(self.buf)
                out.flush()
                self.buf = b""
            while True:
                r, _, _ = select.select([fd, self.link.fileno()], [], [])
                if fd in r:
                    data = os.read(fd, 1024)
                    if not data:
                        return
                    if escape in data:
                        data = data[:data.index(escape)]
                        if data:
                            self.link.write(data)
                        return
                    self.link.write(data)
                if self.link.fileno() in r:
                    try:
                        data = self.link.read(0)
                    except LineClosed:
                        return
                    out.write(data)
                    out.flush()
        finally:
            if old:
                termios.tcsetattr(fd, termios.TCSADRAIN, old)


def main(argv: list[str] | None = None) -> int:
    from tools.field import fieldsnap
    from tools.guest.guestconsole import Guest

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("term", help="pass the REPL through to this terminal (Ctrl-] quits)")
    t.add_argument("port")
    q = sub.add_parser("qemu", help="boot the image in QEMU and attach (Ctrl-] quits)")
    q.add_argument("--mem", default="512M")
    q.add_argument("--icount", action="store_true")
    s = sub.add_parser("snap", help="pull a field snapshot in the binary format")
    s.add_argument("port")
    s.add_argument("expr", nargs="?", default="lo.F",
                   help="guest expression giving the Field (default lo.F, the field the "
                        "`lo` helpers show; `import lo` first)")
    s.add_argument("-o", "--out", type=Path, required=True)
    s.add_argument("--mode", choices=("binary", "base64"), default="binary")
    for p in (t, s):
        p.add_argument("--baud", type=int, default=115200)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "qemu":
            with Guest(mem=args.mem, icount=args.icount) as vm:
                print("console: booting (OVMF takes a few seconds); Ctrl-] quits\r",
                      file=sys.stderr)
                vm.interact()
            return 0
        con = Console(open_link(args.port, args.baud))
        if args.cmd == "term":
            print(f"console: connected to {args.port}; Ctrl-] quits\r", file=sys.stderr)
            con.interact()
            return 0
        t0 = time.monotonic()
        data = fieldsnap.snapshot(con, args.expr, args.mode)
        args.out.write_bytes(data)
        snap = fieldsnap.parse(data)
        print(f"{args.out}: {len(data)} B in {time.monotonic() - t0:.2f} s, tick "
              f"{snap.tick}, digest {snap.digest.hex()[:16]}, flavours "
              f"{', '.join(snap.flavours)}")
        return 0
    except (ConsoleError, fieldsnap.SnapshotError) as e:
        print(f"console: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # Run as a file: the repository root makes `tools` importable, and main() runs from
    # the package's copy of this module, whose classes Guest's are.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tools.guest.console import main as package_main

    sys.exit(package_main())
