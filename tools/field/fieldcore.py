# SPDX-License-Identifier: MIT
"""The trace field's C core (loci/field/*.c) built for this host through cffi
(tools/build/cffihost.py, cached under build/host/field/): the same C the guest runs,
compiled with the same -ffp-contract=off, so the host computes ticks and digests bit
for bit as the guest does. Used by `fieldsnap.py replay` and tests/host/field_cffi.py."""

from __future__ import annotations

from pathlib import Path

from tools.build import cffihost

ROOT = Path(__file__).resolve().parents[2]
FIELD = ROOT / "loci" / "field"
SHA = cffihost.SHA_DIR / "sha256.c"
# -ffp-contract=off: no fused multiply-add, so tick() rounds exactly like the guest and
# like tests/host/field_model.py.
FLAGS = ("-ffp-contract=off",)


def sources() -> list[Path]:
    return sorted(FIELD.glob("*.c"))


def build():
    """The cffi module (.ffi, .lib) of the field core, built once per source change."""
    return cffihost.build("field", sources(), [FIELD / "field.h", FIELD / "field_internal.h"],
                          flags=FLAGS, vendored=[SHA])
