# SPDX-License-Identifier: MIT
"""Snapshots of the field: round trip, restore, diff, replay from snapshot + journal, and
the parser under bad input (truncated, other version, bit flips, well-sealed but invalid
content, arbitrary bytes), in-process with UBSan and in a native driver with ASan."""

import math
import random
import struct
import subprocess

import field_cffi
import pytest
from field_cffi import CField, FieldError, diff, snapshot_check
from field_model import Field, parse_header, reseal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def busy_field(seed=1, ticks=5, journal_cap=256):
    rng = random.Random(seed)
    c = CField(journal_cap=journal_cap)
    c.add_grid("food", 7, 5, 0.1, 0.3, 40.0, 1e-3)
    c.add_keyed("work", 8, 0.2, 10.0, 0.01)
    for _ in range(ticks):
        step(c, rng)
    return c, rng


def step(c, rng, tick=True):
    for _ in range(rng.randrange(1, 5)):
        c.deposit_cell(0, rng.randrange(35), rng.uniform(0, 9), rng.randrange(1, 4))
        if rng.random() < 0.5:
            c.deposit_key(1, b"k%d" % rng.randrange(7), rng.uniform(0, 3), rng.randrange(1, 4))
    if tick:
        c.tick()


def test_round_trip_into_an_empty_field():
    c, rng = busy_field()
    step(c, rng, tick=False)      # pending deposits are part of the state
    snap = c.snapshot()
    code, info = snapshot_check(snap)
    assert code == "FIELD_OK"
    assert (info.version, info.nflavours, info.tick, info.size) == (1, 2, 5, len(snap))
    assert bytes(info.digest) == c.digest() == parse_header(snap)["digest"]
    d = CField()
    d.restore(snap)
    assert d.digest() == c.digest()
    assert d.snapshot()[72:-4] == snap[72:-4]
    assert d.last_xy(0, 3, 2) == c.last_xy(0, 3, 2)
    c.tick()
    d.tick()
    assert d.digest() == c.digest()
    assert d.invariant_holds(0) and d.invariant_holds(1)


def test_restore_rewinds_and_is_all_or_nothing():
    c, rng = busy_field()
    snap = c.snapshot()
    for _ in range(3):
        step(c, rng)
    later = c.digest()
    assert later != parse_header(snap)["digest"]
    c.restore(snap)
    assert c.digest() == parse_header(snap)["digest"] and c.f.tick == 5
    assert c.journal(c.f.journal_next - 1)["kind"] == c.lib.FIELD_REC_RESTORE
    other = CField()
    other.add_grid("food", 7, 5, 0.1, 0.3, 40.0, 2e-3)      # one parameter differs
    other.add_keyed("work", 8, 0.2, 10.0, 0.01)
    other.deposit_xy(0, 1, 1, 2.0, 1)
    before = other.digest()
    with pytest.raises(FieldError) as e:
        other.restore(snap)
    assert e.value.code == "FIELD_ERR_LAYOUT" and other.digest() == before
    small = CField(arena_size=field_cffi.module().lib.field_base_size(64, 16, 4) + 200)
    with pytest.raises(FieldError) as e:
        small.restore(snap)
    assert e.value.code == "FIELD_ERR_NOMEM" and small.f.nflavours == 0
    assert small.f.arena_used == field_cffi.module().lib.field_base_size(64, 16, 4) - 16


def test_snapshot_bytes_match_the_format_spec():
    """The model writes FORMAT.md independently; both must produce the same bytes."""
    c, m = CField(), Field()
    for x in (c, m):
        x.add_grid("food", 3, 2, 0.5, 0.25, 8.0, 0.0)
        x.add_keyed("hot", 4, 0.0, 1e30, 0.0)
        x.deposit_cell(0, 4, 3.0, 9)
        x.deposit_key(1, b"f00", 2.5, 7)
        x.tick()
        x.deposit_cell(0, 1, 1.0, 5)
    snap = c.snapshot()
    assert snap == m.snapshot()
    h = parse_header(snap)
    assert h["magic"] == b"LOCIFLD\0" and h["header"] == 72 and h["flags"] == 0
    assert len(snap) == 72 + (44 + 24 + 4 + 8 + 4 + 16) + (44 + 4 + 24 + 4 + 8) + 4


