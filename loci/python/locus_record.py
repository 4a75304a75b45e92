# SPDX-License-Identifier: MIT
# What the mesh knows about one Locus: identity, code, capabilities, budget use,
# strikes and back-off. Never handed to Locus code.
import locus_text

LOG_LINES = 8


class Record:
    def __init__(self, lid, man, seed):
        self.id = lid
        self.name = man["name"]
        self.man = man
        self.args = man["args"]
        self.budget = man["budget"]
        self.mem = {}
        self.caps = []          # [(Cap, rights, flavour mask)] in grant order
        self.attend = man["attend"]
        self.wake = man["wake"]
        self.pos = None
        if self.attend is not None and "at" in self.attend:
            self.pos = self.attend["at"]
        self.state = "live"
        self.steps = 0
        self.fails = 0
        self.strikes = 0
        self.backoff_until = 0
        self.last_round = 0
        self.ops = 0
        self.ops_last = 0
        self.alloc = 0
        self.kept = 0           # bytes it kept across steps, when last measured
        self.kept_bound = 0     # kept + what it allocated since: an upper bound
        self.cycles = 0
        self.deposits = 0       # this epoch
        self.keys = {}          # a root: keyed flavour index -> [keys its lineage added]
        self.keyed = 0          # mask of the keyed flavours it may deposit on
        self.dropped = 0        # keyed deposits dropped: the flavour full through others
        self.restarts = 0
        self.parent = 0
        self.root = lid         # the console-spawned ancestor (itself, if it is one)
        self.lineage = 0        # a root: its live descendants
        self.error = None
        self.pending_error = None
        self.retire_asked = False
        self.dump = None
        self.log = []
        self.step_fn = None
        self.ns = None
        self.ctx = None
        self.code = None
        # xorshift32; never 0
        self.rng = (seed * 2654435761 + lid * 40503) & 0xFFFFFFFF or 0x9E3779B9

    def next_rand(self):
        x = self.rng
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.rng = x
        return x >> 2

    def add_log(self, tick, text):
        self.log.append("%d: %s" % (tick, locus_text.short(text, 80)))
        if len(self.log) > LOG_LINES:
            self.log.pop(0)

    def row(self):
        return {"id": self.id, "name": self.name, "state": self.state,
                "steps": self.steps, "strikes": self.strikes, "ops": self.ops_last,
                "alloc": self.alloc, "caps": len(self.caps)}
