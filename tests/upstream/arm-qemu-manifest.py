# SPDX-License-Identifier: MIT
# Frozen modules for the reference ports/qemu ARM build: the port's default manifest
# minus require('unittest') (micropython-lib is empty in the Debian tree).
freeze(  # noqa: F821 -- provided by MicroPython's makemanifest.py
    "$(PORT_DIR)/test-frzmpy",
    ("frozen_asm_thumb.py", "frozen_const.py", "frozen_viper.py", "native_frozen_align.py"),
)
