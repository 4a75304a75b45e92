# SPDX-License-Identifier: MIT
# test_field_determinism.py, pasted after field_run.py and the lines that bind LAYOUT and
# TICKS: the run on the guest's own field, printing its checkpoint marks.
import hashlib
from field import Field
f = Field(LAYOUT)
def dep(i, x, y, a, who):
    f.deposit(i, (x, y), a, who)
def depk(i, k, a, who):
    f.deposit(i, k, a, who)
print('MARKS', run(TICKS, dep, depk, f.tick, f.digest, lambda b: hashlib.sha256(b).digest()))
