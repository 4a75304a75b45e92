# SPDX-License-Identifier: MIT
"""Test runs outside pytest: MicroPython's own suite against LociOS, and the soak test."""
