# SPDX-License-Identifier: MIT
"""The serial-console REPL on a booted guest: arithmetic, functions, errors, Ctrl-C,
Ctrl-D, the native emitters and the kernel module. One boot for the whole module."""

from __future__ import annotations

import re
import time


def test_banner_names_system_and_boot_cost(guest):
    assert "LociOS" in guest.banner
    assert "MicroPython 1.25.0" in guest.banner
    m = re.search(r"boot (\d+) cycles", guest.banner)
    assert m and int(m.group(1)) > 0


def test_int_arithmetic(guest):
    assert guest.eval("1 + 2 * 3") == "7"
    assert guest.eval("-7 // 2, -7 % 2") == "(-4, 1)"


def test_big_int_arithmetic(guest):
    assert guest.eval("2 ** 100") == str(2**100)
    assert guest.eval("(3 ** 200) % 1000003") == str((3**200) % 1000003)
    assert guest.eval("hex(1 << 130)") == repr(hex(1 << 130))


def test_float_arithmetic_is_double_precision(guest):
    assert guest.eval("1 / 3") == repr(1 / 3)
    # MicroPython's repr prints 16 significant digits; compare values, not text.
    assert guest.eval("import math; math.sqrt(2) == 1.4142135623730951") == "True"
    assert guest.eval("math.sqrt(2) ** 2 - 2") == repr(2**0.5 * 2**0.5 - 2)
    assert guest.eval("abs(math.sin(0.5) - 0.479425538604203) < 1e-15") == "True"
    assert guest.eval("1e300 * 1e300") == "inf"
    assert guest.eval("2.0 ** -1074 > 0") == "True"  # subnormal doubles exist


def test_multi_line_function_at_the_prompt(guest):
    guest.send("def fib(n):\r")
    guest.expect(r"\.\.\. ")
    guest.send("if n < 2:\r")       # auto-indent supplies the four spaces
    guest.expect(r"\.\.\. ")
    guest.send("return n\r")
    guest.expect(r"\.\.\. ")
    guest.send("\breturn fib(n - 1) + fib(n - 2)\r")  # one backspace removes one level
    guest.expect(r"\.\.\. ")
    guest.run("\b")                 # back to column 0; Enter there runs the block
    assert guest.eval("fib(20)") == "6765"


def test_paste_mode_block(guest):
    out = guest.paste("def sq(x):\n    return x * x\nprint(sum(sq(i) for i in range(10)))")
    assert "285" in out


def test_exception_prints_traceback_and_repl_survives(guest):
    out = guest.run("1 / 0")
    assert "Traceback (most recent call last):" in out
    assert "ZeroDivisionError" in out
    out = guest.run("undefined_name")
    assert "NameError" in out
    assert guest.eval("40 + 2") == "42"


def test_ctrl_c_stops_an_infinite_loop(guest):
    guest.send("while True: pass\r")
    guest.expect(r"\.\.\. ")       # a line starting with `while` asks for more input
    guest.send("\r")
    guest.expect(r"\r\n")
    time.sleep(1)                  # let it spin
    guest.send(b"\x03")
    out = guest.expect(re.escape(">>> "), timeout=30).decode(errors="replace")
    assert "KeyboardInterrupt" in out
    assert guest.eval("'alive'") == "'alive'"


def test_viper_and_native_functions(guest):
    out = guest.paste(
        "import micropython\n"
        "@micropython.viper\n"
        "def vsum(n: int) -> int:\n"
        "    s = 0\n"
        "    for i in range(n):\n"
        "        s += i\n"
        "    return s\n"
        "@micropython.native\n"
        "def nmul(a, b):\n"
        "    return a * b\n"
        "print(vsum(1000), nmul(6, 7), nmul(2 ** 70, 3))\n"
    )
    assert f"499500 42 {3 * 2**70}" in out


def test_kernel_memory_statistics_match_guest_ram(guest):
    ram = int(guest.run("import kernel; print(kernel.mem()['ram'])").strip())
    # QEMU was given 512 MiB; firmware and holes take some of it.
    assert 400 * 2**20 < ram <= 512 * 2**20
    heap = int(guest.run("print(kernel.mem()['heap'])").strip())
    assert 64 * 2**20 <= heap < ram
    free = int(guest.run("import gc; gc.collect(); print(gc.mem_free())").strip())
    assert 0 < free <= heap
    regions = int(guest.run("print(len(kernel.memmap()))").strip())
    assert regions > 3


def test_time_advances_and_sleep_waits(guest):
    out = guest.run(
        "import time; t0 = time.ticks_ms(); time.sleep_ms(200); "
        "print(time.ticks_diff(time.ticks_ms(), t0))")
    assert 190 <= int(out.strip()) < 2000


def test_ctrl_d_soft_resets_the_vm(guest):
    guest.run("leftover = 123")
    guest.send(b"\x04")
    out = guest.expect(re.escape(">>> "), timeout=60).decode(errors="replace")
    assert "soft reboot" in out
    assert "NameError" in guest.run("leftover")
    assert guest.eval("6 * 7") == "42"
