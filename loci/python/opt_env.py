# SPDX-License-Identifier: MIT
# A colony's env callback (mesh.env: fn(mesh) after every field tick) as the optimiser's
# candidate. It is console code whose argument is the live Mesh, and a closure over the
# colony's state: the gates replay its recorded calls on copies of its free variables
# (opt._values copies cells) with a MeshStandIn in the Mesh's place.
#   - The stand-in's field answers reads from the live field as it is and records them;
#     it records deposits instead of making them. A deposit is pending until the next
#     tick, so reads after it answer as they would have live.
#   - The equivalence gate compares the records: old and new code must read the same
#     traces and deposit the same amounts, in the same order.
#   - Anything else asked of the stand-in (m.kill, m.ps, a field method not listed here)
#     is not answered: the replay raises AttributeError and the gate refuses the
#     candidate (`missing`), since both sides failing alike would prove nothing.
import mesh as _mesh
import opt

# The field's methods that only read: answered from the live field, and recorded.
READS = ("sense", "last", "neighbourhood", "gradient", "region", "total", "topk",
         "tick_count", "kind", "names")


class FieldStandIn:
    def __init__(self, field, owner):
        self._field = field
        self._owner = owner   # the MeshStandIn, which notes what could not be answered
        self.calls = []

    def deposit(self, flavour, where, amount, who=None):
        self.calls.append(("deposit", flavour, where, amount, who))

    def __getattr__(self, name):
        # Only for names that are not methods here: READS are (below).
        self._owner.missing = "field." + name
        raise AttributeError(name)


def _reader(name):
    def read(self, *args):
        self.calls.append((name,) + args)
        return getattr(self._field, name)(*args)
    return read


for _name in READS:
    setattr(FieldStandIn, _name, _reader(_name))


class MeshStandIn:
    """The Mesh a replay of an env callback gets: .field is a FieldStandIn over the live
    field, .tick, .now and .rounds are the live mesh's. Its state, which the equivalence
    gate compares, is the field calls made."""

    REPLAY = True   # opt._values copies it with copy() and compares state()

    def __init__(self, m, calls=None):
        self._m = m
        self.missing = None
        self.field = FieldStandIn(m.field, self)
        if calls is not None:
            self.field.calls = list(calls)
        self.tick = m.field.tick_count()
        self.now, self.rounds = m.now, m.rounds

    def copy(self):
        return MeshStandIn(self._m, self.field.calls)

    def state(self):
        return (self.field.calls, self.missing)

    def __getattr__(self, name):
        self.missing = "m." + name
        raise AttributeError(name)

    def __repr__(self):
        return "<stand-in of a mesh at tick %d>" % self.tick


opt.stand_in(_mesh.Mesh, MeshStandIn)
