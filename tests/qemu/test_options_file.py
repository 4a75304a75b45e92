# SPDX-License-Identifier: MIT
"""\\LOCIOS\\OPTIONS.TXT on the ESP tunes the heap; unknown or out-of-range words are
reported and ignored; a file that is not text is refused by the loader; and a heap floor
the machine cannot meet ends in a message saying what is missing, then power-off."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tools.guest.guestconsole import ROOT, Guest, clean

BUILD = ROOT / "build"


def image_with_options(tmp: Path, text: bytes) -> Path:
    opts = tmp / "OPTIONS.TXT"
    opts.write_bytes(text)
    image = tmp / "options.img"
    subprocess.run([sys.executable, "tools/build/mkimage.py", "--loader",
                    str(BUILD / "boot" / "BOOTX64.EFI"), "--kernel", str(BUILD / "kernel.elf"),
                    "--options", str(opts), "-o", str(image)],
                   cwd=ROOT, check=True, capture_output=True)
    return image


def test_heap_percent_option_and_ignored_words(tmp_path):
    image = image_with_options(tmp_path, b"heap_percent=40\nbogus=1 heap_floor_mib=x\n")
    g = Guest(image)
    try:
        banner = g.boot()
        assert "options: heap_percent=40 bogus=1 heap_floor_mib=x" in banner
        assert "boot option 'bogus=1' is not known; ignored" in banner
        assert "boot option 'heap_floor_mib=x' ignored: heap_floor_mib takes a whole number" \
            in banner
        free = int(g.run("import kernel; m = kernel.mem(); print(m['frames_free'])").strip())
        heap = int(g.run("print(m['heap'])").strip())
        # 40 % of the free frames at boot: what is free now plus the heap itself.
        total_free = free * 4096 + heap
        assert abs(heap - 0.40 * total_free) < 0.02 * total_free, (heap, total_free)
    finally:
        g.close()


def test_unmeetable_heap_floor_says_what_is_missing_and_powers_off(tmp_path):
    image = image_with_options(tmp_path, b"heap_floor_mib=4096")
    g = Guest(image)
    try:
        g.expect(r"fix: .*\r\n.*OPTIONS\.TXT", timeout=90)
        text = clean(g.before + g.after)
        status = g.wait_exit(timeout=60)
    finally:
        g.close()
    assert "not enough memory for the MicroPython heap" in text, text
    assert re.search(r"floor 4096 MiB", text), text
    assert re.search(r"found:\s+\d+ MiB free of \d+ MiB RAM", text), text
    assert status == 0      # ACPI power-off: QEMU ends, nothing hangs


def test_options_file_that_is_not_text_is_refused(tmp_path):
    image = image_with_options(tmp_path, b"heap_percent=50\x01")
    g = Guest(image)
    try:
        idx = g.expect_any([rb"OPTIONS\.TXT refused: [^\r\n]+\r?\n", rb">>> "], timeout=90)
        text = clean(g.before + g.after)
    finally:
        g.close()
    assert idx == 0, text
    assert "byte 0x01 at offset 15 is not printable ASCII" in text, text
