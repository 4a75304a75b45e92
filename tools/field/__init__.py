# SPDX-License-Identifier: MIT
"""The trace field and the Loci mesh from the host: snapshots, pictures, demos, colony runs."""
