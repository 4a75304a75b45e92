# SPDX-License-Identifier: MIT
"""kernel/dev/usb_msc_bot.c on the host (cffi): the Bulk-Only Transport's wrappers and
the SCSI command blocks and replies of the USB disk driver. A CBW has the fields BOT 1.0
§5.1 puts where it puts them; a CSW is accepted only when it is exactly 13 bytes with the
signature and the tag sent, and its residue is believed only when it is no more than the
data asked for (§6.3), whatever bytes a device sends. Command blocks are checked against
an independent encoding written here with struct."""
import pathlib
import struct

from hypothesis import given
from hypothesis import strategies as st

from tools.build import cffihost

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "kernel"
M = cffihost.build("usb_msc_bot", [KERNEL / "dev" / "usb_msc_bot.c"],
                   [KERNEL / "dev" / "usb_msc_bot.h"], [KERNEL / "dev"])
ffi, lib = M.ffi, M.lib

u32 = st.integers(0, 2**32 - 1)


def cbw(tag, data_len, data_in, lun, cdb: bytes):
    out = ffi.new("uint8_t[]", lib.BOT_CBW_LEN)
    ok = lib.bot_cbw(out, tag, data_len, data_in, lun, cdb, len(cdb))
    return ok, bytes(out)


def csw(data: bytes, tag, data_len):
    res = ffi.new("uint32_t *", 0xdeadbeef)
    r = lib.bot_csw_check(data, len(data), tag, data_len, res)
    return r, res[0]


def csw_bytes(tag, residue, status, sig=0x53425355):
    return struct.pack("<IIIB", sig, tag, residue, status)


@given(u32, u32, st.booleans(), st.integers(0, 15), st.binary(min_size=1, max_size=16))
def test_cbw_layout(tag, data_len, data_in, lun, cdb):
    ok, b = cbw(tag, data_len, data_in, lun, cdb)
    assert ok
    assert b == struct.pack("<IIIBBB", 0x43425355, tag, data_len, 0x80 if data_in else 0,
                            lun, len(cdb)) + cdb + bytes(16 - len(cdb))
    assert b[:4] == b"USBC"


@given(st.binary(min_size=0, max_size=40), st.integers(16, 255))
def test_cbw_refuses_bad_lengths_and_luns(cdb, lun):
    if not 1 <= len(cdb) <= 16:
        assert not cbw(1, 0, False, 0, cdb)[0]
    assert not cbw(1, 0, False, lun, b"\0" * 6)[0]


@given(u32, u32, u32, st.integers(0, 255))
def test_csw_well_formed(tag, data_len, residue, status):
    r, res = csw(csw_bytes(tag, residue, status), tag, data_len)
    if status == 2:
        assert (r, res) == (lib.BOT_CSW_PHASE, 0)
    elif status > 2 or residue > data_len:
        assert (r, res) == (lib.BOT_CSW_MEANINGLESS, 0)
    else:
        assert (r, res) == (status, residue)  # PASSED 0, FAILED 1


@given(st.binary(max_size=64), u32, u32)
def test_csw_untrusted_bytes(data, tag, data_len):
    """Arbitrary bytes: a verdict is one of the five, and PASSED/FAILED only for a CSW
    that is exactly right; the residue is 0 unless it was believed."""
    r, res = csw(data, tag, data_len)
    assert r in (lib.BOT_CSW_PASSED, lib.BOT_CSW_FAILED, lib.BOT_CSW_PHASE,
                 lib.BOT_CSW_INVALID, lib.BOT_CSW_MEANINGLESS)
    good = len(data) == 13 and data[:4] == b"USBS" and \
        struct.unpack_from("<I", data, 4)[0] == tag
    if not good:
        assert (r, res) == (lib.BOT_CSW_INVALID, 0)
    elif r in (lib.BOT_CSW_PASSED, lib.BOT_CSW_FAILED):
        assert res == struct.unpack_from("<I", data, 8)[0] <= data_len
        assert data[12] == r
    else:
        assert res == 0


@given(u32, st.integers(1, 2**32 - 1), st.integers(0, 1))
def test_csw_wrong_tag_signature_or_length(tag, delta, status):
    good = csw_bytes(tag, 0, status)
    assert csw(good, tag, 512)[0] == status
    assert csw(good, (tag + delta) % 2**32, 512)[0] == lib.BOT_CSW_INVALID
    assert csw(csw_bytes(tag, 0, status, sig=0x43425355), tag, 512)[0] == lib.BOT_CSW_INVALID
    assert csw(good[:12], tag, 512)[0] == lib.BOT_CSW_INVALID
    assert csw(good + b"\0", tag, 512)[0] == lib.BOT_CSW_INVALID


def cdb_of(fn, *args) -> bytes:
    buf = ffi.new("uint8_t[]", 16)
    n = fn(buf, *args)
    return bytes(buf)[:n]


def test_fixed_command_blocks():
    assert cdb_of(lib.scsi_test_unit_ready) == bytes(6)
    assert cdb_of(lib.scsi_inquiry, 36) == bytes([0x12, 0, 0, 0, 36, 0])
    assert cdb_of(lib.scsi_request_sense, 18) == bytes([0x03, 0, 0, 0, 18, 0])
    assert cdb_of(lib.scsi_read_capacity10) == bytes([0x25]) + bytes(9)
    assert cdb_of(lib.scsi_read_capacity16, 32) == \
        bytes([0x9e, 0x10]) + bytes(8) + struct.pack(">I", 32) + bytes(2)
    assert cdb_of(lib.scsi_sync_cache) == bytes([0x35]) + bytes(9)


