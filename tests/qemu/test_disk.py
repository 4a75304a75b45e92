# SPDX-License-Identifier: MIT
"""The virtio-blk driver and the `disk` module on one guest with three disks: the boot
image (virtio0, a snapshot), a 4 MiB scratch file the guest writes, and a 1 MiB
read-only file. Data is checked on the host side as well as in the guest."""

from __future__ import annotations

import os
import random
import re

import pytest
from diskcheck import err

from tools.guest.console import ConsoleError
from tools.guest.guestconsole import IMAGE, Guest

DATA_BYTES = 4 << 20
RO_BYTES = 1 << 20


@pytest.fixture(scope="module")
def disks(tmp_path_factory):
    d = tmp_path_factory.mktemp("disks")
    data, ro = d / "data.raw", d / "ro.raw"
    data.write_bytes(bytes(DATA_BYTES))
    ro.write_bytes(os.urandom(RO_BYTES))
    return data, ro


@pytest.fixture(scope="module")
def g(disks, tmp_path_factory):
    data, ro = disks
    extra = ["-drive", f"file={data},format=raw,if=virtio",
             "-drive", f"file={ro},format=raw,if=virtio,readonly=on"]
    log = tmp_path_factory.mktemp("serial") / "test_disk.log"
    guest = Guest(IMAGE, log=log, extra=extra)
    try:
        guest.banner = guest.boot()
        guest.raw_enter()
        # Find the two added disks by size: the boot image is virtio0 by slot order.
        guest.exec(
            "import disk\n"
            "by = {disk.Disk(n).ioctl(4, 0): n for n in disk.devices()}\n"
            f"D = disk.Disk(by[{DATA_BYTES // 512}])\n"
            f"R = disk.Disk(by[{RO_BYTES // 512}])\n"
            "B = disk.Disk('virtio0')\n")
        yield guest
    finally:
        guest.close()


def run(g, code: str) -> str:
    return g.exec(code).decode().strip()


