# SPDX-License-Identifier: MIT
"""The USB mass-storage driver on the spare-PC set-up: a copy of the image booted as a
USB stick on an xHCI controller (`--usb-stick`, written through as `make run` writes),
so the stick is the only disk. The banner names it `usb0`, /data is mounted from its
LOCIDATA partition, `disk.Disk('usb0')` reads what the host file holds and writes what
the host file then holds (in the gap the GPT leaves after LOCIDATA, and the last block,
put back after), a file written to /data is there at the next boot of the same file,
and a stick pulled out fails requests with EIO instead of hanging them. Two more boots
give a stick whose reads of one sector fail (the sense path) and one behind a hub at
full speed."""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
from functools import partial
from pathlib import Path

import pytest
from diskcheck import err, read_blocks

from tools.guest.guestconsole import IMAGE, Guest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "port" / "modules"))
import gpt  # noqa: E402

BS = 512
host_read = partial(read_blocks, BS)


def _layout(image: Path):
    with open(image, "rb") as f:
        def read(off, n):
            f.seek(off)
            return f.read(n)
        parts = gpt.read_table(read, image.stat().st_size)
    data = gpt.find(parts, "LOCIDATA")
    return data


@pytest.fixture(scope="module")
def stick(tmp_path_factory):
    image = tmp_path_factory.mktemp("stick") / "lociOS.img"
    shutil.copyfile(IMAGE, image)
    return image


BLOCKS = IMAGE.stat().st_size // BS if IMAGE.is_file() else 0


def _boot(image: Path, log: Path) -> Guest:
    g = Guest(image, log=log, qmp=True, launch=["--usb-stick", "--writable"])
    try:
        g.banner = g.boot()
        g.raw_enter()
        g.exec("import disk, storage\nU = disk.Disk('usb0')\n")
    except BaseException:
        g.close()
        raise
    return g


@pytest.fixture(scope="module")
def g(stick, tmp_path_factory):
    guest = _boot(stick, tmp_path_factory.mktemp("serial") / "test_usb_msc.log")
    try:
        yield guest
    finally:
        guest.close()


@pytest.fixture(scope="module")
def scratch(stick):
    """Blocks no partition uses: after LOCIDATA, before the backup GPT's entries."""
    data = _layout(stick)
    first, end = data.last_lba + 1, BLOCKS - 33
    assert end - first >= 600, (first, end)
    return first, end


def run(g, code: str, timeout: float = 60.0) -> str:
    return g.exec(code, timeout=timeout).decode().strip()


def test_banner_names_the_stick_and_data_is_mounted_from_it(g):
    mib = BLOCKS * BS >> 20
    assert re.search(rf"usb: port \d+: disk usb0, {mib} MiB \({BLOCKS} blocks of {BS} bytes\), "
                     r"'QEMU QEMU HARDDISK'", g.banner), g.banner
    assert re.search(r"usb: port \d+: mass storage \(46f4:0001, \w+ speed\)", g.banner)
    assert "no driver" not in g.banner
    assert "data: usb0 partition 2 (LOCIDATA) mounted at /data, 32768 KiB" in g.banner
    assert "read-only" not in g.banner.split("data: usb0")[1].splitlines()[0]
    assert eval(run(g, "print(disk.devices())")) == ["usb0"]
    assert eval(run(g, "print(U.info())")) == ("usb", BS, BLOCKS, False)
    assert run(g, "print(U.writable(), storage.mounted)") == \
        "True usb0 partition 2 (LOCIDATA)"


def test_reads_match_the_host_file(g, stick):
    data = _layout(stick)
    rng = random.Random(os.urandom(4))
    esp = rng.randrange(2048, data.first_lba - 300)
    for block, n in [(0, 1), (1, 33), (BLOCKS - 1, 1), (esp, 257)]:
        got = run(g, f"b = bytearray({n * BS}); U.readblocks({block}, b); print(bytes(b).hex())")
        assert bytes.fromhex(got) == host_read(stick, block, n * BS), (block, n)