def test_diff_lists_changed_cells_and_keys():
    c = CField()
    c.add_grid("food", 4, 4, 0.0, 0.0)
    c.add_keyed("work", 8)
    c.deposit_xy(0, 1, 2, 3.0, 1)
    c.deposit_key(1, b"stay", 1.0, 1)
    c.deposit_key(1, b"gone", 1.0, 1)
    c.tick()
    a = c.snapshot()
    c.deposit_xy(0, 3, 3, 2.0, 1)
    c.deposit_key(1, b"new", 4.0, 1)
    c.tick()
    b = c.snapshot()
    total, rows = diff(a, b)
    assert total == 2
    assert rows[0] == (0, 15, b"", 0.0, 2.0)
    assert rows[1][:3] == (1, 1, b"new") and rows[1][3:] == (0.0, 4.0)
    assert diff(a, a) == (0, [])
    total, rows = diff(b, a, cap=1)
    assert total == 2 and len(rows) == 1
    other = CField()
    other.add_grid("food", 4, 3)
    other.add_keyed("work", 8)
    with pytest.raises(FieldError) as e:
        diff(a, other.snapshot())
    assert e.value.code == "FIELD_ERR_LAYOUT"


def test_replay_reproduces_the_later_field_bit_for_bit():
    c, rng = busy_field(seed=3, ticks=4)
    step(c, rng, tick=False)
    snap = c.snapshot()
    for _ in range(20):
        step(c, rng)
    step(c, rng, tick=False)
    d = CField()
    d.replay(c, snap)
    assert d.digest() == c.digest()
    assert d.snapshot()[72:-4] == c.snapshot()[72:-4]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12), st.integers(0, 12))
def test_replay_from_any_point(seed, before, after):
    rng = random.Random(seed)
    c, _ = busy_field(seed, before)
    snap = c.snapshot()
    for _ in range(after):
        step(c, rng, tick=rng.random() < 0.8)
    d = CField()
    d.add_grid("food", 7, 5, 0.1, 0.3, 40.0, 1e-3)      # an existing matching layout works too
    d.add_keyed("work", 8, 0.2, 10.0, 0.01)
    d.replay(c, snap)
    assert d.digest() == c.digest()


def test_replay_refuses_lost_journal_and_restores():
    c, rng = busy_field(journal_cap=16)
    snap = c.snapshot()
    for _ in range(10):
        step(c, rng)
    assert c.f.journal_lost > 0
    d = CField()
    with pytest.raises(FieldError) as e:
        d.replay(c, snap)
    assert e.value.code == "FIELD_ERR_JOURNAL_LOST" and d.f.nflavours == 0
    c2, rng = busy_field()
    snap = c2.snapshot()
    step(c2, rng)
    c2.restore(snap)
    with pytest.raises(FieldError) as e:
        d.replay(c2, snap)
    assert e.value.code == "FIELD_ERR_REPLAY" and d.f.nflavours == 0


def test_ten_thousand_ticks_same_digest_every_tick():
    """Two independent fields ("two boots") running one seeded script agree at every tick."""
    fields = []
    for _ in range(2):
        c = CField(journal_cap=32)
        c.add_grid("food", 16, 16, 0.02, 0.2, 100.0, 1e-6)
        c.add_keyed("work", 16, 0.05, 10.0, 0.01)
        fields.append(c)
    rngs = [random.Random(2024), random.Random(2024)]
    lib = fields[0].lib
    for _ in range(10_000):
        digests = []
        for c, rng in zip(fields, rngs, strict=True):
            if rng.random() < 0.5:
                lib.field_deposit_cell(c.f, 0, rng.randrange(256), rng.uniform(0, 5), 1)
                lib.field_deposit_key(c.f, 1, b"t%d" % rng.randrange(20), 3, 1.0, 2)
            lib.field_tick(c.f)
            digests.append(c.digest())
        assert digests[0] == digests[1]
    assert fields[0].f.tick == 10_000 and fields[0].total(0) > 0


# -- bad input ---------------------------------------------------------------------------

def small_snapshot():
    c, rng = busy_field(ticks=2)
    step(c, rng, tick=False)
    return c.snapshot()


