# SPDX-License-Identifier: MIT
# Python modules frozen into the LociOS image (compiled to bytecode at build time).
freeze("$(PORT_DIR)/modules")
# asyncio's Python half (its C core, _asyncio, is extmod/modasyncio.c).
include("$(MPY_DIR)/extmod/asyncio")
# The trace field's Python API and the `lo` console helpers (loci/python).
freeze("$(PORT_DIR)/../loci/python")
# The profiler's REPL helper `prof` (vm/profile).
module("prof.py", base_path="$(PORT_DIR)/../vm/profile")
# The optimiser, the package `opt` (vm/opt: every .py file there; its C is in vm/opt/mod).
package("opt", base_path="$(PORT_DIR)/../vm")
