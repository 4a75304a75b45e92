# SPDX-License-Identifier: MIT
"""The journal export (loci/field/FORMAT.md, "Journal export"): the C core's bytes read by
the independent host reader tools/field/fieldjournal.py record for record; damaged bytes
refused with ValueError only, and with the C reader's verdict; replay of a snapshot plus
an export on the host arriving at the live field's digest; `fieldsnap.py replay`."""

from __future__ import annotations

import random
import struct
import subprocess
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.host.field_cffi import CField, module
from tools.build import cffihost
from tools.field import fieldcore, fieldjournal, fieldsnap

CODES = {"FIELD_ERR_JRN_TRUNCATED": "truncated", "FIELD_ERR_JRN_MAGIC": "magic",
         "FIELD_ERR_JRN_VERSION": "version", "FIELD_ERR_JRN_CHECKSUM": "checksum",
         "FIELD_ERR_JRN_CORRUPT": "corrupt"}


def export(c: CField, seq: int = 0, digest: bytes | None = None) -> bytes:
    size = c.lib.field_journal_export_size(c.f, seq)
    buf = c.ffi.new("uint8_t[]", size)
    n = c.ffi.new("size_t *")
    rc = c.lib.field_journal_export(c.f, seq, digest if digest else c.ffi.NULL, buf, size, n)
    assert rc == 0, rc
    return bytes(c.ffi.buffer(buf, n[0]))


def c_verdict(data: bytes) -> str:
    m = module()
    info = m.ffi.new("field_journal_info_t *")
    rc = m.lib.field_journal_check(data, len(data), info)
    if rc == 0:
        return "ok"
    names = [n for n in dir(m.lib) if n.startswith("FIELD_ERR_JRN_")
             and getattr(m.lib, n) == rc]
    return CODES[names[0]]


def busy_field(seed: int, ticks: int, journal: int = 4096) -> CField:
    c = CField(journal_cap=journal, watch_cap=4)
    g = c.add_grid("food", 16, 12, e=0.05, g=0.3)
    k = c.add_keyed("work", 32, e=0.1, mn=0.01)
    c.watch_region(g, 2, 2, 6, 6, 5.0)
    c.watch_key(k, b"task1", 1.0)
    rng = random.Random(seed)
    for _ in range(ticks):
        step(c, rng, g, k)
    return c


def step(c: CField, rng: random.Random, g: int = 0, k: int = 1):
    for _ in range(rng.randrange(6)):
        c.deposit_cell(g, rng.randrange(16 * 12), rng.uniform(0, 4), rng.randrange(1, 9))
    if rng.random() < 0.7:
        c.deposit_key(k, b"task%d" % rng.randrange(6), rng.uniform(0, 2), 100 + rng.randrange(3))
    c.tick()


def test_export_reads_back_record_for_record():
    c = busy_field(1, 40)
    data = export(c, 5)
    j = fieldjournal.parse(data)
    nxt = c.f.journal_next
    assert (j.first_seq, j.next_seq, j.lost) == (5, nxt, 0)
    assert j.end_tick == c.f.tick == 40 and j.digest == c.digest()
    kinds = {r.kind for r in j.records}
    assert {"deposit", "tick", "watch"} <= kinds
    for r in j.records:
        want = c.journal(r.seq)
        assert fieldjournal.KINDS[want["kind"]] == r.kind
        assert (want["tick"], want["flavour"], want["depositor"]) == (r.tick, r.flavour,
                                                                     r.depositor)
        assert struct.pack("<f", want["amount"]) == struct.pack("<f", r.amount)
        if r.kind == "deposit":
            assert want["key"] == r.key and (r.key or want["where"] == r.where)
    assert c_verdict(data) == "ok"


def test_export_after_the_ring_wrapped_says_how_many_were_lost():
    c = busy_field(2, 60, journal=64)
    j = fieldjournal.parse(export(c, 0))
    assert len(j.records) == 64 and j.first_seq == c.f.journal_next - 64
    assert j.lost == j.first_seq > 0


def test_export_of_nothing_new_and_a_seq_beyond_the_end():
    c = busy_field(3, 5)
    j = fieldjournal.parse(export(c, c.f.journal_next))
    assert j.records == [] and j.end_tick == 5
    buf = c.ffi.new("uint8_t[]", 4096)
    n = c.ffi.new("size_t *")
    assert c.lib.field_journal_export(c.f, c.f.journal_next + 1, c.ffi.NULL, buf, 4096, n) \
        == c.lib.FIELD_ERR_RANGE


def test_replay_on_the_host_arrives_at_the_live_digest():
    c = busy_field(4, 30)
    snap = c.snapshot()
    rng = random.Random(44)
    for _ in range(50):
        step(c, rng)
    jrn = export(c, fieldsnap.parse(snap).journal_seq)
    assert fieldjournal.replay(snap, jrn) == c.digest()
    # A journal that starts earlier replays from the snapshot's position just the same.
    assert fieldjournal.replay(snap, export(c, 0)) == c.digest()


def _refix_crc(data: bytearray) -> bytes:
    data[-4:] = struct.pack("<I", zlib.crc32(bytes(data[:-4])))
    return bytes(data)


