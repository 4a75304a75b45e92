# SPDX-License-Identifier: MIT
"""The keyboards at the REPL: keys typed through QEMU's machine protocol (send-key) on a
USB keyboard (the image booted as a USB stick, the keyboard on the same xHCI bus), a PS/2
keyboard (`-machine pc`) and a USB keyboard behind a hub; the answers read on the serial
line, which keeps working beside them. One boot per keyboard set-up."""

from __future__ import annotations

import re
import statistics
import time

import pytest

from tools.guest.guestconsole import PROMPT, Guest, clean

SETUPS = {
    # The spare-PC case: the stick and the keyboard on one xHCI controller, no i8042.
    "usb-stick": dict(launch=["--usb-stick", "--machine", "q35,i8042=off"],
                      extra=["-device", "usb-kbd,bus=xhci.0"]),
    "ps2": dict(launch=["--machine", "pc"]),
    "hub": dict(launch=["--machine", "q35,i8042=off"],
                extra=["-device", "qemu-xhci,id=xhci", "-device", "usb-hub,bus=xhci.0,port=1",
                       "-device", "usb-kbd,bus=xhci.0,port=1.1"]),
}


def boot(name: str, tmp_path_factory, icount: bool = False) -> Guest:
    log = tmp_path_factory.mktemp("serial") / f"keyboard-{name}.log"
    g = Guest(qmp=True, log=log, icount=icount, **SETUPS[name])
    try:
        g.banner = g.boot()
    except BaseException:
        g.close()
        raise
    return g


@pytest.fixture(scope="module", params=["usb-stick", "ps2",
                                        pytest.param("hub", marks=pytest.mark.machines)])
def kbd(request, tmp_path_factory):
    g = boot(request.param, tmp_path_factory)
    g.setup = request.param
    try:
        yield g
    finally:
        g.close()


def typed(g: Guest, text: str, end: str = re.escape(PROMPT), timeout: float = 30) -> str:
    """Types text on the guest's keyboard; returns what the serial line showed up to
    `end` (escapes removed, CRLF as LF)."""
    g.qmp.type(text)
    return clean(g.expect(end, timeout=timeout)).replace("\r\n", "\n")


def test_boot_found_the_keyboard(kbd):
    if kbd.setup == "ps2":
        assert re.search(r"ps/2: i8042 keyboard \(scancode set [12]\)", kbd.banner), kbd.banner
    else:
        assert "ps/2: no i8042 controller" in kbd.banner, kbd.banner
        at = "5.1" if kbd.setup == "hub" else r"\d+"
        assert re.search(rf"usb: port {at}: keyboard \(0627:0001", kbd.banner), kbd.banner
    if kbd.setup == "usb-stick":  # the stick is driven beside the keyboard: /data on it
        assert re.search(r"usb: port \d+: mass storage \(46f4:0001", kbd.banner), kbd.banner
        assert "data: usb0 partition 2 (LOCIDATA) mounted at /data" in kbd.banner, kbd.banner


def test_one_plus_one(kbd):
    out = typed(kbd, "1+1\n")
    assert out.startswith("1+1\n2\n"), out


def test_multi_line_def(kbd):
    typed(kbd, "def sq(x):\n", r"\.\.\. ")
    typed(kbd, "return x * x\n", r"\.\.\. ")  # the REPL indents
    typed(kbd, "\b\n")  # Backspace to column 0; Enter there runs the block
    out = typed(kbd, "sq(12), 'A|{}'\n")
    assert "(144, 'A|{}')" in out, out


def test_exception_traceback(kbd):
    out = typed(kbd, "1/0\n")
    assert "Traceback (most recent call last):" in out, out
    assert "ZeroDivisionError" in out, out


def test_line_editing_keys(kbd):
    # 79, Left, Delete (the 9 goes), Home, "6*": 6*7.
    kbd.qmp.type("79")
    for keys in (["left"], ["delete"], ["home"]):
        kbd.qmp.keys(keys)
        time.sleep(0.05)
    out = typed(kbd, "6*\n")
    assert "\n42\n" in out, out
    kbd.qmp.keys(["up"])  # the line from the history, run again
    out = typed(kbd, "\n")
    assert "6*7\n42\n" in out, out


def test_ctrl_c_interrupts_a_loop(kbd):
    typed(kbd, "while True: pass\n", r"\.\.\. ")
    kbd.qmp.type("\b\n")
    time.sleep(1)
    kbd.qmp.keys(["ctrl", "c"])
    out = clean(kbd.expect(re.escape(PROMPT), timeout=30))
    assert "KeyboardInterrupt" in out, out
    assert "\n2\n" in typed(kbd, "1+1\n")