def test_every_truncation_is_reported_as_truncated():
    snap = small_snapshot()
    for n in range(len(snap)):
        assert snapshot_check(snap[:n])[0] == "FIELD_ERR_SNAP_TRUNCATED", n
    assert snapshot_check(snap + b"\0")[0] == "FIELD_ERR_SNAP_CORRUPT"


def test_other_version_and_other_magic():
    snap = bytearray(small_snapshot())
    struct.pack_into("<H", snap, 8, 2)
    assert snapshot_check(bytes(snap))[0] == "FIELD_ERR_SNAP_VERSION"
    assert snapshot_check(reseal(snap))[0] == "FIELD_ERR_SNAP_VERSION"
    assert snapshot_check(b"PNG\r\n" + bytes(100))[0] == "FIELD_ERR_SNAP_MAGIC"
    assert snapshot_check(b"")[0] == "FIELD_ERR_SNAP_TRUNCATED"
    c = CField()
    c.add_grid("food", 2, 2)
    before = c.digest()
    for bad, code in ((bytes(snap), "FIELD_ERR_SNAP_VERSION"),
                      (small_snapshot()[:-1], "FIELD_ERR_SNAP_TRUNCATED")):
        with pytest.raises(FieldError) as e:
            c.restore(bad)
        assert e.value.code == code and c.digest() == before


def test_every_single_bit_flip_is_refused():
    snap = small_snapshot()
    for i in range(len(snap)):
        for bit in (0, 3, 7):
            data = bytearray(snap)
            data[i] ^= 1 << bit
            assert snapshot_check(bytes(data))[0] != "FIELD_OK", (i, bit)


def test_resealed_edits_of_hashed_content_fail_the_digest():
    snap = small_snapshot()
    for off in (16, 72, 72 + 20, 72 + 44 + 4 * 10):
        data = bytearray(snap)
        data[off] ^= 0x01
        assert snapshot_check(reseal(data))[0] in ("FIELD_ERR_SNAP_DIGEST",
                                                   "FIELD_ERR_SNAP_CORRUPT")


def sealed(mutate):
    """A snapshot from the model after `mutate(model)`: valid CRC and digest, so only the
    content checks stand between it and the field."""
    m = Field()
    m.add_grid("food", 3, 3, 0.1, 0.2, 10.0, 0.0)
    m.add_keyed("work", 4, 0.1, 10.0, 0.0)
    m.deposit_cell(0, 4, 2.0, 1)
    m.deposit_key(1, b"b", 1.0, 1)
    m.deposit_key(1, b"a", 1.0, 1)
    m.tick()
    m.deposit_cell(0, 2, 1.0, 1)
    mutate(m)
    return m.snapshot()


def _set(obj, attr, value):
    setattr(obj, attr, value)


BAD_CONTENT = {
    "nan cell": lambda m: m.flavours[0].cells.__setitem__(0, math.nan),
    "inf cell": lambda m: m.flavours[0].cells.__setitem__(0, math.inf),
    "negative cell": lambda m: m.flavours[0].cells.__setitem__(1, -1.0),
    "pending above cap": lambda m: m.flavours[0].pending.__setitem__(2, 11.0),
    "evaporation > 1": lambda m: _set(m.flavours[0], "e", 1.5),
    "diffusion on keyed": lambda m: _set(m.flavours[1], "g", 0.5),
    "cap zero": lambda m: _set(m.flavours[0], "cap", 0.0),
    "min nan": lambda m: _set(m.flavours[0], "min", math.nan),
    "duplicate name": lambda m: _set(m.flavours[1], "name", "food"),
    "empty name": lambda m: _set(m.flavours[1], "name", ""),
    "unknown kind": lambda m: _set(m.flavours[1], "kind", 3),
    "zero width": lambda m: (_set(m.flavours[0], "w", 0), _set(m.flavours[0], "h", 9)),
    "keyed over capacity": lambda m: _set(m.flavours[1], "w", 1),
    "keyed value above cap": lambda m: m.flavours[1].entries[b"a"].__setitem__(0, 20.0),
    "keyed empty key": lambda m: m.flavours[1].entries.__setitem__(b"", [1.0, 0.0, 0]),
    "keyed key too long": lambda m: m.flavours[1].entries.__setitem__(b"z" * 16,
                                                                      [1.0, 0.0, 0]),
}