def test_devices_and_info(g):
    assert re.search(r"virtio0: virtio-blk .* sectors", g.banner)
    names = eval(run(g, "print(disk.devices())"))
    assert len(names) == 3 and "virtio0" in names
    assert eval(run(g, "print(D.info())")) == ("virtio-blk", 512, DATA_BYTES // 512, False)
    assert eval(run(g, "print(R.info())")) == ("virtio-blk", 512, RO_BYTES // 512, True)
    assert run(g, "print(D.ioctl(5, 0), D.ioctl(6, 3), D.ioctl(3, 0))") == "512 0 0"


def test_boot_disk_matches_image(g):
    want = IMAGE.read_bytes()[:4096]
    got = run(g, "b = bytearray(4096); B.readblocks(0, b); print(bytes(b).hex())")
    assert bytes.fromhex(got) == want
    assert want[512:520] == b"EFI PART"


def test_round_trip_and_host_file(g, disks):
    data, _ = disks
    seed = os.urandom(1)[0]
    out = run(g, f"""
w = bytes((i * i + {seed}) >> 3 & 255 for i in range(8192))
D.writeblocks(100, w)
D.ioctl(3, 0)
r = bytearray(8192)
D.readblocks(100, r)
print(r == w, w.hex())
""")
    same, hexed = out.split()
    assert same == "True"
    with open(data, "rb") as f:
        f.seek(100 * 512)
        assert f.read(8192) == bytes.fromhex(hexed)


def test_large_request_spans_many_chunks(g):
    # 200 KiB: more than the driver's 64 KiB bounce buffer moves at once.
    assert run(g, """
w = bytes((i * 7 + 3) & 255 for i in range(200 * 1024))
D.writeblocks(1000, w)
r = bytearray(len(w))
D.readblocks(1000, r)
print(r == w)
""") == "True"


def test_last_block_and_across_the_end(g):
    last = DATA_BYTES // 512 - 1
    assert run(g, f"""
w = bytes(range(256)) * 2
D.writeblocks({last}, w)
r = bytearray(512)
D.readblocks({last}, r)
print(r == w)
""") == "True"
    e = err(g, f"D.readblocks({last}, bytearray(1024))")
    assert "OSError" in e and "22" in e and f"{last}" in e
    e = err(g, f"D.writeblocks({last + 1}, bytearray(512))")
    assert "OSError" in e and "22" in e
    e = err(g, "D.readblocks(-1, bytearray(512))")
    assert "OSError" in e and "22" in e


def test_zero_length_and_bad_length(g):
    assert run(g, f"D.readblocks({DATA_BYTES // 512}, bytearray(0)); print('ok')") == "ok"
    e = err(g, "D.readblocks(0, bytearray(100))")
    assert "OSError" in e and "22" in e and "multiple" in e


def test_offset_partial_blocks(g, disks):
    data, _ = disks
    out = run(g, """
D.writeblocks(3000, bytes(1024))
D.writeblocks(3000, b'hello world', 510)
r = bytearray(11)
D.readblocks(3000, r, 510)
D.ioctl(3, 0)
print(bytes(r))
""")
    assert out == "b'hello world'"
    with open(data, "rb") as f:
        f.seek(3000 * 512)
        blk = f.read(1024)
    assert blk[510:521] == b"hello world" and blk[:510] == bytes(510)


def test_read_only_disk_refuses_writes(g, disks):
    _, ro = disks
    head = bytes.fromhex(run(g, "b = bytearray(512); R.readblocks(0, b); print(bytes(b).hex())"))
    assert head == ro.read_bytes()[:512]
    e = err(g, "R.writeblocks(0, bytearray(512))")
    assert "OSError" in e and "30" in e and "read-only" in e


def test_littlefs_on_the_scratch_disk(g):
    assert run(g, """
import vfs
vfs.VfsLfs2.mkfs(D)
vfs.mount(vfs.VfsLfs2(D), '/d')
with open('/d/note.txt', 'w') as f:
    f.write('kept on disk ' * 100)
vfs.umount('/d')
vfs.mount(vfs.VfsLfs2(D), '/d')
print(open('/d/note.txt').read() == 'kept on disk ' * 100)
vfs.umount('/d')
""") == "True"


def test_unknown_disk(g):
    with pytest.raises(ConsoleError, match="no disk named"):
        g.exec("disk.Disk('nope0')")


def test_random_offset_writes_match_a_host_model(g, disks):
    """Writes at random byte offsets and lengths (partial first and last blocks) in a
    1 MiB window, mirrored on a host bytearray; the file must equal the model after."""
    data, _ = disks
    rng = random.Random(os.urandom(4))
    base = 4096  # block; the window holds no other test's data
    model = bytearray(1 << 20)
    run(g, f"D.writeblocks({base}, bytes({len(model)}))")
    ops = []
    for _ in range(40):
        off = rng.randrange(len(model) - 3000)
        n = rng.randrange(1, 3000)
        fill = rng.randrange(256)
        model[off:off + n] = bytes([fill]) * n
        ops.append((off // 512 + base, off % 512, n, fill))
    run(g, f"for b, o, n, f in {ops!r}:\n    D.writeblocks(b, bytes([f]) * n, o)\nD.ioctl(3, 0)\n")
    with open(data, "rb") as f:
        f.seek(base * 512)
        assert f.read(len(model)) == model
    # And reads at random offsets agree with the model too.
    reads = [(rng.randrange(len(model) - 3000), rng.randrange(1, 3000)) for _ in range(20)]
    got = run(g, "out = []\n"
                 f"for a, n in {reads!r}:\n"
                 "    r = bytearray(n)\n"
                 f"    D.readblocks({base} + a // 512, r, a % 512)\n"
                 "    out.append(bytes(r).hex())\n"
                 "print(' '.join(out))\n").split()
    assert [bytes.fromhex(h) for h in got] == [bytes(model[a:a + n]) for a, n in reads]
