# SPDX-License-Identifier: MIT
"""Build steps: set-up, the disk image, the loader's seal, the kernel's symbol table, and
the host (cffi) builds of our C that tests/host and vm/*/host load."""