def test_round_trip_flush_and_the_host_file(g, stick, scratch):
    first, _ = scratch
    seed = os.urandom(1)[0]
    out = run(g, f"""
w = bytes((i * i + {seed}) >> 3 & 255 for i in range(3 * {BS}))
U.writeblocks({first}, w)
U.ioctl(3, 0)
r = bytearray(len(w))
U.readblocks({first}, r)
print(r == w, w.hex())
""")
    same, hexed = out.split()
    assert same == "True"
    assert host_read(stick, first, 3 * BS) == bytes.fromhex(hexed)


def test_request_larger_than_the_bounce_buffer(g, stick, scratch):
    # 200 KiB: more than the driver's 64 KiB bounce buffer moves in one command.
    first = scratch[0] + 10
    n = 200 * 1024
    assert run(g, f"""
w = bytes((i * 7 + 3) & 255 for i in range({n}))
U.writeblocks({first}, w)
U.ioctl(3, 0)
r = bytearray(len(w))
U.readblocks({first}, r)
print(r == w)
""") == "True"
    assert host_read(stick, first, n) == bytes((i * 7 + 3) & 255 for i in range(n))


def test_last_block_across_the_end_and_zero_blocks(g, stick):
    last = BLOCKS - 1
    before = host_read(stick, last, BS)  # the backup GPT header: put back below
    pattern = os.urandom(BS)
    assert run(g, f"""
w = {pattern!r}
U.writeblocks({last}, w)
U.ioctl(3, 0)
r = bytearray({BS})
U.readblocks({last}, r)
print(r == w)
""") == "True"
    assert host_read(stick, last, BS) == pattern
    assert run(g, f"U.writeblocks({last}, {before!r}); U.ioctl(3, 0); print('ok')") == "ok"
    assert host_read(stick, last, BS) == before
    e = err(g, f"U.readblocks({last}, bytearray({2 * BS}))")
    assert "OSError" in e and "22" in e and f"{last}" in e
    e = err(g, f"U.writeblocks({BLOCKS}, bytearray({BS}))")
    assert "OSError" in e and "22" in e
    assert run(g, f"U.readblocks({BLOCKS}, bytearray(0)); U.writeblocks(0, b''); print('ok')") \
        == "ok"
    # The driver still answers after the refusals (they never reached the device).
    assert run(g, "b = bytearray(512); U.readblocks(1, b); print(bytes(b[:8]))") == \
        "b'EFI PART'"


