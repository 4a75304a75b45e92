#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host console for a LociOS machine: passes the serial REPL through to this terminal, and
pulls trace-field snapshots over the same line through MicroPython's raw REPL.

  console.py term  PORT        the REPL on this terminal (raw mode; Ctrl-] quits)
  console.py qemu              boot build/lociOS.img in QEMU and attach the terminal
  console.py snap  PORT EXPR -o FILE   write the snapshot of field EXPR (e.g. lo.F)

PORT is a serial device or pty (/dev/ttyUSB0, /dev/pts/3: pyserial, --baud), a Unix
socket (unix:PATH, as `qemu/launch.py test --serial-socket PATH` makes), TCP (tcp:HOST:PORT,
QEMU `-serial tcp::4444,server`) or any pyserial URL (rfc2217://...).

As a library: `Console(open_link(port))`, then `.snapshot("lo.F")` -> bytes, checked by
the independent parser tools/field/fieldsnap.py; `boot_qemu()` starts a guest for tools.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import select
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a file: `tools` importable

from tools.field import fieldsnap
from tools.guest.qemuproc import IMAGE, QemuProcess

ESCAPE = 0x1D          # Ctrl-]: leaves the pass-through (as telnet does)
PROMPT = b">>> "
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"


class ConsoleError(Exception):
    pass


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
        r, _, _ = select.select([self.fileno()], [], [], timeout)
        if not r:
            return b""
        if self.kind == "serial":
            data = self.obj.read(max(1, self.obj.in_waiting))
        else:
            data = self.obj.recv(65536)
        if not data:
            raise ConsoleError("the line closed (the machine or QEMU went away)")
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


# ---- talking to the REPL ---------------------------------------------------------------
class Console:
    """The MicroPython REPL on a Link: friendly-REPL lines, the raw REPL for tools."""

    def __init__(self, link: Link):
        self.link = link
        self.buf = b""

    def read_until(self, token: bytes, timeout: float = 30.0) -> bytes:
        """Everything up to and including `token`; ConsoleError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            i = self.buf.find(token)
            if i >= 0:
                out, self.buf = self.buf[:i + len(token)], self.buf[i + len(token):]
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConsoleError(f"no {token!r} within {timeout} s; last output: "
                                   f"{self.buf[-200:]!r}")
            self.buf += self.link.read(min(left, 0.5))

    def read_exact(self, n: int, timeout: float = 60.0) -> bytes:
        deadline = time.monotonic() + timeout
        while len(self.buf) < n:
            if time.monotonic() > deadline:
                raise ConsoleError(f"only {len(self.buf)} of {n} bytes within {timeout} s")
            self.buf += self.link.read(0.5)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def drain(self, quiet: float = 0.2) -> bytes:
        got = b""
        while True:
            d = self.link.read(quiet)
            if not d:
                break
            got += d
        self.buf = b""
        return got

    def prompt(self, timeout: float = 30.0) -> None:
        """Interrupts whatever runs and waits for a fresh friendly prompt."""
        self.link.write(b"\r\x03\x03")
        self.drain()
        self.link.write(b"\r")
        self.read_until(PROMPT, timeout)

    # -- raw REPL: Ctrl-A in, code, Ctrl-D; "OK", stdout, \x04, stderr, \x04, ">" --
    def raw_enter(self) -> None:
        self.link.write(b"\r\x03\x03")
        self.drain()
        self.link.write(b"\x01")
        self.read_until(RAW_BANNER, 10)

    def raw_exit(self) -> None:
        self.link.write(b"\x02")
        self.read_until(PROMPT, 10)

    def raw_send(self, code: str, timeout: float = 30.0) -> None:
        """Sends code and starts it; the caller then reads its output. Code goes in
        chunks with pauses: a real UART has a small receive FIFO and no flow control."""
        data = code.encode()
        for i in range(0, len(data), 256):
            self.link.write(data[i:i + 256])
            if self.link.kind == "serial":
                time.sleep(0.01)
        self.link.write(b"\x04")
        ok = self.read_exact(2, timeout)
        if ok != b"OK":
            raise ConsoleError(f"raw REPL refused the code: {ok + self.drain()!r}")

    def raw_finish(self, timeout: float = 60.0) -> tuple[bytes, bytes]:
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

    def snapshot(self, expr: str = "lo.F", mode: str = "binary",
                 timeout: float = 120.0) -> bytes:
        """The snapshot bytes of the field `expr` evaluates to in the guest, pulled in the
        binary format and validated with fieldsnap.parse (SnapshotError if damaged).
        mode "binary": raw bytes through sys.stdout.buffer after a length line;
        "base64": the text-safe fallback for lines that are not 8-bit clean."""
        self.raw_enter()
        try:
            return self._pull(expr, mode, timeout)
        finally:
            self.raw_exit()

    def pull(self, expr: str, mode: str = "binary", timeout: float = 120.0) -> bytes:
        """As snapshot(), for a caller already in the raw REPL."""
        return self._pull(expr, mode, timeout)

    def _pull(self, expr: str, mode: str, timeout: float) -> bytes:
        if mode == "binary":
            code = (f"import sys\n_d = ({expr}).snapshot()\n"
                    "sys.stdout.write('%d\\n' % len(_d))\nsys.stdout.buffer.write(_d)\n"
                    "del _d\n")
        elif mode == "base64":
            code = (f"import sys, binascii\n_d = ({expr}).snapshot()\n"
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
                raise ConsoleError(f"unexpected output after the snapshot: {out + err!r}")
        else:
            out, err = self.raw_finish(timeout)
            if err:
                raise ConsoleError(f"guest error:\n{err.decode(errors='replace')}")
            data = base64.b64decode(re.sub(rb"\s+", b"", out), validate=True)
        if len(data) != n:
            raise ConsoleError(f"got {len(data)} bytes, the guest announced {n}")
        fieldsnap.parse(data)      # CRC, rules and digest: raises if the line damaged it
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
                    except ConsoleError:
                        return
                    out.write(data)
                    out.flush()
        finally:
            if old:
                termios.tcsetattr(fd, termios.TCSADRAIN, old)


# ---- QEMU, for tools and the `qemu` subcommand ------------------------------------------
class Qemu:
    """A guest booted with qemu/launch.py's test profile, serial on a Unix socket."""

    def __init__(self, image: Path | None = None, mem: str = "512M", icount: bool = False):
        self.qemu = QemuProcess(image or IMAGE, mem=mem, icount=icount)
        self.proc = self.qemu.proc
        self.link = Link(self.qemu.sock, "socket")
        self.console = Console(self.link)

    def boot(self, timeout: float = 120.0) -> bytes:
        return self.console.read_until(PROMPT, timeout)

    def close(self) -> None:
        self.qemu.close()

    def __enter__(self) -> Qemu:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def boot_qemu(**kw) -> Qemu:
    q = Qemu(**kw)
    try:
        q.boot()
    except BaseException:
        q.close()
        raise
    return q


def main(argv: list[str] | None = None) -> int:
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
            with Qemu(mem=args.mem, icount=args.icount) as vm:
                print("console: booting (OVMF takes a few seconds); Ctrl-] quits\r",
                      file=sys.stderr)
                vm.console.interact()
            return 0
        link = open_link(args.port, args.baud)
        con = Console(link)
        if args.cmd == "term":
            print(f"console: connected to {args.port}; Ctrl-] quits\r", file=sys.stderr)
            con.interact()
            return 0
        t0 = time.monotonic()
        data = con.snapshot(args.expr, args.mode)
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
    sys.exit(main())

