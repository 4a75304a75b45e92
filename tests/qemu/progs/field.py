# SPDX-License-Identifier: MIT
# Set-up of test_field.py: a field of two grids and a keyed flavour, and its first snapshot.
from field import Field, Snapshot, grid, keyed, diff, FieldError
import _field
f = Field([grid('food', 16, 8, E=0.5, G=0.0), grid('trail', 16, 8, E=0.1, G=0.4),
           keyed('work', 4, E=0.5, min=0.1)], journal=32)
S0 = f.snapshot()
def state(f):
    return (f.digest(), f.info()['journal_next'], f.info()['tick'])
