# SPDX-License-Identifier: MIT
# The scripted, seeded field run of test_field_determinism.py, the same text in the guest
# (MicroPython, on `_field`) and on the host (CPython, on the cffi build of the same C):
# one LCG, float32-exact amounts, one chained SHA-256 over every tick's digest,
# checkpointed every 1000 ticks.
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
