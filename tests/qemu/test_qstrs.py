# SPDX-License-Identifier: MIT
"""The qstr hash index (vm/patches/0019, MICROPY_QSTR_HASH_INDEX) in the guest: every
interned string is in it and is found again rather than interned twice, through the
table's growth, 16-bit hash collisions and a soft reset; and its growth inside a
budgeted call is neither charged to the call nor refused by its budget."""

from __future__ import annotations

import re

SETUP = """\
import kernel, _budget

def intern(s):
    # hasattr interns the name it is given (a str made at run time is not a qstr yet).
    return hasattr(kernel, s)

def complete():
    # The index holds every qstr but the two empty ones (MP_QSTRnull and ''), and is
    # at most three quarters full.
    q = kernel.qstrs()
    return q['index_used'] == q['count'] - 2 and q['index_used'] * 4 <= q['index_slots'] * 3
"""


def qstrs(guest) -> dict:
    return guest.ask("kernel.qstrs()")


def test_the_index_holds_every_qstr(guest):
    out = guest.paste(SETUP)
    assert "Traceback" not in out, out
    q = qstrs(guest)
    assert q["index_slots"] >= 1024 and q["count"] > 2000, q
    assert guest.eval("complete()") == "True", q


def test_names_are_found_again_not_interned_twice(guest):
    # 30,000 names over 16-bit hashes: many share a hash, and the table grows several
    # times. Looking each up again (from a new str with the same text) must find the
    # same qstr: a miss would intern a duplicate, and the count would grow.
    out = guest.paste("""\
def names(n):
    return ['n%d_%s' % (i, 'x' * (i % 7)) for i in range(n)]
c0 = kernel.qstrs()['count']
for s in names(30000):
    intern(s)
c1 = kernel.qstrs()['count']
for s in names(30000):
    intern(s)
c2 = kernel.qstrs()['count']
""", timeout=300)
    assert "Traceback" not in out, out
    assert guest.ask("(c1 - c0, c2 - c1)") == (30000, 0)
    assert guest.eval("complete()") == "True", qstrs(guest)
    # A name found through the index is the attribute's own key.
    out = guest.paste("""\
class O:
    pass
o = O()
for i, s in enumerate(names(3000)):
    setattr(o, s, i)
ok = all(getattr(o, ''.join(list(s))) == i for i, s in enumerate(names(3000)))
""", timeout=300)
    assert "Traceback" not in out, out
    assert guest.eval("ok") == "True"


def test_growing_the_index_in_a_budgeted_call_is_not_charged(guest):
    # Bring the index to one name short of its growth (with room in the newest pool, so
    # that the name itself needs no new pool), then intern that name in a call allowed
    # 4 KiB: the new table, 16 bytes a slot of the old one, is the system's, not the call's.
    out = guest.paste("""\
def to_the_edge():
    i = 0
    while True:
        q = kernel.qstrs()
        if (q['index_used'] + 1) * 4 > q['index_slots'] * 3 and q['pool_room'] > 0:
            return q
        intern('edge%d' % i)
        i += 1

def trial():
    name = 'the_name_that_grows_it'
    before = to_the_edge()
    r = _budget.run(intern, name, 0, 0, 4096)
    return before, r[0], r[4], kernel.qstrs()
""")
    assert "Traceback" not in out, out
    before, status, alloc, after = guest.ask("trial()", timeout=300)
    assert status == 0, (status, alloc)
    assert after["index_slots"] == 2 * before["index_slots"], (before, after)
    assert after["count"] == before["count"] + 1
    assert alloc < 4096 < 16 * before["index_slots"], alloc
    assert guest.eval("complete()") == "True", after
    # The same limit stops an allocation that is the call's own.
    assert guest.ask("_budget.run(bytearray, 8192, 0, 0, 4096)[0] == _budget.ALLOC")


def test_a_soft_reset_starts_a_new_index(guest):
    # Last in the module: the reset ends the module's set-up. The run-time qstrs go with
    # the old heap, and the index is rebuilt at the first new name.
    before = qstrs(guest)
    guest.send(b"\x04")
    out = guest.expect(re.escape(">>> "), timeout=60).decode(errors="replace")
    assert "soft reboot" in out
    out = guest.paste(SETUP)
    assert "Traceback" not in out, out
    q = qstrs(guest)
    assert q["count"] < before["count"] - 30000, (before, q)
    assert guest.eval("complete()") == "True", q
    # The literals are interned when the line compiles; the name they make, by intern.
    added = guest.ask("(lambda c: (intern('n5_' + 'xxxxx'), kernel.qstrs()['count'] - c)[1])"
                      "(kernel.qstrs()['count'])")
    assert added == 1
    assert guest.eval("complete()") == "True", qstrs(guest)
