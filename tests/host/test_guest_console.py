# SPDX-License-Identifier: MIT
"""tools/guest's console library against a pretend MicroPython on a socket pair (no QEMU):
the friendly REPL (echo, prompt, paste mode with its echo read while a large block is
still being sent), the raw REPL (framing, errors, bytes in binary and base64), waiting
for several patterns (the earliest match wins), the serial log, and a Guest whose line
closes when the machine powers off."""

from __future__ import annotations

import base64
import socket
import threading

import pytest

from tools.guest import guestconsole
from tools.guest.console import (
    PASTE_BANNER,
    RAW_BANNER,
    Console,
    ConsoleError,
    ConsoleTimeout,
    Link,
)

BLOB = bytes(range(256)) * 3 + b"\x04>\r\n"   # bytes the raw REPL's framing uses, too


class FakeRepl:
    """Just enough of MicroPython's REPL on one end of a socket pair: echo and a prompt,
    Ctrl-C, paste mode (Ctrl-E ... Ctrl-D), the raw REPL (Ctrl-A ... Ctrl-D, Ctrl-B)."""

    def __init__(self, sock: socket.socket, banner: bytes = b"LociOS test\r\n>>> "):
        self.sock = sock
        self.received = b""
        self.thread = threading.Thread(target=self._serve, args=(banner,), daemon=True)
        self.thread.start()

    def out(self, data: bytes) -> None:
        self.sock.sendall(data)

    def friendly(self, line: str) -> bytes:
        if line == "poweroff":
            raise EOFError
        return {"1+1": b"2\r\n", "[1, 'a']": b"[1, 'a']\r\n", "boom": b"NameError: boom\r\n",
                "nothing": b"", "result": b"xx RESULT 7 yy\r\n"}.get(line, b"")

    def raw(self, code: str) -> tuple[bytes, bytes]:
        if "_d = BLOB" in code:
            head = b"%d\n" % len(BLOB)
            if "binascii" in code:
                return head + base64.encodebytes(BLOB), b""
            return head + BLOB, b""
        if code == "fail":
            return b"", b"Traceback: fail\r\n"
        return f"ran {len(code)} bytes\r\n".encode(), b""

    def _serve(self, banner: bytes) -> None:
        self.out(b"firmware noise\r\n" + banner)
        mode, line = "friendly", b""
        try:
            while True:
                data = self.sock.recv(4096)
                if not data:
                    return
                self.received += data
                for c in data:
                    b = bytes([c])
                    if mode == "raw":
                        if b == b"\x04":
                            out, err = self.raw(line.decode())
                            self.out(b"OK" + out + b"\x04" + err + b"\x04>")
                            line = b""
                        elif b == b"\x02":
                            mode, line = "friendly", b""
                            self.out(b"\r\nMicroPython\r\n>>> ")
                        else:
                            line += b
                    elif b == b"\x01":
                        mode, line = "raw", b""
                        self.out(RAW_BANNER)
                    elif b == b"\x03":
                        mode, line = "friendly", b""
                        self.out(b"\r\n>>> ")
                    elif b == b"\x05":
                        mode, line = "paste", b""
                        self.out(b"\r\n" + PASTE_BANNER.replace("\\r\\n", "\r\n").encode())
                    elif mode == "paste" and b == b"\x04":
                        self.out(b"\r\npasted %d lines\r\n>>> " % line.count(b"\r"))
                        mode, line = "friendly", b""
                    elif mode == "paste" and b == b"\r":
                        self.out(b"\r\n=== ")
                        line += b
                    elif b == b"\r":
                        self.out(b"\r\n" + self.friendly(line.decode()) + b">>> ")
                        line = b""
                    else:
                        self.out(b)
                        line += b
        except EOFError:
            self.out(b"\r\npowering off\r\n")
        finally:
            self.sock.close()


@pytest.fixture
def console():
    ours, theirs = socket.socketpair()
    repl = FakeRepl(theirs)
    con = Console(Link(ours, "socket"))
    con.expect(">>> ")
    con.repl = repl
    yield con
    ours.close()


def test_friendly_repl_lines_come_back_without_their_echo(console):
    assert console.run("1+1") == "2\n"
    assert console.eval("boom") == "NameError: boom"
    assert console.ask("[1, 'a']") == [1, "a"]
    with pytest.raises(AssertionError, match="printed ''"):
        console.ask("nothing")


def test_the_earliest_match_wins_and_before_after_say_what_was_read(console):
    console.send("result\r")
    # Both patterns are in the reply; the one that starts first is chosen.
    assert console.expect_any([rb"yy", rb"RESULT (\d+)"]) == 1
    assert console.match.group(1) == b"7" and console.after == b"RESULT 7"
    assert console.before.endswith(b"xx ")
    # What followed the match is still there for the next wait.
    assert console.expect(">>> ") == b" yy\r\n"
    with pytest.raises(ConsoleTimeout):
        console.expect("never", timeout=0.3)


def test_paste_of_a_large_block_reads_the_echo_while_sending(console):
    source = "\n".join(f"x{i} = '{'y' * 60}'" for i in range(2000))   # ~140 KiB
    out = console.paste(source, timeout=60)
    assert out.rstrip().endswith("pasted 2000 lines")
    assert console.repl.received.count(b"\r") >= 2000
    assert console.eval("1+1") == "2"


def test_raw_repl_framing_errors_and_bytes(console):
    console.raw_enter()
    assert console.exec("x = 1") == b"ran 5 bytes\r\n"
    with pytest.raises(ConsoleError, match="Traceback: fail"):
        console.exec("fail")
    assert console.raw_bytes("BLOB") == BLOB
    assert console.raw_bytes("BLOB", mode="base64") == BLOB
    console.raw_exit()
    assert console.eval("1+1") == "2"


def test_guest_logs_the_line_and_sees_it_close(tmp_path, monkeypatch):
    class FakeQemu:
        def __init__(self, image, mem, extra, icount, launch=None, qmp=False, incoming=None):
            self.qmp = None
            self.sock, theirs = socket.socketpair()
            self.proc = None
            FakeRepl(theirs)

        def wait(self, timeout=None):
            return 0

        def close(self):
            self.sock.close()
            return 0

    monkeypatch.setattr(guestconsole, "QemuProcess", FakeQemu)
    log = tmp_path / "serial.log"
    with guestconsole.Guest(log=log) as g:
        assert g.boot() == "firmware noise\r\nLociOS test\r\n"
        assert g.eval("1+1") == "2"
        g.send("poweroff\r")
        assert g.wait_exit(timeout=10) == 0
    text = log.read_bytes()
    assert text.startswith(b"firmware noise") and text.endswith(b"powering off\r\n")
