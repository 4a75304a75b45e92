# SPDX-License-Identifier: MIT
# Run by port/main.c each time the VM starts, before the first prompt.
import storage

storage.mount()