def test_random_offset_writes_match_a_host_model(g, stick, scratch):
    rng = random.Random(os.urandom(4))
    base = scratch[0] + 500  # 48 KiB no other test uses
    model = bytearray(48 * 1024)
    run(g, f"U.writeblocks({base}, bytes({len(model)}))")
    ops = []
    for _ in range(25):
        off = rng.randrange(len(model) - 3000)
        n = rng.randrange(1, 3000)
        fill = rng.randrange(256)
        model[off:off + n] = bytes([fill]) * n
        ops.append((off // BS + base, off % BS, n, fill))
    run(g, f"for b, o, n, f in {ops!r}:\n    U.writeblocks(b, bytes([f]) * n, o)\nU.ioctl(3, 0)\n")
    assert host_read(stick, base, len(model)) == model


def test_a_file_on_data_is_there_at_the_next_boot(g, stick, tmp_path):
    note = os.urandom(12).hex()
    assert run(g, f"""
with open('/data/usb-note.txt', 'w') as f:
    f.write({note!r} * 100)
storage.sync()
print(open('/data/usb-note.txt').read() == {note!r} * 100)
""") == "True"
    g.close()  # QEMU exits; the second boot reads the same file as its stick
    g2 = _boot(stick, tmp_path / "boot2.log")
    try:
        assert "data: usb0 partition 2 (LOCIDATA) mounted at /data" in g2.banner, g2.banner
        assert run(g2, "print(open('/data/usb-note.txt').read())") == note * 100
        # A stick pulled out: requests fail at once with EIO, nothing waits for it.
        g2.qmp.command("device_del", id="stickdev")
        g2.expect(r"usb: port \d+: mass storage removed\r?\n", timeout=30)
        g2.drain()
        e = err(g2, "b = bytearray(512); U.readblocks(0, b)")
        assert "OSError" in e and "5" in e and "usb0" in e, e
        e = err(g2, "U.writeblocks(0, bytes(512))")
        assert "OSError" in e and "5" in e, e
        assert run(g2, "print(6 * 7)") == "42"
    finally:
        g2.close()


def test_a_read_error_on_the_stick_is_a_sense_error_and_the_disk_goes_on(tmp_path):
    """A second stick whose backing file fails reads of one sector (QEMU's blkdebug):
    the device answers that READ with CHECK CONDITION, the driver fetches the sense
    data, reports it and raises EIO; the next reads work."""
    raw = tmp_path / "bad.raw"
    raw.write_bytes(bytes(range(256)) * (8 << 20 >> 8))
    cfg = tmp_path / "blkdebug.cfg"
    cfg.write_text('[inject-error]\nevent = "read_aio"\niotype = "read"\nerrno = "5"\n'
                   'sector = "1000"\n')
    extra = ["-device", "qemu-xhci,id=xhci",
             "-drive", f"if=none,id=bad,format=raw,file=blkdebug:{cfg}:{raw}",
             "-device", "usb-storage,bus=xhci.0,drive=bad"]
    g = Guest(IMAGE, log=tmp_path / "bad.log", extra=extra)
    try:
        g.banner = g.boot()
        assert re.search(r"usb: port \d+: disk usb0, 8 MiB \(16384 blocks of 512 bytes\)",
                         g.banner), g.banner
        assert "data: virtio0 partition 2 (LOCIDATA)" in g.banner  # the boot disk's
        g.raw_enter()
        g.exec("import disk\nU = disk.Disk('usb0')\n")
        g.raw_send("b = bytearray(512); U.readblocks(1000, b)")
        out, e = g.raw_finish(60)
        assert b"OSError" in e and b"EIO" in e and b"usb0" in e, (out, e)
        assert re.search(rb"usb0: read of 1 blocks at 1000 failed: [a-z ]+ \(asc 0x", out), out
        assert run(g, "b = bytearray(1024); U.readblocks(998, b); print(bytes(b[:4]).hex())") \
            == "00010203"
        assert run(g, "U.writeblocks(1000, bytes(512)); U.ioctl(3, 0); print('ok')") == "ok"
    finally:
        g.close()


def test_a_stick_behind_a_hub_at_full_speed(tmp_path):
    """The other path a stick takes: a USB 2 port, behind a hub, at full speed (64-byte
    bulk packets, no SuperSpeed companion): found, read and written like the first."""
    raw = tmp_path / "hub.raw"
    raw.write_bytes(os.urandom(4 << 20))
    extra = ["-device", "qemu-xhci,id=xhci", "-device", "usb-hub,bus=xhci.0,port=1",
             "-drive", f"if=none,id=hs,format=raw,file={raw}",
             "-device", "usb-storage,bus=xhci.0,port=1.1,drive=hs"]
    g = Guest(IMAGE, log=tmp_path / "hub.log", extra=extra)
    try:
        g.banner = g.boot()
        assert re.search(r"usb: port 5\.1: disk usb0, 4 MiB \(8192 blocks of 512 bytes\)",
                         g.banner), g.banner
        assert re.search(r"usb: port 5\.1: mass storage \(46f4:0001, (full|high) speed\)",
                         g.banner), g.banner
        g.raw_enter()
        g.exec("import disk\nU = disk.Disk('usb0')\n")
        got = run(g, "b = bytearray(8 * 512); U.readblocks(8184, b); print(bytes(b).hex())")
        assert bytes.fromhex(got) == host_read(raw, 8184, 8 * BS)
        w = os.urandom(70 * 1024)  # more than one 64 KiB command
        assert run(g, f"w = {w!r}\nU.writeblocks(100, w)\nU.ioctl(3, 0)\n"
                      "r = bytearray(len(w)); U.readblocks(100, r); print(r == w)") == "True"
    finally:
        g.close()
    assert host_read(raw, 100, len(w)) == w
