# SPDX-License-Identifier: MIT
"""The screen console: what the REPL prints shows on the GOP framebuffer, read back from
QMP screendumps by tools/guest/screen.py (the kernel's own font, so the text is exact).
Serial and screen at once, line editing and colours, the resolutions the loader sets
(loader_screen=WxH), 10,000 lines of scrolling in bounded time, a GOP with no linear
framebuffer (serial only, with the loader's message), and the image booted as a USB
stick with no serial port at all."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools.guest.guestconsole import ROOT, Guest
from tools.guest.screen import choose_font, glyph_keys, wait_text

BUILD = ROOT / "build"
RED, BLUE_21 = (0xAA, 0x00, 0x00), (0x00, 0x00, 0xFF)   # palette 1 and 21
SCROLL_LINES = 10_000
SCROLL_SECONDS = 120     # wall time allowed for printing them (TCG, a busy 2-core host)


def image_with_screen(tmp: Path, size: str) -> Path:
    opts = tmp / "OPTIONS.TXT"
    opts.write_text(f"loader_screen={size}\n")
    image = tmp / f"screen-{size}.img"
    subprocess.run([sys.executable, "tools/build/mkimage.py",
                    "--loader", str(BUILD / "boot" / "BOOTX64.EFI"),
                    "--kernel", str(BUILD / "kernel.elf"), "--options", str(opts),
                    "-o", str(image)], cwd=ROOT, check=True, capture_output=True)
    return image


@pytest.fixture(scope="module")
def screen_guest(tmp_path_factory):
    log = tmp_path_factory.mktemp("serial") / "screen.log"
    g = Guest(qmp=True, log=log)
    try:
        g.banner = g.boot()
        yield g
    finally:
        g.close()


def test_banner_and_prompt_on_screen(screen_guest):
    g = screen_guest
    s = wait_text(g.qmp, r"^>>>$")
    text = s.text()
    assert "MicroPython v1.25.0" in text and "LociOS" in text, text
    # The kernel's boot lines show too (kept until the screen was mapped).
    assert "kernel: LociOS kernel entered" in text, text
    assert re.search(r"kernel: screen 1280x800 .*font spleen-8x16", text), text
    assert g.ask("__import__('kernel').console_size()") == (160, 50)
    assert (s.cols, s.rows) == (160, 50)


def test_a_line_typed_on_serial_shows_on_serial_and_screen(screen_guest):
    g = screen_guest
    assert g.eval("1+1") == "2"
    wait_text(g.qmp, r"^>>> 1\+1\n2\n>>>$")


def test_line_editing_cursor_keys_and_backspace(screen_guest):
    g = screen_guest
    # 1, 2, cursor left, 3: the REPL inserts and redraws the rest of the line.
    g.send("12\x1b[D3\r")
    g.expect(r"132\r\n>>> ")
    wait_text(g.qmp, r"^>>> 132\n132\n>>>$")
    g.send("1+2\b3\r")
    g.expect(r"4\r\n>>> ")
    wait_text(g.qmp, r"^>>> 1\+3\n4\n>>>$")


def test_colours_reach_the_cells(screen_guest):
    g = screen_guest
    g.run(r"print('\x1b[31mRED\x1b[0m \x1b[38;5;231;48;5;21mBLUE\x1b[0m plain')")
    s = wait_text(g.qmp, r"^RED BLUE plain$")
    row = next(r for r in s.cells if "".join(c[0] for c in r).startswith("RED BLUE"))
    assert all(c[1] == RED for c in row[0:3]), row[0:3]
    assert all(c[1] == (255, 255, 255) and c[2] == BLUE_21 for c in row[4:8]), row[4:8]
    assert row[9][1] == (0xAA, 0xAA, 0xAA) and row[9][2] == (0, 0, 0)


def test_ten_thousand_lines_scroll_in_bounded_time(screen_guest):
    g = screen_guest
    g.run("import time")
    t0 = time.monotonic()
    out = g.run(f"t = time.ticks_ms(); _ = [print('line', i) for i in range({SCROLL_LINES})]; "
                "print('took', time.ticks_diff(time.ticks_ms(), t))",
                timeout=SCROLL_SECONDS)
    wall = time.monotonic() - t0
    assert f"line {SCROLL_LINES - 1}\n" in out, out[-300:]
    assert wall < SCROLL_SECONDS
    s = wait_text(g.qmp, rf"^line {SCROLL_LINES - 1}\n.*\n?took \d+")
    lines = [ln for ln in s.lines() if ln.startswith("line ")]
    # The screen shows the last rows of the output, in order.
    nums = [int(ln.split()[1]) for ln in lines]
    assert nums == list(range(nums[0], SCROLL_LINES)), nums
    took = re.search(r"took (\d+)", out).group(1)
    print(f"\n{SCROLL_LINES} lines on the screen console: {wall:.1f} s wall, guest {took} ms")


@pytest.mark.parametrize("size", [
    "800x600",
    "3840x2160",
    pytest.param("1920x1080", marks=pytest.mark.machines),
    pytest.param("1024x768", marks=pytest.mark.machines),
])
def test_resolutions(tmp_path, size):
    w, h = (int(x) for x in size.split("x"))
    vga = f"VGA,xres={w},yres={h},vgamem_mb=64"
    g = Guest(image_with_screen(tmp_path, size), qmp=True, launch=["--vga", vga])
    try:
        banner = g.boot()
        assert f"framebuffer {w}x{h} " in banner and "asked for by loader_screen=" in banner
        font = choose_font(w, h)
        cols, rows = w // font.width, h // font.height
        assert g.ask("__import__('kernel').console_size()") == (cols, rows)
        g.send("6*7\r")
        g.expect(r"42\r\n>>> ")
        s = wait_text(g.qmp, r"^>>> 6\*7\n42\n>>>$")
        assert (s.cols, s.rows) == (cols, rows)
        # The slowest case of scrolling is the largest screen: bounded there too.
        t0 = time.monotonic()
        out = g.run(f"_ = [print('line', i) for i in range({SCROLL_LINES})]",
                    timeout=SCROLL_SECONDS)
        assert f"line {SCROLL_LINES - 1}\n" in out and time.monotonic() - t0 < SCROLL_SECONDS
        wait_text(g.qmp, rf"^line {SCROLL_LINES - 1}\n>>>$")
        print(f"\n{size}: {SCROLL_LINES} lines in {time.monotonic() - t0:.1f} s wall")
    finally:
        g.close()


@pytest.mark.machines
def test_bochs_display(tmp_path):
    g = Guest(image_with_screen(tmp_path, "1280x1024"), qmp=True,
              launch=["--vga", "bochs-display,xres=1280,yres=1024"])
    try:
        g.boot()
        assert g.ask("__import__('kernel').console_size()") == (160, 64)
        wait_text(g.qmp, r"^>>>$")
    finally:
        g.close()


def test_blt_only_gop_falls_back_to_serial_with_the_message():
    g = Guest(qmp=True, launch=["--vga", "virtio-gpu-pci"])
    try:
        banner = g.boot()
        assert "the graphics output has no linear framebuffer" in banner, banner
        assert "kernel: screen: none (the loader found no linear framebuffer)" in banner
        assert g.eval("print(__import__('kernel').console_size())") == "None"
        assert g.eval("1+1") == "2"
    finally:
        g.close()


def test_usb_stick_with_no_serial_port_shows_the_prompt_on_screen():
    g = Guest(qmp=True, launch=["--usb-stick", "--serial", "none"])
    try:
        s = wait_text(g.qmp, r"^>>>$", timeout=120)
        text = s.text()
        assert "MicroPython v1.25.0" in text
        assert "kernel: serial console: none" in text, text
    finally:
        g.close()


def test_a_character_the_font_lacks_shows_the_replacement_glyph(screen_guest):
    g = screen_guest
    g.run("print('[' + chr(0x4e00) + ']')")
    s = wait_text(g.qmp, r"^\[.\]$")
    font = s.font
    replacement = glyph_keys(font)[tuple(font.rows(font.replacement))]
    assert f"[{replacement}]" in s.lines(), s.text()
    assert 0x4E00 not in font.unicode
