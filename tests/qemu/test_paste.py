# SPDX-License-Identifier: MIT
"""Pasting 64 KiB of source, in paste mode (Ctrl-E ... Ctrl-D) and in the raw REPL,
loses no character: the host writes as fast as the serial socket takes it and the guest
checks a hash of what arrived. Run as a script to find the largest paste that survives:
    .venv/bin/python tests/qemu/test_paste.py 64 128 256 512   (sizes in KiB)"""

from __future__ import annotations

import random
import re
import string
import sys
import threading
import time

import pytest

from tools.guest.guestconsole import IMAGE, Guest

# No quote or backslash, so every line is a plain string literal.
ALPHABET = string.ascii_letters + string.digits + " !#$%&()*+,-./:;<=>?@[]^_`{|}~"
LINE = 64
# The hash the guest computes over the strings it received, mirrored here.
MASK = 0xFFFFFFFF
HASH_CODE = (
    "h = 0\n"
    "for s in L:\n"
    "    for c in s:\n"
    "        h = (h * 31 + ord(c)) & 0xffffffff\n"
    "print('SUM', len(L), sum(len(s) for s in L), h)\n"
)


def make_source(size: int, seed: int) -> tuple[str, list[str]]:
    """About `size` bytes of source: one list literal of random strings, then the hash."""
    rnd = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size - len(HASH_CODE) - 8:
        s = "".join(rnd.choice(ALPHABET) for _ in range(LINE))
        lines.append(s)
        total += LINE + 4   # quotes, comma, newline
    body = "L = [\n" + "".join(f"'{s}',\n" for s in lines) + "]\n" + HASH_CODE
    return body, lines


def expected(lines: list[str]) -> tuple[int, int, int]:
    h = 0
    for s in lines:
        for c in s:
            h = (h * 31 + ord(c)) & MASK
    return len(lines), sum(len(s) for s in lines), h


def blast(guest: Guest, data: bytes) -> threading.Thread:
    """Writes `data` to the serial socket from a thread, as fast as it is taken, while
    the caller keeps reading the guest's output (its echo would otherwise fill the
    socket, stall the guest's transmitter and deadlock both sides)."""
    t = threading.Thread(target=guest.send, args=(data,), daemon=True)
    t.start()
    return t


def paste_mode(guest: Guest, source: str, timeout: float, typeahead: bool = False) -> str:
    """Ctrl-E, the source, Ctrl-D; with typeahead, all at once without waiting for the
    paste-mode banner (the REPL is still busy and reads it all later)."""
    data = source.replace("\n", "\r").encode() + b"\x04"
    if typeahead:
        data = b"\x05" + data
    else:
        guest.send(b"\x05")
        guest.expect(r"paste mode; Ctrl-C to cancel, Ctrl-D to finish\r\n=== ")
    t = blast(guest, data)
    out = guest.expect(r"SUM [^\r]*\r\n", timeout=timeout) + guest.after
    guest.expect(re.escape(">>> "), timeout=30)
    t.join(timeout=5)
    return out.decode(errors="replace")


def raw_repl(guest: Guest, source: str, timeout: float) -> str:
    guest.send(b"\x01")
    guest.expect(r"raw REPL; CTRL-B to exit\r\n>")
    t = blast(guest, source.encode() + b"\x04")
    guest.expect(b"OK", timeout=timeout)
    out = guest.expect(rb"\x04", timeout=timeout)   # program output, then its end mark
    err = guest.expect(rb"\x04", timeout=30)        # error output, if any
    guest.expect(b">")
    guest.send(b"\x02")
    guest.expect(re.escape(">>> "), timeout=30)
    t.join(timeout=5)
    return (out + b"\n" + err).decode(errors="replace")


def counters(guest: Guest) -> dict[str, int]:
    out = guest.run("import kernel; d = kernel.interrupts(); print(d['rx_bytes'], "
                    "d['rx_ring_full'], d['rx_overruns'])")
    rx, full, overruns = (int(x) for x in out.split())
    return {"rx_bytes": rx, "rx_ring_full": full, "rx_overruns": overruns}


def check_paste(guest: Guest, mode: str, size: int, seed: int, timeout: float = 300,
                busy_ms: int = 0):
    """Pastes about `size` bytes; with busy_ms, while the REPL is still busy running a
    loop for that long, so the input piles up in the guest instead of being read."""
    source, lines = make_source(size, seed)
    before = counters(guest)
    t0 = time.monotonic()
    if busy_ms:
        guest.send(f"t = kernel.uptime_ms()\rwhile kernel.uptime_ms() - t < {busy_ms}: pass\r\r")
    if mode == "paste":
        out = paste_mode(guest, source, timeout, typeahead=busy_ms > 0)
    else:
        out = raw_repl(guest, source, timeout)
    seconds = time.monotonic() - t0
    after = counters(guest)
    m = re.search(r"SUM (\d+) (\d+) (\d+)", out)
    got = tuple(int(x) for x in m.groups()) if m else None
    delta = {k: after[k] - before[k] for k in after}
    return got == expected(lines), len(source), seconds, delta, out


@pytest.mark.parametrize("mode", ["paste", "raw"])
def test_64k_paste_arrives_intact(guest, mode):
    ok, size, seconds, delta, out = check_paste(guest, mode, 64 * 1024, seed=len(mode))
    assert ok, out[-2000:]
    assert delta["rx_overruns"] == 0, delta
    # Every byte went through the receive path once (plus the counters command itself).
    assert delta["rx_bytes"] >= size, delta
    assert guest.eval("1+1") == "2"


def test_paste_while_busy_waits_in_the_uart_and_arrives_intact(guest):
    # While Python runs for 3 s nothing reads the ring: it fills (4 KiB), the kernel
    # leaves further bytes in the UART, and QEMU stops taking them from the socket.
    ok, size, seconds, delta, out = check_paste(guest, "paste", 64 * 1024, seed=3,
                                                busy_ms=3000)
    assert ok, out[-2000:]
    assert delta["rx_ring_full"] > 0, delta
    assert delta["rx_overruns"] == 0, delta
    assert guest.eval("1+1") == "2"


def main(sizes_kib: list[int]) -> int:
    g = Guest(IMAGE, mem="512M")
    try:
        g.boot()
        for kib in sizes_kib:
            for mode, busy in (("paste", 0), ("raw", 0), ("paste", 3000)):
                ok, size, seconds, delta, out = check_paste(g, mode, kib * 1024, kib,
                                                            busy_ms=busy)
                verdict = "intact" if ok else "LOST"
                print(f"{mode:5} {'busy' if busy else '':4} {kib:5} KiB ({size} bytes): "
                      f"{verdict} in {seconds:.1f} s ({size / 1024 / seconds:.1f} KiB/s), {delta}",
                      flush=True)
                if not ok:
                    print(out[-600:])
                    return 1
    finally:
        g.close()
    return 0


if __name__ == "__main__":
    sys.exit(main([int(a) for a in sys.argv[1:]] or [64]))
