# SPDX-License-Identifier: MIT
"""The kernel survives the REPL: bad addresses, faults in native code, runaway
recursion, heap exhaustion and Ctrl-C at awkward moments all end in a Python exception,
and the REPL still answers `1+1` afterwards. One boot for the whole module."""

from __future__ import annotations

import re
import time

import pytest

EFAULT = 14  # errno.EFAULT


def assert_alive(guest) -> None:
    assert guest.eval("1+1") == "2"


def last_exception(out: str) -> str:
    lines = [ln for ln in out.strip().splitlines() if ln.strip()]
    assert lines, out
    return lines[-1]


@pytest.mark.parametrize("expr, kind", [
    ("machine.mem32[0]", "read of 4 bytes at 0x0: page not present"),
    ("machine.mem8[8]", "read of 1 bytes at 0x8: page not present"),
    # Far above every mapping, and a non-canonical address (#GP, not #PF).
    ("machine.mem16[0x7fff00000000]", "read of 2 bytes at 0x7fff00000000: page not present"),
    ("machine.mem64[0x8000000000000000]", "general protection"),
    ("machine.mem32[0] = 1", "write of 4 bytes at 0x0: page not present"),
])
def test_bad_address_raises_efault(guest, expr, kind):
    guest.run("import machine")
    out = guest.run(expr)
    assert last_exception(out).startswith(f"OSError: ({EFAULT}, "), out
    assert kind in out, out
    assert_alive(guest)


def test_write_into_kernel_text_is_refused(guest):
    # The kernel runs at its linked address; its text is mapped read + execute only, and
    # the frames the loader placed it in have no identity alias.
    guest.run("import kernel, machine; k = kernel.machine(); t = k['kernel_virt']")
    text = int(guest.eval("t"))
    phys = int(guest.eval("k['kernel_phys']"))
    assert text == 0xFFFFFFFF80000000
    guest.run("before = machine.mem32[t]")
    out = guest.run("machine.mem32[t] = 0")
    assert f"write of 4 bytes at {text:#x}: page is read-only" in out, out
    assert guest.eval("machine.mem32[t] == before") == "True"
    out = guest.run(f"machine.mem32[{phys:#x}]")
    assert f"read of 4 bytes at {phys:#x}: page not present" in out, out
    assert_alive(guest)


def test_errno_attribute_and_recovered_count(guest):
    guest.run("import kernel, machine; n0 = kernel.faults_recovered()")
    out = guest.paste(
        "try:\n"
        "    machine.mem32[0x10]\n"
        "except OSError as e:\n"
        "    print('errno', e.errno)\n")
    assert f"errno {EFAULT}" in out
    assert guest.eval("kernel.faults_recovered() - n0") == "1"


def test_fault_in_viper_code_raises(guest):
    guest.paste(
        "import micropython\n"
        "@micropython.viper\n"
        "def peek(a: int) -> int:\n"
        "    return ptr32(a)[0]\n")
    out = guest.run("peek(16)")
    assert re.search(r"OSError: \(14, 'native code at 0x[0-9a-f]+ faulted at 0x10: "
                     r"page not present", out), out
    # The same function still works on a good address afterwards.
    guest.run("import uctypes; a = bytearray(b'\\x78\\x56\\x34\\x12')")
    assert guest.eval("peek(uctypes.addressof(a)) == 0x12345678") == "True"
    assert_alive(guest)


def test_unbounded_recursion_is_a_runtime_error(guest):
    guest.paste("def down(n):\n    return down(n + 1) + 1\n")
    out = guest.run("down(0)", timeout=120)
    assert "RuntimeError: maximum recursion depth exceeded" in out, out
    assert_alive(guest)


def test_heap_exhaustion_raises_memory_error_and_heap_recovers(guest):
    guest.run("import gc; gc.collect(); free0 = gc.mem_free()")
    out = guest.run("[0] * 10**9", timeout=120)
    assert last_exception(out).startswith("MemoryError"), out
    out = guest.run("b = bytes(10**10)", timeout=120)
    assert last_exception(out).startswith("MemoryError"), out
    out = guest.paste(
        "chunks = []\n"
        "try:\n"
        "    while True:\n"
        "        chunks.append(bytearray(1 << 20))\n"
        "except MemoryError:\n"
        "    print('filled', len(chunks), 'MiB')\n", timeout=300)
    m = re.search(r"filled (\d+) MiB", out)
    assert m and int(m.group(1)) > 16, out
    guest.run("chunks = None; gc.collect()")
    # Everything came back: the free heap is within 1% of what it was.
    assert guest.eval("abs(gc.mem_free() - free0) < free0 // 100") == "True"
    assert guest.eval("len(bytearray(8 << 20))") == str(8 << 20)
    assert_alive(guest)


def interrupt(guest, start: str, settle: float = 1.5) -> str:
    guest.send(start + "\r")
    guest.expect(r"\r\n")
    time.sleep(settle)
    guest.send(b"\x03")
    return guest.expect(re.escape(">>> "), timeout=30).decode(errors="replace")


def test_ctrl_c_stops_a_long_computation(guest):
    guest.paste("def spin():\n    x = 0\n    for i in range(10**10):\n        x += i * i\n")
    out = interrupt(guest, "spin()")
    assert "KeyboardInterrupt" in out, out
    assert_alive(guest)


def test_ctrl_c_stops_a_very_long_sleep(guest):
    guest.run("import time")
    t0 = time.monotonic()
    out = interrupt(guest, "time.sleep_ms(10**9)")
    assert "KeyboardInterrupt" in out, out
    assert time.monotonic() - t0 < 30
    assert_alive(guest)


def test_ctrl_c_in_deep_recursion(guest):
    guest.paste(
        "def deep(n):\n"
        "    if n == 0:\n"
        "        while True:\n"
        "            pass\n"
        "    return deep(n - 1)\n")
    out = interrupt(guest, "deep(500)")
    assert "KeyboardInterrupt" in out, out
    # The traceback went through the whole recursion.
    assert out.count("in deep") >= 2, out
    assert_alive(guest)


def test_ticks_advance_during_a_bytecode_loop(guest):
    out = guest.paste(
        "import time\n"
        "t0 = time.ticks_ms()\n"
        "x = 0\n"
        "for i in range(200000):\n"
        "    x += 1\n"
        "print('elapsed', time.ticks_diff(time.ticks_ms(), t0))\n", timeout=120)
    m = re.search(r"elapsed (\d+)", out)
    assert m and int(m.group(1)) > 0, out
