#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seal a LociOS loader to one kernel: write the kernel ELF's SHA-256 into the seal
record of BOOTX64.EFI, so the loader runs that exact kernel and nothing else.

    tools/build/seal.py --loader BOOTX64.unsealed.efi --kernel kernel.elf -o BOOTX64.EFI

The record (boot/seal.h) is the 16-byte magic "LOCIOS-SEAL-v1\\0\\0" followed by the
32-byte digest. It must occur exactly once in the loader. Sealing an already sealed
loader replaces its digest. Seal before signing for Secure Boot: the digest is part
of what a signature covers.
"""

import argparse
import hashlib
import os
import sys
import tempfile

MAGIC = b"LOCIOS-SEAL-v1\x00\x00"
DIGEST_LEN = 32


class SealError(Exception):
    pass


def find_record(loader: bytes) -> int:
    """Offset of the digest field; refuses a loader without exactly one record."""
    first = loader.find(MAGIC)
    if first < 0:
        raise SealError(
            "no seal record (magic 'LOCIOS-SEAL-v1') in the loader: is it a LociOS "
            "BOOTX64.EFI built from boot/?")
    if loader.find(MAGIC, first + 1) >= 0:
        raise SealError(
            f"the seal magic occurs {loader.count(MAGIC)} times in the loader; it must "
            "occur exactly once")
    digest_at = first + len(MAGIC)
    if digest_at + DIGEST_LEN > len(loader):
        raise SealError("the seal record is cut off at the end of the loader")
    return digest_at


def seal(loader: bytes, kernel: bytes) -> bytes:
    """The loader with the kernel's SHA-256 in its seal record."""
    at = find_record(loader)
    digest = hashlib.sha256(kernel).digest()
    return loader[:at] + digest + loader[at + DIGEST_LEN:]


def sealed_digest(loader: bytes) -> bytes:
    """The digest currently in the loader's record (all zero when unsealed)."""
    at = find_record(loader)
    return loader[at:at + DIGEST_LEN]


def _write_atomically(path: str, data: bytes) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".seal-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loader", required=True, help="unsealed (or sealed) BOOTX64.EFI")
    ap.add_argument("--kernel", required=True, help="the kernel ELF to seal to")
    ap.add_argument("-o", "--output", required=True, help="sealed loader to write")
    args = ap.parse_args(argv)
    try:
        with open(args.loader, "rb") as f:
            loader = f.read()
        with open(args.kernel, "rb") as f:
            kernel = f.read()
        _write_atomically(args.output, seal(loader, kernel))
    except (OSError, SealError) as e:
        print(f"seal.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
