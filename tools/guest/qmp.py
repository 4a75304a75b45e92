#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""QEMU's machine protocol (QMP) for the tests of the screen and the keyboards: read the
screen as exact pixels (`screendump`), type on the guest's keyboard (`send-key`), plug
devices in and out (`device_add`, `device_del`). Standard library only.

    q = Qmp(path)                 # the socket qemu/launch.py --qmp PATH made
    width, height, rgb = q.screen()
    q.type("1+1\\n")               # US layout; q.keys(["ctrl", "c"]) for a chord
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path

# US layout: the character, the QEMU key code (qcode), whether shift is held.
_SHIFTED = dict(zip('!@#$%^&*()_+{}|:"<>?~', "1234567890-=[]\\;',./`", strict=True))
_NAMED = {" ": "spc", "\n": "ret", "\r": "ret", "\t": "tab", "-": "minus", "=": "equal",
          "[": "bracket_left", "]": "bracket_right", "\\": "backslash", ";": "semicolon",
          "'": "apostrophe", ",": "comma", ".": "dot", "/": "slash", "`": "grave_accent",
          "\b": "backspace", "\x1b": "esc"}


def qcodes_for(ch: str) -> list[str]:
    """The keys to press together for one character on a US keyboard."""
    if ch.isascii() and ch.isalpha():
        return ["shift", ch.lower()] if ch.isupper() else [ch]
    if ch.isascii() and ch.isdigit():
        return [ch]
    if ch in _SHIFTED:
        return ["shift", *qcodes_for(_SHIFTED[ch])]
    if ch in _NAMED:
        return [_NAMED[ch]]
    raise ValueError(f"no US-layout key for {ch!r}")


class QmpError(Exception):
    pass


class Qmp:
    def __init__(self, path: Path, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise QmpError(f"no QMP socket at {path}") from None
                time.sleep(0.05)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rwb")
        self._read()                       # the greeting
        self.command("qmp_capabilities")

    def _read(self) -> dict:
        while True:
            line = self.file.readline()
            if not line:
                raise QmpError("QEMU closed the QMP socket")
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def command(self, name: str, **args):
        self.file.write(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        self.file.flush()
        reply = self._read()
        if "error" in reply:
            raise QmpError(f"{name}: {reply['error'].get('desc', reply['error'])}")
        return reply.get("return")

    def screen(self) -> tuple[int, int, bytes]:
        """The display as (width, height, RGB bytes), read from a PPM screendump."""
        fd, tmp = tempfile.mkstemp(suffix=".ppm")
        os.close(fd)
        try:
            self.command("screendump", filename=tmp)
            return read_ppm(Path(tmp).read_bytes())
        finally:
            os.unlink(tmp)

    def keys(self, qcodes: list[str], hold_ms: int = 20) -> None:
        """Presses the keys together, then releases them."""
        self.command("send-key", keys=[{"type": "qcode", "data": k} for k in qcodes],
                     **{"hold-time": hold_ms})

    def type(self, text: str, gap: float = 0.02) -> None:
        for ch in text:
            self.keys(qcodes_for(ch))
            time.sleep(gap)

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def read_ppm(data: bytes) -> tuple[int, int, bytes]:
    """A binary PPM (P6, maxval 255) as (width, height, RGB bytes)."""
    fields: list[bytes] = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise QmpError(f"not a P6/255 PPM screendump: {fields!r}")
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos + 1:pos + 1 + 3 * w * h]
    if len(pixels) != 3 * w * h:
        raise QmpError("short PPM screendump")
    return w, h, pixels
