# SPDX-License-Identifier: MIT
# The one handle a Locus's code receives. Its public attributes are a copy for the
# Locus to read (and scribble on, harmlessly); the mesh keeps the truth in the record
# behind `_l`, which the `locus` verifier profile makes unreachable (no `_` attributes).


class Ctx:
    def __init__(self, mesh, rec):
        self._m = mesh
        self._l = rec
        self.id = rec.id
        self.name = rec.name
        self.args = rec.args
        self.mem = rec.mem
        self.tick = 0
        self.pos = rec.pos

    def goto(self, x, y):
        """Move this Locus's attention to (x, y) on its attention grid."""
        self.pos = self._m._goto(self._l, x, y)

    def sense(self, flavour, where=None):
        """Committed value of `flavour` at `where` (default: this Locus's attention)."""
        return self._m._sense(self._l, flavour, where)

    def around(self, flavour, where=None):
        """The 3x3 neighbourhood, row-major from (x-1, y-1); None off the grid."""
        return self._m._around(self._l, flavour, where)

    def gradient(self, flavour, where=None):
        """(dx, dy) towards the highest higher neighbour, or (0, 0)."""
        return self._m._gradient(self._l, flavour, where)

    def top(self, flavour, k):
        """The k largest cells or keys of `flavour`: [(where, value)], largest first."""
        return self._m._top(self._l, flavour, k)

    def deposit(self, flavour, amount, where=None):
        """Leave `amount` of `flavour` at `where` (seen by everyone after the tick).
        False if a keyed flavour had no slot left for a new key (filled by others)."""
        return self._m._deposit(self._l, flavour, amount, where)

    def port_in(self, port, width=1):
        """Read an x86 I/O port (1, 2 or 4 bytes): needs an `io` grant covering it."""
        return self._m._port(self._l, port, width, None)

    def port_out(self, port, value, width=1):
        """Write an x86 I/O port: needs an `io` grant covering it."""
        self._m._port(self._l, port, width, value)

    def mem_read(self, addr, n):
        """n bytes of physical memory at addr: needs a `mem` grant covering them."""
        return self._m._mem(self._l, addr, n)

    def rewrite(self, key):
        """Ask the optimiser to try the hot function of `key` (a 'heat' key): needs the
        rewrite right. Only queues the request (the gates run after the round, outside
        every step); the outcome appears on the 'opt' flavour at that key. True if the
        request is this Locus's, False if another Locus's request for the key is pending
        or the queue is full. A lineage has at most 8 requests pending (ValueError)."""
        return self._m._rewrite(self._l, key)

    def rand(self):
        """A 30-bit integer from this Locus's own seeded generator."""
        return self._l.next_rand()

    def random(self):
        """A float in [0, 1) from this Locus's own seeded generator."""
        return self._l.next_rand() / 1073741824.0

    def log(self, text):
        """A short line into this Locus's log (shown by info(id))."""
        self._l.add_log(self._m.tick, text)

    def spawn(self, manifest):
        """A child Locus with capabilities derived (narrowed) from this one's."""
        return self._m._spawn_child(self._l, manifest)

    def retire(self):
        """End this Locus after the current step."""
        self._l.retire_asked = True
