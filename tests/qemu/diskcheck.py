# SPDX-License-Identifier: MIT
"""What the block-device tests (test_disk, test_nvme, test_usb_msc) share: the error a
guest program raised, and a disk file's bytes read on the host to check the guest's."""

from __future__ import annotations

from pathlib import Path


def err(g, code: str, timeout: float = 60.0) -> str:
    """The exception text the guest raised running code (in the raw REPL)."""
    g.raw_send(code)
    _, e = g.raw_finish(timeout)
    assert e, f"{code!r} raised nothing"
    return e.decode()


def read_blocks(bs: int, path: str | Path, block: int, n: int) -> bytes:
    """n bytes of the file at path, from block `block` of size bs."""
    with open(path, "rb") as f:
        f.seek(block * bs)
        return f.read(n)
