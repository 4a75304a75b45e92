# SPDX-License-Identifier: MIT
# xorshift32 (shifts 13, 17, 5), the tests' seeded generator: pasted into the guest before
# rewrite_stress.py (the same sequence as the mesh's own, loci/python/mesh.py). One step:
# the next nonzero state.
def xorshift32(x):
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x
