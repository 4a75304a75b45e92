# SPDX-License-Identifier: MIT
"""Shared fixtures for the host tests of boot/: the loader's pure C modules
(elf_check, memmap, fmt, options) compiled for the host through cffi, cached in
build/host/."""

import hashlib
import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOT = ROOT / "boot"
HOST_BUILD = ROOT / "build" / "host"
PURE_SOURCES = ["elf_check.c", "memmap.c", "fmt.c", "options.c"]
# UBSan works inside a cffi module (ASan would need LD_PRELOAD; see test_boot_elf_check).
PURE_CFLAGS = ["-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
               "-fsanitize=undefined", "-fno-sanitize-recover=all"]

CDEF = """
#define ELF_CHECK_WINDOW_LO ...
#define ELF_CHECK_WINDOW_HI ...
#define ELF_CHECK_PAGE ...
#define ELF_CHECK_MAX_LOAD ...
#define BOOTINFO_MAX_REGIONS ...
enum elf_check_code { %(codes)s };
enum bootinfo_mem_kind { %(kinds)s };
struct elf_segment { uint64_t paddr, memsz, filesz, offset, page_base, page_count;
                     uint32_t flags; };
struct elf_image { uint64_t entry, phys_start, phys_end; uint32_t count;
                   struct elf_segment seg[%(max_load)s]; };
int elf_check(const void *file, uint64_t size, struct elf_image *out, char *msg,
              size_t msg_cap);
const char *elf_check_code_name(int code);
struct memmap_range { uint64_t base, pages; };
struct bootinfo_mem_region { uint64_t base, pages; uint32_t kind, efi_type; };
uint32_t memmap_kind(uint32_t efi_type, uint64_t attribute);
uint32_t memmap_translate(const void *map, size_t map_size, size_t desc_size,
                          const struct memmap_range *kernel, uint32_t nkernel,
                          struct bootinfo_mem_region *out, uint32_t cap, uint32_t *dropped);
size_t fmt_snprintf(char *buf, size_t cap, const char *fmt, ...);
#define BOOTINFO_OPTIONS_MAX ...
enum options_code { OPTIONS_OK, OPTIONS_ERR_TOO_LONG, OPTIONS_ERR_BYTE };
int options_normalise(const uint8_t *text, size_t len, char *out, size_t *bad_at);
"""


def _enum_names(header, pattern):
    return [m.group(1) for m in re.finditer(pattern, (BOOT / header).read_text(), re.M)]


def _build_pure():
    import cffi

    codes = _enum_names("elf_check.h", r"^\s+(ELF_(?:OK|ERR_[A-Z_]+))\b")
    kinds = _enum_names("bootinfo.h", r"^\s+(BOOTINFO_MEM_[A-Z_]+)\s*=")
    max_load = re.search(r"#define ELF_CHECK_MAX_LOAD\s+(\d+)",
                         (BOOT / "elf_check.h").read_text()).group(1)
    cdef = CDEF % {"codes": ", ".join(c + " = ..." for c in codes),
                   "kinds": ", ".join(k + " = ..." for k in kinds), "max_load": max_load}
    digest = hashlib.sha256(cdef.encode() + " ".join(PURE_CFLAGS).encode())
    for name in PURE_SOURCES + ["elf_check.h", "memmap.h", "fmt.h", "options.h", "bootinfo.h"]:
        digest.update((BOOT / name).read_bytes())
    modname = "_boot_pure_" + digest.hexdigest()[:12]
    HOST_BUILD.mkdir(parents=True, exist_ok=True)
    if str(HOST_BUILD) not in sys.path:
        sys.path.insert(0, str(HOST_BUILD))
    try:
        return importlib.import_module(modname)
    except ImportError:
        pass
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source(modname, '#include "elf_check.h"\n#include "memmap.h"\n#include "fmt.h"\n'
                   '#include "options.h"\n',
                   sources=[str(BOOT / s) for s in PURE_SOURCES], include_dirs=[str(BOOT)],
                   extra_compile_args=PURE_CFLAGS, extra_link_args=["-fsanitize=undefined"])
    ffi.compile(tmpdir=str(HOST_BUILD), verbose=False)
    return importlib.import_module(modname)


@pytest.fixture(scope="session")
def boot_pure():
    """The cffi module: .ffi and .lib with elf_check, memmap_translate, fmt_snprintf."""
    return _build_pure()
