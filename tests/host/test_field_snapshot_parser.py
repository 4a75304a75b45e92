# SPDX-License-Identifier: MIT
"""tools/field/fieldsnap.py, the host tools' own reader of FORMAT.md, against snapshots made by
the C core (host cffi build): same values, pending, provenance and digest; and on damaged
bytes the same verdict as the C parser, as a SnapshotError naming the problem."""

import random
import struct

import pytest
from field_cffi import CField, snapshot_check
from field_model import reseal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.field import fieldsnap
from tools.field.fieldsnap import SnapshotError, parse

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# The C core's error name for each SnapshotError code.
C_CODE = {"truncated": "FIELD_ERR_SNAP_TRUNCATED", "magic": "FIELD_ERR_SNAP_MAGIC",
          "version": "FIELD_ERR_SNAP_VERSION", "checksum": "FIELD_ERR_SNAP_CHECKSUM",
          "corrupt": "FIELD_ERR_SNAP_CORRUPT", "digest": "FIELD_ERR_SNAP_DIGEST"}


def busy(seed=3, ticks=6):
    rng = random.Random(seed)
    c = CField(journal_cap=256)
    c.add_grid("food", 9, 6, 0.1, 0.3, 40.0, 1e-3)
    c.add_keyed("work", 8, 0.2, 10.0, 0.01)
    c.add_grid("trail", 4, 3, 0.5, 0.0)
    for t in range(ticks + 1):
        for _ in range(rng.randrange(1, 6)):
            c.deposit_cell(0, rng.randrange(54), rng.uniform(0, 9), rng.randrange(1, 4))
            c.deposit_key(1, b"k%d" % rng.randrange(6), rng.uniform(0, 3), rng.randrange(1, 4))
            c.deposit_xy(2, rng.randrange(4), rng.randrange(3), 2.0, 9)
        if t < ticks:           # the last round stays pending: part of the snapshot too
            c.tick()
    return c


def test_parser_reads_what_the_c_core_wrote():
    c = busy()
    data = c.snapshot()
    s = parse(data)
    assert (s.version, s.tick, s.size, s.digest) == (1, 6, len(data), c.digest())
    assert list(s.flavours) == ["food", "work", "trail"]
    food, work, trail = s.flavours.values()
    assert (food.kind, food.w, food.h) == ("grid", 9, 6)
    assert list(food.values) == c.values(0)
    assert food.at(4, 2) == c.sense_xy(0, 4, 2)
    assert food.total() == pytest.approx(c.total(0), rel=1e-12)
    assert list(work.entries) == c.keys(1) and list(work.entries.values()) == c.values(1)
    assert work.pending and all(v > 0 for v in work.pending.values())
    assert trail.pending and set(trail.last.values()) == {9}
    assert all(food.last[i] == c.last_xy(0, i % 9, i // 9) for i in food.last)
    # Parameters come back as the float32 the C stored.
    assert (food.E, food.G, food.cap, food.min) == pytest.approx((0.1, 0.3, 40.0, 1e-3))


def test_empty_field_and_out_of_range_cell():
    c = CField()
    s = parse(c.snapshot())
    assert (s.tick, s.flavours) == (0, {})
    c.add_grid("g", 2, 2)
    g = parse(c.snapshot()).flavours["g"]
    with pytest.raises(IndexError, match=r"cell \(2, 0\) outside 'g'"):
        g.at(2, 0)


@pytest.mark.parametrize("edit,code,words", [
    (lambda d: d[:-1], "truncated", "of a"),
    (lambda d: d[:9], "truncated", "too short for a version"),
    (lambda d: d[:50], "truncated", "header needs 72"),
    (lambda d: b"GARBAGE!" + d[8:], "magic", "no LOCIFLD magic"),
    (lambda d: d[:8] + b"\x02\x00" + d[10:], "version", "format version 2"),
    (lambda d: d[:100] + bytes([d[100] ^ 0x10]) + d[101:], "checksum", "CRC-32"),
    (lambda d: reseal(d[:50] + bytes([d[50] ^ 1]) + d[51:]), "digest", "digest"),
    (lambda d: reseal(d[:72] + b"\x07" + d[73:]), "corrupt", "kind 7"),
    # A name length one longer takes in a NUL: found by the fuzz test below.
    (lambda d: reseal(d[:73] + bytes([d[73] + 1]) + d[74:]), "corrupt", "name length"),
    (lambda d: reseal(d[:36] + b"\x01" + d[37:]), "corrupt", "flags"),
    # The first cell of 'food' made negative (and the CRC fixed): a rule, not framing.
    (lambda d: reseal(d[:116] + struct.pack("<f", -1.0) + d[120:]), "corrupt", "cell 0"),
])
def test_damaged_snapshots_name_their_problem(edit, code, words):
    bad = edit(busy().snapshot())
    with pytest.raises(SnapshotError, match=words) as e:
        parse(bad)
    assert e.value.code == code
    assert snapshot_check(bad)[0] == C_CODE[code]       # the C core agrees


def test_digest_check_can_be_skipped_but_not_the_rest():
    data = busy().snapshot()
    bad = reseal(data[:40] + bytes(32) + data[72:])
    assert parse(bad, verify_digest=False).tick == 6
    with pytest.raises(SnapshotError, match="digest"):
        parse(bad)


SNAP = busy(seed=11, ticks=3).snapshot()


@FUZZ
@given(st.data())
def test_any_damage_is_refused_like_the_c_parser(data):
    """Random cuts, bit flips and byte overwrites (resealed or not): the Python parser
    raises a SnapshotError, never anything else, exactly when the C parser refuses, and
    with the same code."""
    buf = bytearray(SNAP)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "byte", "cut"]))
        if op == "cut" or not buf:
            del buf[data.draw(st.integers(0, len(buf))):]
        elif op == "flip":
            i = data.draw(st.integers(0, len(buf) - 1))
            buf[i] ^= 1 << data.draw(st.integers(0, 7))
        else:
            buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    bad = bytes(buf)
    if len(bad) >= 76 and data.draw(st.booleans()):
        bad = reseal(bad)
    c_code = snapshot_check(bad)[0]
    try:
        parse(bad)
    except SnapshotError as e:
        assert C_CODE[e.code] == c_code, (e, c_code)
    else:
        assert c_code == "FIELD_OK"


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash_the_parser(blob):
    for data in (blob, fieldsnap.MAGIC + blob, SNAP[:10] + blob):
        try:
            parse(data)
        except SnapshotError as e:
            assert e.code in C_CODE and str(e).startswith("snapshot ")
