# SPDX-License-Identifier: MIT
"""Dicts keyed by strs made at run time (vm/patches/0022): mp_map_lookup hashes such a
str and compares two of them inline. A dict must still tell apart keys whose 16-bit
hashes collide, find a key given as another str object with the same text (or as the
interned qstr), and forget what was deleted."""

from __future__ import annotations

SETUP = """\
def made(s):
    # The same text as a new str object (not the literal, not interned).
    return ''.join([s[:1], s[1:]])

WORDS = ['w%d:%s' % (i, 'x' * (i % 7)) for i in range(4000)]
BY_HASH = {}
for w in WORDS:
    BY_HASH.setdefault(hash(w), []).append(w)
COLLIDING = [ws for ws in BY_HASH.values() if len(ws) > 1]
D = {}
for i, w in enumerate(WORDS):
    D[made(w)] = i
"""


def test_colliding_keys_are_told_apart(g):
    # 4,000 words in 65,536 hashes: some pairs share one, and the probe meets both.
    assert g.ask("len(COLLIDING)") > 10
    assert g.ask("len(D), all(D[made(w)] == i for i, w in enumerate(WORDS))") == \
        (4000, True)
    assert g.ask("all(D[ws[0]] != D[ws[1]] for ws in COLLIDING)") is True


def test_a_key_is_found_whatever_str_object_names_it(g):
    g.run("q = {'alpha': 1, 'beta': 2}; q[made('gamma')] = 3")
    assert g.ask("q[made('alpha')], q['gamma'], q.get(made('delta'), 0)") == (1, 3, 0)
    assert g.ask("made('beta') in q, 'beta' in q, b'beta' in q") == (True, True, False)


def test_deleted_keys_are_gone_and_the_rest_stay(g):
    g.run("exec('for w in WORDS[::2]:\\n    del D[made(w)]')")
    assert g.ask("len(D), any(made(w) in D for w in WORDS[::2])") == (2000, False)
    assert g.ask("all(D[made(WORDS[i])] == i for i in range(1, 4000, 2))") is True
