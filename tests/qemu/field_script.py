# SPDX-License-Identifier: MIT
"""The scripted, seeded field run of the determinism test, as source text that runs both
in the guest (MicroPython, on `_field`) and on the host (CPython, on the cffi build of
the same C): the same LCG, float32-exact amounts, one chained SHA-256 over every tick's
digest, checkpointed every 1000 ticks."""

LAYOUT = [("grid", "a", 32, 32, 0.05, 0.3, 1e30, 1e-6),
          ("grid", "b", 32, 32, 0.1, 0.6, 50.0, 0.0),
          ("keyed", "k", 16, 0, 0.2, 0.0, 1e30, 0.05)]

SOURCE = """
def run(n, dep, depk, tick, digest, sha):
    s = 12345
    chain = bytes(32)
    marks = []
    for t in range(n):
        for _ in range(4):
            s = (s * 1103515245 + 12345) & 0x7FFFFFFF
            dep(s & 1, (s >> 4) % 32, (s >> 10) % 32, ((s >> 16) % 1000) / 64.0, 1 + s % 5)
        if t % 7 == 0:
            depk(2, b'k%d' % (s % 11), ((s >> 8) % 100) / 16.0, 9)
        tick()
        chain = sha(chain + digest())
        if (t + 1) % 1000 == 0:
            marks.append(''.join('%02x' % c for c in chain[:8]))
    return marks
"""