def test_replay_refuses_what_does_not_add_up():
    c = busy_field(5, 10)
    early = c.snapshot()
    rng = random.Random(55)
    for _ in range(10):
        step(c, rng)
    mid = c.snapshot()
    for _ in range(10):
        step(c, rng)
    later = export(c, fieldsnap.parse(mid).journal_seq)
    with pytest.raises(fieldjournal.ReplayError, match="records are missing"):
        fieldjournal.replay(early, later)
    # An amount changed and the CRC made right again: the parser accepts it, the replay
    # does not arrive at the digest the guest recorded.
    j = fieldjournal.parse(later)
    i = next(i for i, r in enumerate(j.records) if r.kind == "deposit")
    bad = bytearray(later)
    off = fieldjournal.HEADER + i * fieldjournal.RECORD + 20
    bad[off:off + 4] = struct.pack("<f", j.records[i].amount + 1.0)
    bad = _refix_crc(bad)
    fieldjournal.parse(bad)
    with pytest.raises(fieldjournal.ReplayError, match="digest"):
        fieldjournal.replay(mid, bad)


def test_fieldsnap_replay_command(tmp_path, capsys):
    c = busy_field(6, 20)
    a = c.snapshot()
    rng = random.Random(66)
    for _ in range(25):
        step(c, rng)
    b = c.snapshot()
    (tmp_path / "a.snap").write_bytes(a)
    (tmp_path / "b.snap").write_bytes(b)
    (tmp_path / "b.journal").write_bytes(export(c, fieldsnap.parse(a).journal_seq))
    args = [str(tmp_path / n) for n in ("a.snap", "b.journal", "b.snap")]
    assert fieldsnap.main(["replay", *args]) == 0
    out = capsys.readouterr().out
    assert "(25 ticks) from tick 20 to tick 45" in out and "same digest" in out
    # The start snapshot given as the end: not the state the replay reached.
    assert fieldsnap.main(["replay", args[0], args[1], args[0]]) == 1


GOOD: tuple[bytes, bytes] | None = None


def _pair() -> tuple[bytes, bytes]:
    """A snapshot taken before any record, and the export of 12 busy ticks after it."""
    global GOOD
    if GOOD is None:
        c = busy_field(7, 0)
        snap = c.snapshot()
        rng = random.Random(7)
        for _ in range(12):
            step(c, rng)
        GOOD = (snap, export(c))
    return GOOD


def _good() -> bytes:
    return _pair()[1]


@st.composite
def damaged(draw):
    data = bytearray(_good())
    how = draw(st.sampled_from(["flip", "cut", "splice", "fixcrc"]))
    if how == "cut":
        return bytes(data[:draw(st.integers(0, len(data) - 1))])
    n = draw(st.integers(1, 8))
    for _ in range(n):
        i = draw(st.integers(0, len(data) - 1))
        data[i] = draw(st.integers(0, 255))
    if how == "splice":
        data += draw(st.binary(max_size=64))
    if how == "fixcrc" and len(data) >= 4:
        return _refix_crc(data)
    return bytes(data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_exports_raise_only_value_error_and_agree_with_the_c_reader(data):
    try:
        fieldjournal.parse(data)
        verdict = "ok"
    except ValueError as e:
        assert isinstance(e, fieldjournal.JournalError)
        verdict = e.code
    assert verdict == c_verdict(data)
    if verdict == "ok":
        # Bytes that pass every rule still go through the C replay without harm: it
        # arrives at the recorded digest or refuses with a ValueError.
        try:
            fieldjournal.replay(_pair()[0], data)
        except ValueError as e:
            assert isinstance(e, fieldjournal.ReplayError | fieldjournal.JournalError)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_value_error(data):
    for blob in (data, fieldjournal.MAGIC + data):
        try:
            fieldjournal.parse(blob)
        except ValueError:
            pass


# The journal reader and the replay under AddressSanitizer, in a native driver: each file
# is a u32 snapshot length, the snapshot, then the journal export to replay after it.
ASAN_JOURNAL = r"""
#include <stdio.h>
#include <string.h>
#include "field.h"
static void check_file(const unsigned char *buf, size_t n) {
    static unsigned char arena[1 << 20];
    if (n < 4) { printf("short\n"); return; }
    size_t s = (size_t)buf[0] | (size_t)buf[1] << 8 | (size_t)buf[2] << 16;
    if (s > n - 4) { printf("short\n"); return; }
    const unsigned char *jrn = buf + 4 + s;
    size_t jn = n - 4 - s;
    field_journal_info_t info;
    int rc = field_journal_check(jrn, jn, &info);
    field_t f;
    field_init(&f, arena, sizeof arena, 64, 8, 4);
    int rr = field_replay_journal(&f, buf + 4, s, jrn, jn);
    printf("%d %d\n", rc, rr);
}
"""


def test_journal_reader_and_replay_under_address_sanitizer(tmp_path):
    try:
        exe = cffihost.executable("field_jrn_asan", fieldcore.sources(),
                                  [fieldcore.FIELD, fieldcore.SHA.parent],
                                  check_file=ASAN_JOURNAL, flags=fieldcore.FLAGS,
                                  vendored=[fieldcore.SHA])
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail(f"cannot build with -fsanitize=address on this host: {e}")
    snap, good = _pair()
    rng = random.Random(18)
    corpus = [good, b""]
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        corpus.append(_refix_crc(data) if len(data) >= 4 and rng.random() < 0.7
                      else bytes(data))
    paths = []
    for i, data in enumerate(corpus):
        p = tmp_path / f"{i}.bin"
        p.write_bytes(struct.pack("<I", len(snap)) + snap + data)
        paths.append(str(p))
    p = subprocess.run([str(exe), *paths], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [line.split() for line in p.stdout.splitlines()]
    assert len(rows) == len(corpus)
    for data, (check, replayed) in zip(corpus, rows, strict=True):
        assert (c_verdict(data) == "ok") == (check == "0")
        assert check == "0" or replayed != "0"
    assert rows[0] == ["0", "0"]
