# SPDX-License-Identifier: MIT
"""A different virtual PC from the default one: 1 GiB of RAM and no display adapter (so
the firmware has no GOP). The loader notes the missing framebuffer and boots anyway,
the heap grows with the RAM, the kernel reports the digest the loader measured, and
kernel.poweroff() switches the machine off (QEMU exits with status 0)."""

from __future__ import annotations

import hashlib
import re

from tools.guest.guestconsole import IMAGE, ROOT, Guest


def test_no_gop_1g_digest_and_poweroff(tmp_path):
    g = Guest(IMAGE, mem="1G", extra=["-vga", "none"], log=tmp_path / "serial.log")
    try:
        banner = g.boot()
        assert "no graphics output; fb.base = 0" in banner, banner

        ram = int(g.run("import kernel; print(kernel.mem()['ram'])").strip())
        assert 900 * 2**20 < ram <= 2**30
        heap = int(g.run("print(kernel.mem()['heap'])").strip())
        assert 600 * 2**20 < heap < ram       # 75 % of free frames (port/mpconfigport.h)

        # The digest the loader measured is the build's kernel ELF, and the banner of the
        # loader printed the same value.
        digest = g.run("print(kernel.digest())").strip()
        assert digest == hashlib.sha256((ROOT / "build" / "kernel.elf").read_bytes()).hexdigest()
        assert re.search(rf"sha256 ok {digest}", banner)

        g.send("kernel.poweroff()\r")
        assert g.wait_exit(timeout=60) == 0
    finally:
        g.close()
