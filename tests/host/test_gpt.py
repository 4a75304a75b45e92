# SPDX-License-Identifier: MIT
"""port/modules/gpt.py: reads the tables sgdisk writes, and any damage to a table ends
in ValueError (never another exception, never a read off the disk)."""

import shutil
import subprocess
import sys
import uuid
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "port" / "modules"))
import gpt  # noqa: E402

SECTOR = 512
DISK = 4 << 20

@pytest.fixture(scope="module")
def disk(tmp_path_factory):
    if shutil.which("sgdisk") is None:
        pytest.skip("needs sgdisk")
    img = tmp_path_factory.mktemp("gpt") / "d.img"
    with open(img, "wb") as f:
        f.truncate(DISK)
    subprocess.run(["sgdisk", "--clear", "--new=1:2048:4095", "--typecode=1:EF00",
                    "--change-name=1:EFI system partition", "--new=2:4096:6143",
                    "--typecode=2:8300", "--change-name=2:LOCIDATA", str(img)],
                   check=True, capture_output=True)
    return img.read_bytes()

def reader(buf):
    def read(off, n):
        assert 0 <= off and off + n <= len(buf), "read off the disk"
        return bytes(buf[off:off + n])
    return read

def test_crc32_matches_zlib():
    for data in (b"", b"a", b"EFI PART" * 100, bytes(range(256))):
        # the table-driven fallback (a guest without binascii) and the one in use
        assert gpt.crc32_py(data) == gpt.crc32(data) == zlib.crc32(data)

def test_guid_text_round_trip():
    u = uuid.uuid4()
    assert gpt.guid_str(u.bytes_le) == str(u)
    assert gpt.guid_bytes(str(u)) == u.bytes_le

def test_reads_sgdisk_table(disk):
    parts = gpt.read_table(reader(disk), len(disk))
    assert [(p.index, p.name, p.first_lba, p.last_lba) for p in parts] == [
        (1, "EFI system partition", 2048, 4095), (2, "LOCIDATA", 4096, 6143)]
    assert gpt.guid_str(parts[0].type_guid) == "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
    assert gpt.guid_str(parts[1].type_guid) == "0fc63daf-8483-4772-8e79-3d69d8477de4"
    data = gpt.find(parts, "LOCIDATA")
    assert (data.offset, data.size) == (4096 * SECTOR, 2048 * SECTOR)
    with pytest.raises(ValueError, match="no partition named"):
        gpt.find(parts, "NOPE")

def _refresh_crcs(buf):
    """Recompute both CRCs so a test can reach the checks behind them."""
    hsize = int.from_bytes(buf[SECTOR + 12:SECTOR + 16], "little")
    ent_lba = int.from_bytes(buf[SECTOR + 72:SECTOR + 80], "little")
    count = int.from_bytes(buf[SECTOR + 80:SECTOR + 84], "little")
    esize = int.from_bytes(buf[SECTOR + 84:SECTOR + 88], "little")
    n = count * esize
    if 92 <= hsize <= SECTOR and n <= gpt.MAX_TABLE_BYTES and \
            ent_lba * SECTOR + n <= len(buf):
        table = buf[ent_lba * SECTOR:ent_lba * SECTOR + n]
        buf[SECTOR + 88:SECTOR + 92] = zlib.crc32(table).to_bytes(4, "little")
    if 92 <= hsize <= SECTOR:
        h = bytearray(buf[SECTOR:SECTOR + hsize])
        h[16:20] = b"\0\0\0\0"
        buf[SECTOR + 16:SECTOR + 20] = zlib.crc32(h).to_bytes(4, "little")

# Corrupt bytes of the header and entry table (LBA 1..33), where the parser looks.
edits = st.lists(st.tuples(st.integers(SECTOR, 34 * SECTOR - 1), st.integers(0, 255)),
                 min_size=1, max_size=8)

@settings(max_examples=300, deadline=None)
@given(edits=edits, fix_crcs=st.booleans(),
       cut=st.one_of(st.none(), st.integers(0, 40 * SECTOR)))
def test_corruption_only_raises_value_error(disk, edits, fix_crcs, cut):
    buf = bytearray(disk)
    for off, val in edits:
        buf[off] = val
    if fix_crcs:
        _refresh_crcs(buf)
    if cut is not None:  # a short disk or image
        buf = buf[:cut]
    try:
        parts = gpt.read_table(reader(buf), len(buf))
    except ValueError:
        return
    for p in parts:  # whatever it accepts lies on the disk
        assert 0 < p.offset and p.offset + p.size <= len(buf)

@settings(max_examples=100, deadline=None)
@given(field=st.sampled_from([(12, 4), (24, 8), (40, 8), (48, 8), (72, 8), (80, 4),
                              (84, 4)]), value=st.integers(0, 2**32 - 1))
def test_header_fields_checked_behind_crc(disk, field, value):
    off, size = field
    buf = bytearray(disk)
    buf[SECTOR + off:SECTOR + off + size] = value.to_bytes(size, "little")
    _refresh_crcs(buf)
    try:
        parts = gpt.read_table(reader(buf), len(buf))
    except ValueError:
        return
    for p in parts:
        assert p.offset + p.size <= len(buf)

def test_damage_is_named(disk):
    buf = bytearray(disk)
    buf[SECTOR + 100] ^= 1  # in the header's reserved tail: outside the CRC, harmless
    gpt.read_table(reader(buf), len(buf))
    buf = bytearray(disk)
    buf[SECTOR + 30] ^= 1
    with pytest.raises(ValueError, match="header CRC32"):
        gpt.read_table(reader(buf), len(buf))
    buf = bytearray(disk)
    buf[2 * SECTOR + 60] ^= 1
    with pytest.raises(ValueError, match="table CRC32"):
        gpt.read_table(reader(buf), len(buf))
    with pytest.raises(ValueError, match="no GPT"):
        gpt.read_table(reader(bytes(DISK)), DISK)

@settings(max_examples=50, deadline=None)
@given(names=st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=0xFFFF,
                                            blacklist_categories=("Cs",)),
                              min_size=1, max_size=36), min_size=1, max_size=4),
       data=st.data())
def test_valid_tables_round_trip(disk, names, data):
    """Entries written into a valid table (CRCs recomputed) come back as written."""
    buf = bytearray(disk)
    table = 2 * SECTOR
    buf[table:table + 128 * 128] = bytes(128 * 128)
    want = []
    lba = 34
    for name in names:
        n = data.draw(st.integers(1, 100))
        t, u = (data.draw(st.uuids()).bytes_le for _ in range(2))
        e = t + u + lba.to_bytes(8, "little") + (lba + n - 1).to_bytes(8, "little")
        e += bytes(8) + name.encode("utf-16-le").ljust(72, b"\0")
        slot = data.draw(st.integers(0, 127).filter(lambda s: s not in
                                                    [w[0] - 1 for w in want]))
        buf[table + slot * 128:table + slot * 128 + 128] = e
        want.append((slot + 1, name, t, u, lba, lba + n - 1))
        lba += n
    _refresh_crcs(buf)
    got = gpt.read_table(reader(buf), len(buf))
    assert [(p.index, p.name, p.type_guid, p.part_guid, p.first_lba, p.last_lba)
            for p in got] == sorted(want)

