# SPDX-License-Identifier: MIT
# test_field_pictures.py: a small field with known hot cells, run in the raw REPL.
from field import Field, grid, keyed
P = Field([grid('heat', 20, 10, E=0.5), keyed('jobs', 8)])
for x, y, v in ((13, 7, 9.0), (2, 1, 4.0), (19, 0, 1.0), (5, 5, 2.0)):
    P.deposit('heat', (x, y), 2 * v, 5)
P.deposit('jobs', 'build', 3.0); P.deposit('jobs', 'lint', 1.0)
P.tick()
