# SPDX-License-Identifier: MIT
# Helpers the colonies' set-up code shares (console side, not Locus code): a seeded
# xorshift for set-up choices, per-mesh colony state, and small statistics.

_STATE = {}


class Rng:
    """xorshift32; the same sequence on CPython and MicroPython for the same seed."""

    def __init__(self, seed):
        self.s = (seed * 2654435761 + 0x9E3779B9) & 0xFFFFFFFF or 1

    def next(self):
        s = self.s
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self.s = s
        return s

    def below(self, n):
        return self.next() % n

    def random(self):
        return (self.next() >> 2) / 1073741824.0


def state(m, value=None):
    """The colony state set up for mesh `m` (set it by passing `value`)."""
    if value is not None:
        _STATE[id(m)] = value
    return _STATE[id(m)]


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n at worst."""
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq else 1.0


def percentile(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def mean(xs):
    return sum(xs) / len(xs) if xs else None
