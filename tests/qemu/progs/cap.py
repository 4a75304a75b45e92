# SPDX-License-Identifier: MIT
# Set-up of test_cap.py: a capability table with one grant and two derivations from it.
import _cap, time
S, D, SP = _cap.SENSE, _cap.DEPOSIT, _cap.SPAWN
t = _cap.Table(capacity=64, audit=512)
a = t.grant(1, S | D | SP, flavours=0b11, region=(0, 0, 16, 16), keys=(b'task:',), rate=5.0)
b = t.derive(a, 2, rights=S | D, flavours=1, region=(4, 4, 4, 4), rate=2.0, expires=100)
c = t.derive(b, 3, rights=S, keys=(b'task:7',))