@pytest.mark.parametrize("case", sorted(BAD_CONTENT))
def test_sealed_but_invalid_content_is_corrupt(case):
    assert snapshot_check(sealed(lambda m: None))[0] == "FIELD_OK"
    data = sealed(BAD_CONTENT[case])
    assert snapshot_check(data)[0] == "FIELD_ERR_SNAP_CORRUPT"


def _keyed_offset(data):
    """Offsets in a snapshot of the `sealed` layout: (end of the grid's hashed part,
    start of the keyed descriptor)."""
    grid_end = 72 + 44 + 36 + 4 + 8 * struct.unpack_from("<I", data, 72 + 44 + 36)[0]
    return grid_end, grid_end + 4 + 8 * struct.unpack_from("<I", data, grid_end)[0]


def _redigest(data):
    """Recompute digest and CRC of an edited snapshot of the `sealed` layout."""
    import hashlib
    import zlib

    grid_end, keyed = _keyed_offset(data)
    keyed_end = keyed + 44 + 4 + 24 * struct.unpack_from("<I", data, keyed + 44)[0]
    h = hashlib.sha256(data[16:24] + data[12:16] + data[72:grid_end] + data[keyed:keyed_end])
    out = data[:40] + h.digest() + data[72:-4]
    return out + struct.pack("<I", zlib.crc32(out))


def test_unsorted_or_duplicate_keys_are_corrupt():
    good = sealed(lambda m: None)
    assert _redigest(good) == good
    start = _keyed_offset(good)[1] + 44 + 4
    a, b = good[start:start + 24], good[start + 24:start + 48]
    assert a[1:2] == b"a" and b[1:2] == b"b"
    for entries in (b + a, a + a):
        data = bytearray(good)
        data[start:start + 48] = entries
        assert snapshot_check(_redigest(bytes(data)))[0] == "FIELD_ERR_SNAP_CORRUPT"


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash(data):
    code, _ = snapshot_check(data)
    assert code != "FIELD_OK"
    assert snapshot_check(b"LOCIFLD\0\x01\0" + data)[0] != "FIELD_OK"


@FUZZ
@given(st.data())
def test_mutated_snapshots_never_crash_and_accepted_ones_round_trip(data):
    snap = bytearray(small_snapshot())
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(snap) - 1))
        snap[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        snap = snap[:data.draw(st.integers(0, len(snap)))]
    raw = bytes(snap)
    candidates = [raw, reseal(raw) if len(raw) >= 4 else raw]
    for cand in candidates:
        code, info = snapshot_check(cand)
        c = CField()
        try:
            c.restore(cand)
        except FieldError as e:
            assert e.code == code
            assert c.f.nflavours == 0
            continue
        # Accepted: the edit only touched unhashed bytes (provenance, journal_seq), and the
        # restored field writes back the same content.
        assert code == "FIELD_OK"
        assert c.snapshot()[72:-4] == cand[72:-4]
        assert c.digest() == bytes(info.digest)


def test_parser_corpus_under_address_sanitizer(tmp_path):
    exe = field_cffi.asan_driver()
    if exe is None:
        pytest.fail("cannot build with -fsanitize=address on this host")
    rng = random.Random(7)
    seeds = [small_snapshot(), sealed(lambda m: None)] + [sealed(f) for f in
                                                         BAD_CONTENT.values()]
    corpus = list(seeds) + [b""]
    for _ in range(400):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        corpus.append(reseal(data) if len(data) >= 4 and rng.random() < 0.7 else bytes(data))
    paths = []
    for i, data in enumerate(corpus):
        p = tmp_path / f"{i}.snap"
        p.write_bytes(data)
        paths.append(str(p))
    p = subprocess.run([str(exe), *paths], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [line.split() for line in p.stdout.splitlines()]
    assert len(rows) == len(corpus)
    ok = field_cffi.module().lib.FIELD_OK
    for data, (check, restore, dif, _) in zip(corpus, rows, strict=True):
        assert snapshot_check(data)[0] == field_cffi.err_name(int(check))
        assert (int(check) == ok) == (int(restore) == ok) == (int(dif) == ok)
    assert sum(int(r[0]) == ok for r in rows) >= 2
