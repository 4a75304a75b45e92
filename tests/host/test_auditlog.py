# SPDX-License-Identifier: MIT
"""tools/auditlog.py, the host check of the audit exports a mesh writes to /data: its
own parser of loci/cap/README.md's record layout, run over exports made by the C core
(the cffi build of loci/cap). A run of exports verifies end to end and its head is the
one the table carried on; a flipped byte, a missing, repeated or reordered file, or
bytes that are not records are refused with ValueError, never another error."""

from __future__ import annotations

import cap_cffi
import pytest
from cap_model import SENSE
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cap_audit import ALL, busy_table

from tools import auditlog


def exports(n_files, n_ops=3):
    """n_files exports of one busy table, and the head its last CHECKPOINT carries."""
    t = busy_table(n_ops, audit=512)
    _, ref = t.grant(5, ALL)
    out = []
    for _ in range(n_files):
        out.append(t.export())
        assert t.check(ref, 99, SENSE, 0) == "OWNER"   # a refusal: one more record
    return out, t


def test_a_run_of_exports_verifies_and_ends_at_the_carried_head():
    files, t = exports(4)
    c = auditlog.verify((f"{i:06d}.audit", b) for i, b in enumerate(files))
    assert c.files == 4 and c.first_seq == 0
    assert c.records == sum(len(b) for b in files) // auditlog.REC
    # The live log opens with the CHECKPOINT the last export left: it carries the head.
    last_checkpoint = t.log[0]
    assert auditlog.parse(last_checkpoint)[0].kind == auditlog.CHECKPOINT
    assert auditlog.parse(last_checkpoint)[0].data == c.head
    assert c.head == cap_cffi.chain(files[-1])
    assert auditlog.verify(((str(i), b) for i, b in enumerate(files)), c.head) == c
    with pytest.raises(ValueError, match="not"):
        auditlog.verify(((str(i), b) for i, b in enumerate(files[:-1])), c.head)


def test_a_run_seen_from_its_middle_starts_at_its_checkpoint():
    files, _ = exports(3)
    c = auditlog.verify((str(i), b) for i, b in enumerate(files[1:]))
    assert c.first_seq == auditlog.parse(files[1])[0].seq
    assert c.head == cap_cffi.chain(files[-1])


@pytest.mark.parametrize("order", [[0, 2], [1, 0, 2], [0, 1, 1, 2], [1, 2, 0]])
def test_a_missing_repeated_or_reordered_file_breaks_the_chain(order):
    files, _ = exports(3)
    with pytest.raises(ValueError):
        auditlog.verify((str(i), files[i]) for i in order)


@settings(max_examples=300, deadline=None)
@given(n_files=st.integers(1, 3), which=st.integers(0, 2), where=st.integers(0, 10**6),
       bit=st.integers(0, 7))
def test_any_flipped_byte_in_any_file_is_refused(n_files, which, where, bit):
    files, t = exports(n_files)
    head = auditlog.parse(t.log[0])[0].data     # the mesh's own, from its live log
    k = which % n_files
    b = bytearray(files[k])
    b[where % len(b)] ^= 1 << bit
    files[k] = bytes(b)
    with pytest.raises(ValueError):
        auditlog.verify(((str(i), f) for i, f in enumerate(files)), head)
    if k < n_files - 1:
        # A file followed by another is covered by the next one's CHECKPOINT alone.
        with pytest.raises(ValueError):
            auditlog.verify((str(i), f) for i, f in enumerate(files))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4 * auditlog.REC + 7))
def test_arbitrary_bytes_are_refused_or_parsed_never_crash(data):
    try:
        auditlog.verify([("x", data)])
    except ValueError:
        pass
