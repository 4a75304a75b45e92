# SPDX-License-Identifier: MIT
"""LociOS's host tools, grouped by purpose (tools/README.md). Imported as `tools.<group>`
from the repository root; each command-line tool also runs as `python3 tools/<group>/x.py`."""
