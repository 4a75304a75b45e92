# SPDX-License-Identifier: MIT
"""A spare PC as a user meets it: the image booted from a USB stick on an xHCI
controller, no serial port at all, a USB keyboard on the same controller, the screen.
Everything is typed on the keyboard (QMP send-key) and read off the screen (QMP
screendump decoded with the kernel's own font): arithmetic, a multi-line def, a
traceback, Ctrl-C of a loop, /data on the stick (a file written and read back), Ctrl-D,
and a picture of the field after a short colony run."""

from __future__ import annotations

import re

import pytest

from tools.guest.guestconsole import Guest
from tools.guest.screen import read_qmp, wait_text

# The prompt as the screen shows it (trailing blanks of a row are not text).
PROMPT = r"^>>> ?$"


@pytest.fixture(scope="module")
def pc():
    g = Guest(qmp=True, launch=["--usb-stick", "--serial", "none"],
              extra=["-device", "usb-kbd,bus=xhci.0"])
    try:
        wait_text(g.qmp, PROMPT, timeout=180)
        yield g
    finally:
        g.close()


def type_and_wait(g, text: str, pattern: str, timeout: float = 60):
    """Types `text` and waits for `pattern` on the screen below the line typed, so an
    older prompt or answer higher up does not count."""
    g.qmp.type(text)
    first = text.split("\n")[0]
    if first:
        pattern = re.escape(first) + r"(?:.|\n)*?(?:" + pattern + ")"
    return wait_text(g.qmp, pattern, timeout=timeout)


def last_lines(g, n: int = 6) -> list[str]:
    return [ln for ln in read_qmp(g.qmp).lines() if ln.strip()][-n:]


def test_arithmetic_typed_on_the_usb_keyboard(pc):
    type_and_wait(pc, "6*7\n", r"^42$")


def test_a_multi_line_def(pc):
    pc.qmp.type("def sq(x):\n")
    wait_text(pc.qmp, r"^\.\.\. +$|^\.\.\.$")
    # The friendly REPL indents each new line itself and stops after two lines of only
    # spaces; the empty line after them ends the block, as a person pressing Enter
    # until the prompt comes back does.
    type_and_wait(pc, "return x * x\n\n\n\n", PROMPT)
    type_and_wait(pc, "sq(12)\n", r"^144$")


def test_a_traceback(pc):
    s = type_and_wait(pc, "1/0\n", r"ZeroDivisionError")
    assert "Traceback (most recent call last):" in s.text()


def test_ctrl_c_stops_a_loop(pc):
    pc.qmp.type("while True: pass\n\n")
    pc.qmp.keys(["ctrl", "c"])
    type_and_wait(pc, "", r"KeyboardInterrupt", timeout=60)
    type_and_wait(pc, "2+3\n", r"^5$")


def test_data_is_on_the_stick_and_keeps_a_file(pc):
    type_and_wait(pc, "import storage; storage.mounted\n",
                  r"^'usb0 partition 2 \(LOCIDATA\)'$")
    type_and_wait(pc, "f = open('/data/pc.txt', 'w'); f.write('typed on the PC'); f.close()\n",
                  r"^15$")
    type_and_wait(pc, "open('/data/pc.txt').read()\n", r"^'typed on the PC'$")


def test_ctrl_d_soft_resets(pc):
    pc.qmp.keys(["ctrl", "d"])
    wait_text(pc.qmp, r"soft reboot", timeout=60)
    type_and_wait(pc, "'sq' in globals()\n", r"^False$")


def test_the_field_after_a_colony_run(pc):
    pc.qmp.type("from lo import *\n")
    type_and_wait(pc, "m = run('foraging', seed=1, ticks=40)\n", PROMPT, timeout=240)
    s = type_and_wait(pc, "show('trail')\n", PROMPT, timeout=120)
    # The picture is colour cells: many distinct background colours on the screen.
    colours = {cell[2] for row in s.cells for cell in row}
    assert len(colours) > 4, s.text()
    assert not re.search(r"Traceback|Error", s.text().split("show('trail')")[-1]), s.text()
