# SPDX-License-Identifier: MIT
"""The NVMe driver and the `disk` module on one guest: an 8 MiB host file of random
bytes as namespace 1 of a QEMU NVMe controller with 4 KiB logical blocks. The namespace
starts read-only; the tests lift the guard, write, and check the host file, both while
the guest runs (after a flush) and after QEMU has exited."""

from __future__ import annotations

import os
import random
import re
from functools import partial

import pytest
from diskcheck import err, read_blocks

from tools.guest.guestconsole import IMAGE, Guest

NS_BYTES = 8 << 20
BS = 4096
host_read = partial(read_blocks, BS)
BLOCKS = NS_BYTES // BS


@pytest.fixture(scope="module")
def nsfile(tmp_path_factory):
    f = tmp_path_factory.mktemp("nvme") / "ns.raw"
    f.write_bytes(os.urandom(NS_BYTES))
    return f


@pytest.fixture(scope="module")
def g(nsfile, tmp_path_factory):
    extra = ["-drive", f"file={nsfile},format=raw,if=none,id=nv0",
             "-device", f"nvme,serial=lociostest,drive=nv0,logical_block_size={BS},"
                        f"physical_block_size={BS}",
             # A controller with no namespace: skipped with a line, the boot goes on.
             "-device", "nvme,serial=lociosempty"]
    log = tmp_path_factory.mktemp("serial") / "test_nvme.log"
    guest = Guest(IMAGE, log=log, extra=extra)
    try:
        guest.banner = guest.boot()
        guest.raw_enter()
        guest.exec("import disk\nN = disk.Disk('nvme0')\n")
        yield guest
    finally:
        guest.close()


def run(g, code: str, timeout: float = 60.0) -> str:
    return g.exec(code, timeout=timeout).decode().strip()


def test_listed_with_size_and_block_size(g):
    assert re.search(rf"nvme0: nvme .*, {BLOCKS} blocks of {BS} bytes, read-only until made "
                     r"writable, flush", g.banner)
    assert re.search(r"kernel: nvme [0-9a-f:.]+: (namespace 1 is empty or inactive|"
                     r"identify failed); skipped", g.banner)
    names = eval(run(g, "print(disk.devices())"))
    assert "nvme0" in names and "nvme1" not in names
    assert eval(run(g, "print(N.info())")) == ("nvme", BS, BLOCKS, True)
    assert run(g, "print(N.ioctl(4, 0), N.ioctl(5, 0), N.writable(), N)") == \
        f"{BLOCKS} {BS} False <Disk nvme0 {BLOCKS} x {BS} ro>"


def test_reads_match_the_host_file(g, nsfile):
    rng = random.Random(os.urandom(4))
    for block, n in [(0, 1), (BLOCKS - 1, 1), (rng.randrange(BLOCKS - 40), 37)]:
        got = run(g, f"b = bytearray({n * BS}); N.readblocks({block}, b); print(bytes(b).hex())")
        assert bytes.fromhex(got) == host_read(nsfile, block, n * BS), (block, n)
    # A read at a byte offset inside a block, through the partial-block path.
    got = run(g, "b = bytearray(100); N.readblocks(5, b, 4000); print(bytes(b).hex())")
    assert bytes.fromhex(got) == host_read(nsfile, 5, 4100)[4000:]


def test_writes_refused_until_made_writable(g, nsfile):
    before = host_read(nsfile, 10, BS)
    e = err(g, f"N.writeblocks(10, bytes({BS}))")
    assert "OSError" in e and "30" in e and "nvme0" in e and "writable(True)" in e
    e = err(g, "N.writeblocks(10, b'x', 7)")  # a partial write is refused as well
    assert "OSError" in e and "30" in e
    assert run(g, "N.ioctl(3, 0); print('ok')") == "ok"  # flushing nothing is harmless
    assert host_read(nsfile, 10, BS) == before
    assert run(g, "print(N.writable(True), N.writable(), N.info()[3])") == "True True False"