@given(st.booleans(), st.integers(0, 2**64 - 1), u32)
def test_read_write_blocks(write, lba, count):
    b = cdb_of(lib.scsi_rw, write, lba, count)
    if count == 0 or lba + count > 2**64:
        assert b == b""
    elif count <= 0xffff and lba + count <= 2**32:
        assert b == struct.pack(">BBIBHB", 0x2a if write else 0x28, 0, lba, 0, count, 0)
    else:
        assert b == struct.pack(">BBQIBB", 0x8a if write else 0x88, 0, lba, count, 0, 0)


def test_read_write_edges():
    assert cdb_of(lib.scsi_rw, False, 2**32 - 1, 1)[0] == 0x28   # the last 32-bit block
    assert cdb_of(lib.scsi_rw, False, 2**32 - 1, 2)[0] == 0x88   # passes it
    assert cdb_of(lib.scsi_rw, True, 0, 0x10000)[0] == 0x8a      # more than 16 bits
    assert cdb_of(lib.scsi_rw, True, 2**64 - 1, 1)[0] == 0x8a
    assert cdb_of(lib.scsi_rw, True, 2**64 - 1, 2) == b""


def capacity10(data: bytes):
    bs, need = ffi.new("uint32_t *"), ffi.new("bool *")
    n = lib.scsi_capacity10(data, len(data), bs, need)
    return n, bs[0], need[0]


def capacity16(data: bytes):
    bs = ffi.new("uint32_t *")
    n = lib.scsi_capacity16(data, len(data), bs)
    return n, bs[0]


@given(st.binary(max_size=40))
def test_capacity_replies(data):
    n, bs, need = capacity10(data)
    if len(data) < 8:
        assert (n, bs, need) == (0, 0, False)
    else:
        last, size = struct.unpack_from(">II", data)
        assert bs == size
        assert (n, need) == ((0, True) if last == 0xffffffff else (last + 1, False))
    n, bs = capacity16(data)
    if len(data) < 12:
        assert (n, bs) == (0, 0)
    else:
        last, size = struct.unpack_from(">QI", data)
        assert bs == size and n == (0 if last == 2**64 - 1 else last + 1)


def test_capacity_of_a_real_shape():
    assert capacity10(struct.pack(">II", 200703, 512)) == (200704, 512, False)
    assert capacity10(struct.pack(">II", 0xffffffff, 4096))[2]
    assert capacity16(struct.pack(">QI", 2**33 - 1, 4096) + bytes(20)) == (2**33, 4096)


def sense(data: bytes):
    s = ffi.new("struct scsi_sense *")
    ok = lib.scsi_sense_parse(data, len(data), s)
    return ok, (s.key, s.asc, s.ascq)


@given(st.binary(max_size=32))
def test_sense_untrusted(data):
    ok, (key, asc, ascq) = sense(data)
    code = data[0] & 0x7f if data else None
    if code in (0x70, 0x71) and len(data) >= 3:
        assert ok and key == data[2] & 0xf
        if len(data) >= 14 and data[7] >= 6:
            assert (asc, ascq) == (data[12], data[13])
        else:
            assert (asc, ascq) == (0, 0)
    elif code in (0x72, 0x73) and len(data) >= 4:
        assert ok and (key, asc, ascq) == (data[1] & 0xf, data[2], data[3])
    else:
        assert not ok and (key, asc, ascq) == (0, 0, 0)


def test_sense_meaning():
    fixed = bytes([0x70, 0, 0x02, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x04, 0x01, 0, 0, 0, 0])
    ok, key = sense(fixed)
    assert ok and key == (2, 4, 1)
    s = ffi.new("struct scsi_sense *", {"key": 2, "asc": 4, "ascq": 1})
    assert lib.scsi_sense_transient(s)                     # becoming ready
    s.ascq = 2
    assert not lib.scsi_sense_transient(s)                 # needs an initialising command
    s.key, s.asc, s.ascq = 2, 0x3a, 0
    assert not lib.scsi_sense_transient(s)                 # no medium
    s.key = 6
    assert lib.scsi_sense_transient(s)                     # unit attention
    s.key = 5
    assert not lib.scsi_sense_transient(s)
    assert ffi.string(lib.scsi_sense_name(5)) == b"illegal request"
    assert ffi.string(lib.scsi_sense_name(0xf7)) == b"data protect"   # key bits only


def inquiry(data: bytes, cap=48):
    info = ffi.new("struct scsi_inquiry_info *")
    text = ffi.new("char[]", cap) if cap else ffi.NULL
    ok = lib.scsi_inquiry_parse(data, len(data), info, text, cap)
    return ok, info, ffi.string(text).decode() if cap else None


def test_inquiry_of_qemu_and_of_junk():
    data = bytes([0x00, 0x80, 5, 2, 31, 0, 0, 0]) + b"QEMU    " + b"QEMU HARDDISK   " + b"2.5+"
    ok, info, text = inquiry(data)
    assert ok and info.type == 0 and info.qualifier_ok and info.removable
    assert text == "QEMU QEMU HARDDISK"
    ok, info, text = inquiry(bytes([0x7f, 0]) + bytes(6) + b"\x01\xff" + b"AB   " + bytes(21 + 5))
    assert ok and info.type == 0x1f and not info.qualifier_ok and not info.removable
    assert text == "??AB"
    assert not inquiry(data[:35])[0]


@given(st.binary(min_size=36, max_size=64), st.integers(0, 48))
def test_inquiry_text_is_bounded_and_printable(data, cap):
    ok, info, text = inquiry(data, cap)
    assert ok
    if cap:
        assert len(text) < cap and all(0x20 <= ord(c) < 0x7f for c in text)