@pytest.mark.parametrize("kbd", ["usb-stick"], indirect=True)  # the same path as above
def test_ctrl_c_interrupts_a_computation_and_a_mesh(kbd):
    for line in ("sum(i * i for i in range(10 ** 9))\n",
                 "import lo_mesh; lo_mesh.run('foraging', ticks=10 ** 7, quiet=True)\n"):
        kbd.qmp.type(line)
        time.sleep(2)
        kbd.qmp.keys(["ctrl", "c"])
        out = clean(kbd.expect(re.escape(PROMPT), timeout=30))
        assert "KeyboardInterrupt" in out, out
    assert "\n2\n" in typed(kbd, "1+1\n")


def test_ctrl_d_soft_reset(kbd):
    typed(kbd, "leftover = 5\n")
    kbd.qmp.keys(["ctrl", "d"])
    out = clean(kbd.expect(re.escape(PROMPT), timeout=60))
    assert "soft reboot" in out, out
    assert "NameError" in typed(kbd, "leftover\n")
    assert "\n12\n" in typed(kbd, "3*4\n"), "the keyboard works after the soft reset"


@pytest.mark.parametrize("kbd", ["usb-stick"], indirect=True)  # one keymap for all
def test_german_layout(kbd):
    assert kbd.eval("import kernel; kernel.keymap()") == "'us'"
    assert "ValueError: no keyboard layout 'xx'" in kbd.run("kernel.keymap('xx')")
    assert kbd.eval("kernel.keymap('de')") == "'de'"
    try:
        # On a German keyboard the US keys AltGr+8, AltGr+9, Shift+], Shift+2, y, z are
        # [ ] * " z y. (Its letters outside ASCII arrive as UTF-8, which the REPL's line
        # editor does not take: it accepts printable ASCII only.)
        for keys in (["alt_r", "8"], ["1"], ["alt_r", "9"], ["shift", "bracket_right"], ["3"],
                     ["comma"], ["shift", "2"], ["y"], ["z"], ["shift", "2"], ["ret"]):
            kbd.qmp.keys(keys)
            time.sleep(0.05)
        out = clean(kbd.expect(re.escape(PROMPT))).replace("\r\n", "\n")
        assert "([1, 1, 1], 'zy')" in out, out
    finally:
        kbd.eval("kernel.keymap('us')")


@pytest.mark.parametrize("kbd", ["usb-stick", pytest.param("hub", marks=pytest.mark.machines)],
                         indirect=True)  # needs the xHCI bus
def test_hot_plugged_keyboard(kbd):
    where = {"port": "1.3"} if kbd.setup == "hub" else {}  # on a root port, or the hub
    kbd.qmp.command("device_add", driver="usb-kbd", bus="xhci.0", id="kbd2", **where)
    kbd.expect(r"usb: port [\d.]+: keyboard \(0627:0001, \w+ speed\)\r\n", timeout=20)
    assert kbd.ask("import kernel; kernel.keyboards()['usb']") == 2
    out = typed(kbd, "7*6\n")  # the new keyboard is QEMU's active one now
    assert "\n42\n" in out, out
    kbd.qmp.command("device_del", id="kbd2")
    kbd.expect(r"usb: port [\d.]+: keyboard removed\r\n", timeout=20)
    assert kbd.ask("kernel.keyboards()['usb']") == 1
    out = typed(kbd, "2+3\n")  # and the first one again
    assert "\n5\n" in out, out


@pytest.mark.machines
@pytest.mark.parametrize("setup", ["usb-stick", "ps2"])
def test_keypress_to_echo_latency(setup, tmp_path_factory):
    """Guest cycles under -icount from the interrupt (PS/2) or the tick's poll (USB) that
    saw a key to the console's echo of it. Printed for kernel/README.md."""
    g = boot(setup, tmp_path_factory, icount=True)
    try:
        g.run("import kernel")
        hz = g.ask("kernel.tsc_hz()")
        samples = []
        for ch in "abcde":
            g.qmp.type(ch)
            g.expect(re.escape(ch))
            g.send(b"\x7f")  # rub it out over the serial line; that echo comes later
            g.drain(0.5)
            samples.append(g.ask("kernel.keyboards()['echo_tsc'] - "
                                 "kernel.keyboards()['last_key_tsc']"))
        med = statistics.median(samples)
        print(f"\nkeypress-to-echo {setup}: median {med} cycles ({med * 1e6 / hz:.1f} us), "
              f"min {min(samples)}, max {max(samples)}, tsc {hz} Hz")
        assert all(0 < s < hz // 100 for s in samples), samples  # under 10 ms
    finally:
        g.close()
