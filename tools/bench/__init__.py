# SPDX-License-Identifier: MIT
"""Benchmarks run in the guest under QEMU (-icount where the numbers must repeat)."""
