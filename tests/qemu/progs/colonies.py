# SPDX-License-Identifier: MIT
# Set-up of test_colonies.py: the colonies of loci/python/colonies on the shipped mesh,
# and a field's journal as bytes for the host to replay (deposits and ticks).
import mesh, struct
from colonies import bridge, foraging, healing, hostile, src_hostile, tasks
def journal_bytes(f):
    # Per record: b'T' for a tick; b'G' flavour x y amount depositor for a grid deposit;
    # b'K' flavour amount depositor keylen key for a keyed one. Amounts are the field's
    # float32, sent as float32: exact.
    info = f.info()
    out = []
    for seq in range(info['journal_oldest'], info['journal_next']):
        r = f.journal(seq)
        if r[2] == 'tick':
            out.append(b'T')
        elif r[2] == 'deposit' and isinstance(r[4], tuple):
            out.append(b'G' + struct.pack('<BHHfI', r[3], r[4][0], r[4][1], r[5], r[6]))
        elif r[2] == 'deposit':
            out.append(b'K' + struct.pack('<BfIB', r[3], r[5], r[6], len(r[4])) + r[4])
        else:
            out.append(b'?')
    return b''.join(out)
