# SPDX-License-Identifier: MIT
"""Shared fixtures for the host tests of boot/: the loader's pure C modules
(elf_check, memmap, fmt, options) compiled for the host through cffi
(tools/build/cffihost.py, cached in build/host/boot/)."""

from pathlib import Path

import pytest

from tools.build import cffihost

BOOT = Path(__file__).resolve().parents[2] / "boot"
PURE_SOURCES = ["elf_check.c", "memmap.c", "fmt.c", "options.c"]
# Their declarations; memmap.h and options.h bring bootinfo.h.
PURE_HEADERS = ["elf_check.h", "memmap.h", "fmt.h", "options.h"]


@pytest.fixture(scope="session")
def boot_pure():
    """The cffi module: .ffi and .lib with elf_check, memmap_translate, fmt_snprintf."""
    return cffihost.build("boot", [BOOT / s for s in PURE_SOURCES],
                          [BOOT / h for h in PURE_HEADERS])