def test_round_trip_and_flush(g, nsfile):
    seed = os.urandom(1)[0]
    out = run(g, f"""
w = bytes((i * i + {seed}) >> 3 & 255 for i in range(3 * {BS}))
N.writeblocks(100, w)
N.ioctl(3, 0)
r = bytearray(len(w))
N.readblocks(100, r)
print(r == w, w.hex())
""")
    same, hexed = out.split()
    assert same == "True"
    assert host_read(nsfile, 100, 3 * BS) == bytes.fromhex(hexed)


def test_last_block_across_the_end_and_zero_blocks(g, nsfile):
    last = BLOCKS - 1
    w = bytes(range(256)) * (BS // 256)
    assert run(g, f"""
w = bytes(range(256)) * {BS // 256}
N.writeblocks({last}, w)
r = bytearray({BS})
N.readblocks({last}, r)
N.ioctl(3, 0)
print(r == w)
""") == "True"
    assert host_read(nsfile, last, BS) == w
    e = err(g, f"N.readblocks({last}, bytearray({2 * BS}))")
    assert "OSError" in e and "22" in e and f"{last}" in e
    e = err(g, f"N.writeblocks({BLOCKS}, bytearray({BS}))")
    assert "OSError" in e and "22" in e
    assert run(g, f"N.readblocks({BLOCKS}, bytearray(0)); N.writeblocks(0, b''); print('ok')") \
        == "ok"
    e = err(g, "N.readblocks(0, bytearray(512))")
    assert "OSError" in e and "22" in e and "multiple" in e


def test_request_larger_than_the_bounce_buffer(g, nsfile):
    # 200 KiB: more than the driver's 64 KiB bounce buffer (and its PRP list) moves.
    n = 200 * 1024
    assert run(g, f"""
w = bytes((i * 7 + 3) & 255 for i in range({n}))
N.writeblocks(300, w)
N.ioctl(3, 0)
r = bytearray(len(w))
N.readblocks(300, r)
print(r == w)
""") == "True"
    assert host_read(nsfile, 300, n) == bytes((i * 7 + 3) & 255 for i in range(n))


def test_random_offset_writes_match_a_host_model(g, nsfile):
    rng = random.Random(os.urandom(4))
    base = 600  # block; 1 MiB window no other test uses
    model = bytearray(1 << 20)
    run(g, f"N.writeblocks({base}, bytes({len(model)}))")
    ops = []
    for _ in range(30):
        off = rng.randrange(len(model) - 9000)
        n = rng.randrange(1, 9000)
        fill = rng.randrange(256)
        model[off:off + n] = bytes([fill]) * n
        ops.append((off // BS + base, off % BS, n, fill))
    run(g, f"for b, o, n, f in {ops!r}:\n    N.writeblocks(b, bytes([f]) * n, o)\nN.ioctl(3, 0)\n")
    assert host_read(nsfile, base, len(model)) == model


def test_littlefs_on_the_namespace(g):
    assert run(g, """
import vfs
N.writable(True)
vfs.VfsLfs2.mkfs(N)
vfs.mount(vfs.VfsLfs2(N), '/nv')
for i in range(5):
    with open('/nv/f%d.txt' % i, 'w') as f:
        f.write(('file %d ' % i) * 2000)
vfs.umount('/nv')
vfs.mount(vfs.VfsLfs2(N), '/nv')
import os
ok = all(open('/nv/f%d.txt' % i).read() == ('file %d ' % i) * 2000 for i in range(5))
print(ok, sorted(os.listdir('/nv')))
vfs.umount('/nv')
""", timeout=120) == "True ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']"


def test_read_only_again_and_writes_kept_after_exit(g, nsfile):
    # Written here, after the littlefs test: its files may land on any block, 300's
    # earlier contents included.
    marker, other = os.urandom(16), os.urandom(16)
    assert run(g, f"""
N.writeblocks(1500, {marker!r} * {BS // 16})
N.writeblocks(300, {other!r} * {BS // 16})
N.ioctl(3, 0)
print(N.writable(False))
""") == "False"
    e = err(g, f"N.writeblocks(1500, bytes({BS}))")
    assert "OSError" in e and "30" in e
    g.close()  # QEMU exits: what the host file holds now is what the device kept
    assert host_read(nsfile, 1500, BS) == marker * (BS // 16)
    assert host_read(nsfile, 300, BS) == other * (BS // 16)
