# SPDX-License-Identifier: MIT
"""Read a GUID partition table. Frozen into the guest and imported by the host tools
(tools/datafs.py, tools/build/mkimage.py), so it uses nothing beyond struct.

A disk is untrusted input (a stick from anywhere): every field that steers a read is
checked, and anything wrong raises ValueError saying what.

    parts = gpt.read_table(read, disk_bytes)   # read(offset, n) -> bytes
    data = gpt.find(parts, "LOCIDATA")
"""

import struct

SIGNATURE = b"EFI PART"
HEADER_FMT = "<8sIIIIQQQQ16sQIII"
HEADER_MIN = 92  # bytes of the header the UEFI spec defines (revision 1.0)
ENTRY_MIN = 128
# The spec asks for at least 16 KiB of entries; real tables hold 128. Cap what we read
# so a hostile header cannot make us read (or allocate) much.
MAX_TABLE_BYTES = 1 << 20

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0xEDB88320 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32_py(data, crc=0):
    """The IEEE CRC32 (zlib's), which GPT uses for its header and entries."""
    crc ^= 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# The C one where there is one (CPython, and the guest's binascii): the boot-time scan
# of a 16 KiB entry table takes about 17 ms in the Python loop under TCG.
try:
    from binascii import crc32
except ImportError:
    crc32 = crc32_py


def guid_str(raw):
    """GUID bytes as on disk (first three fields little-endian) to the usual text."""
    a, b, c = struct.unpack("<IHH", raw[:8])
    tail = "".join("%02x" % x for x in raw[8:16])
    return "%08x-%04x-%04x-%s-%s" % (a, b, c, tail[:4], tail[4:])


def guid_bytes(text):
    """The inverse of guid_str."""
    h = text.replace("-", "")
    if len(h) != 32:
        raise ValueError("GUID %r is not 32 hex digits" % text)
    raw = bytes(int(h[i:i + 2], 16) for i in range(0, 32, 2))
    a, b, c = struct.unpack(">IHH", raw[:8])
    return struct.pack("<IHH", a, b, c) + raw[8:]


class Partition:
    def __init__(self, index, type_guid, part_guid, first_lba, last_lba, attrs, name,
                 sector):
        self.index = index  # 1-based, as gdisk and Linux number them
        self.type_guid = type_guid
        self.part_guid = part_guid
        self.first_lba = first_lba
        self.last_lba = last_lba
        self.attrs = attrs
        self.name = name
        self.sector = sector

    @property
    def offset(self):
        return self.first_lba * self.sector

    @property
    def size(self):
        return (self.last_lba - self.first_lba + 1) * self.sector

    def __repr__(self):
        return "Partition(%d, %r, lba %d..%d)" % (self.index, self.name, self.first_lba,
                                                   self.last_lba)


def _name(raw):
    # UTF-16LE, NUL-padded; decoded by hand (MicroPython has no utf-16 codec). Names
    # outside the BMP come out as their surrogate halves replaced by '?'.
    out = []
    for i in range(0, len(raw) - 1, 2):
        u = raw[i] | raw[i + 1] << 8
        if u == 0:
            break
        out.append("?" if 0xD800 <= u <= 0xDFFF else chr(u))
    return "".join(out)


def read_table(read, disk_bytes, sector=512):
    """The used entries of the primary GPT of a disk of disk_bytes bytes, read through
    read(offset, n). Raises ValueError if the header or table is not valid."""
    if sector < 512 or sector & (sector - 1):
        raise ValueError("sector size %d is not a power of two >= 512" % sector)
    last = disk_bytes // sector - 1
    if last < 3:
        raise ValueError("disk of %d bytes is too small for a GPT" % disk_bytes)
    hdr = read(sector, sector)
    if len(hdr) != sector:
        raise ValueError("short read of the GPT header at byte %d" % sector)
    (sig, _rev, hsize, hcrc, _res, my_lba, _alt_lba, first_use, last_use, _disk_guid,
     ent_lba, count, esize, ecrc) = struct.unpack(HEADER_FMT, hdr[:HEADER_MIN])
    if sig != SIGNATURE:
        raise ValueError("no GPT: LBA 1 does not start with 'EFI PART'")
    if not HEADER_MIN <= hsize <= sector:
        raise ValueError("GPT header size %d is outside %d..%d" % (hsize, HEADER_MIN,
                                                                     sector))
    check = bytearray(hdr[:hsize])
    check[16:20] = b"\0\0\0\0"
    if crc32(check) != hcrc:
        raise ValueError("GPT header CRC32 does not match (damaged header)")
    if my_lba != 1:
        raise ValueError("GPT header says it is at LBA %d, not 1" % my_lba)
    if esize < ENTRY_MIN or esize % 8:
        raise ValueError("GPT entry size %d is not a multiple of 8 >= %d" % (esize,
                                                                              ENTRY_MIN))
    if count == 0 or count * esize > MAX_TABLE_BYTES:
        raise ValueError("GPT entry count %d (of %d bytes) is out of range" % (count,
                                                                                esize))
    if not 2 <= first_use <= last_use <= last:
        raise ValueError("GPT usable LBAs %d..%d do not fit a disk of %d sectors"
                         % (first_use, last_use, last + 1))
    table_bytes = count * esize
    table_sectors = (table_bytes + sector - 1) // sector
    if ent_lba < 2 or ent_lba + table_sectors - 1 > last:
        raise ValueError("GPT entry table at LBA %d (%d sectors) is off the disk"
                         % (ent_lba, table_sectors))
    if ent_lba <= first_use and ent_lba + table_sectors > first_use:
        raise ValueError("GPT entry table overlaps the usable LBAs")
    table = read(ent_lba * sector, table_bytes)
    if len(table) != table_bytes:
        raise ValueError("short read of the GPT entry table at LBA %d" % ent_lba)
    if crc32(table) != ecrc:
        raise ValueError("GPT entry table CRC32 does not match (damaged table)")
    parts = []
    for i in range(count):
        e = table[i * esize:(i + 1) * esize]
        type_guid = bytes(e[0:16])
        if type_guid == b"\0" * 16:
            continue
        first, end, attrs = struct.unpack("<QQQ", e[32:56])
        if not first_use <= first <= end <= last_use:
            raise ValueError("GPT entry %d: LBAs %d..%d are outside the usable %d..%d"
                             % (i + 1, first, end, first_use, last_use))
        parts.append(Partition(i + 1, type_guid, bytes(e[16:32]), first, end, attrs,
                               _name(e[56:128]), sector))
    return parts


def find(parts, name):
    """The one partition called name; ValueError if there is none or several."""
    hits = [p for p in parts if p.name == name]
    if not hits:
        raise ValueError("no partition named %s" % name)
    if len(hits) > 1:
        raise ValueError("%d partitions are named %s" % (len(hits), name))
    return hits[0]
