# SPDX-License-Identifier: MIT
"""Driving a guest's serial console: QEMU as a child process (qemuproc), the REPL over any
serial line (console), one booted guest for tests and benchmarks (guestconsole)."""
