# SPDX-License-Identifier: MIT
# Python modules frozen into the LociOS image (compiled to bytecode at build time).
freeze("$(PORT_DIR)/modules")
# asyncio's Python half (its C core, _asyncio, is extmod/modasyncio.c).
include("$(MPY_DIR)/extmod/asyncio")
# The trace field's Python API and the `lo` console helpers (loci/python).
freeze("$(PORT_DIR)/../loci/python")
# The optimiser's gates, journal, swap and rollback (vm/python, issue 7).
freeze("$(PORT_DIR)/../vm/python")
