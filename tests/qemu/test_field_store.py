# SPDX-License-Identifier: MIT
"""The field on /data (loci/python/lo_store.py) across two boots of a writable copy of the
image: lo.save / lo.load with the digest the same after the reboot, autosave keeping
exactly K, the guest's journal exports replayed on the host (fieldsnap.py replay) to the
guest's digests, a damaged newest autosave skipped at boot for the one before it, and
the error messages (no /data, a full disk, a missing name, a bad name)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.field import fieldsnap
from tools.guest.guestconsole import IMAGE, Guest

ROOT = Path(__file__).resolve().parents[2]
DATAFS = ROOT / "tools" / "datafs.py"

FIELD = """
from lo import *
import lo
f = use(Field([grid('food', 48, 32, E=0.05, G=0.3), grid('trail', 48, 32, E=0.1, G=0.5),
               keyed('work', 64, E=0.05, min=0.01)]))
s = 7
for t in range(12):
    for _ in range(5):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        f.deposit('trail', (s % 48, (s >> 8) % 32), 1.0 + (s >> 20) % 4, 100 + s % 3)
    f.deposit('food', (10, 10), 20.0, 7)
    f.deposit('work', 'task%d' % (t % 5), 1.0 + t % 3, 200)
    f.tick()
"""

# 23 more ticks with deposits between them: autosaves 1-5 at ticks 15, 20, 25, 30, 35
# (the field reached tick 12 before autosave started), of which the newest 3 stay.
TICKS = """
for t in range(23):
    lo.F.deposit('trail', (t % 48, t % 32), 2.0, 300 + t % 2)
    lo.F.deposit('work', 'job%d' % (t % 4), 0.5, 400)
    lo.F.tick()
"""


def _datafs(image, *args):
    p = subprocess.run([sys.executable, str(DATAFS), str(image), *args], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _hex(g, expr):
    return g.eval(f"''.join('%02x' % b for b in ({expr}))").strip("'")


def _boot(image, log):
    g = Guest(image, log=log, launch=["--writable"])
    g.banner = g.boot()
    return g


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both boots, once for the module: what each test checks is collected here."""
    d = tmp_path_factory.mktemp("store")
    image = d / "lociOS.img"
    shutil.copyfile(IMAGE, image)
    _datafs(image, "format", "--yes")
    r = {"dir": d}
    g = _boot(image, d / "boot1.log")
    try:
        out = g.paste(FIELD)
        assert "Traceback" not in out, out
        r["save"] = g.run("save('one')")
        r["one"] = _hex(g, "lo.F.digest()")
        r["missing"] = g.run("load('nope')")
        r["badname"] = g.run("save('../x')")
        r["autosave"] = g.run("autosave(ticks=5, keep=3)")
        out = g.paste(TICKS, timeout=120)
        assert "Traceback" not in out, out
        r["tick"] = g.ask("lo.F.tick_count()")
        r["auto35"] = _hex(g, "lo.F.digest()")
        r["saves"] = g.ask("[n for n, t, b, ok in saves()]")
        r["nodata"] = g.run("import storage; m = storage.mounted; storage.mounted = None; "
                            "save('x'); storage.mounted = m")
        g.run("storage.mounted = m")
        # Room for less than the snapshot of a 200x200x2 field (320 KB): refused, and
        # nothing of it is left behind.
        r["full"] = g.paste(
            "import os\n"
            "st = os.statvfs('/data')\n"
            "chunk = bytes(65536)\n"
            "with open('/data/filler', 'wb') as fh:\n"
            "    for _ in range((st[0] * st[3] - 256 * 1024) // 65536):\n"
            "        _ = fh.write(chunk)\n"
            "keep = lo.F\n"
            "use(Field([grid('a', 200, 200), grid('b', 200, 200)]))\n"
            "try:\n"
            "    save('big')\n"
            "except OSError as e:\n"
            "    print('refused:', e.errno, e.args[1])\n"
            "use(keep)\n"
            "os.remove('/data/filler')\n"
            "print(sorted(n for n in os.listdir('/data/field') if 'big' in n))\n",
            timeout=300)
    finally:
        g.close()
    # The guest's autosaves, checked on the host; then the newest damaged for boot 2.
    for n in ("auto-00000004.snap", "auto-00000005.snap", "auto-00000005.journal"):
        _datafs(image, "get", "/field/" + n, str(d))
    newest = d / "auto-00000005.snap"
    r["replay"] = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "field" / "fieldsnap.py"), "replay",
         str(d / "auto-00000004.snap"), str(d / "auto-00000005.journal"), str(newest)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    r["auto30"] = fieldsnap.parse((d / "auto-00000004.snap").read_bytes()).digest.hex()
    data = bytearray(newest.read_bytes())
    data[len(data) // 2] ^= 0x40
    damaged = d / "damaged" / "auto-00000005.snap"
    damaged.parent.mkdir()
    damaged.write_bytes(bytes(data))
    _datafs(image, "put", str(damaged), "/field/auto-00000005.snap")

    g = _boot(image, d / "boot2.log")
    try:
        r["banner"] = g.banner
        r["restored"] = _hex(g, "__import__('lo').F.digest()")
        r["armed"] = g.ask("__import__('lo_store')._AUTO['ticks']")
        g.run("from lo import *")
        r["load"] = g.run("load('one')")
        r["loaded"] = _hex(g, "__import__('lo').F.digest()")
        # A mesh's rounds tick its field: autosave follows them (numbered after boot 1's).
        out = g.paste("import mesh\n"
                      "m = mesh.Mesh([grid('g', 8, 8, E=0.1)])\n"
                      "use(m.field)\n"
                      "autosave(ticks=2, keep=1)\n"
                      "m.run(5)\n")
        assert "Traceback" not in out, out
        r["mesh"] = g.ask("[(n, t) for n, t, b, ok in saves() if n.startswith('auto-')]")
        # Its only autosave damaged: the restore at boot says so and restores nothing.
        r["none"] = g.paste("import lo_store\n"
                            "p = '/data/field/auto-00000007.snap'\n"
                            "b = bytearray(lo_store._read(p))\n"
                            "b[100] ^= 1\n"
                            "lo_store._write(p, b)\n"
                            "print(lo_store.boot())\n")
        r["off"] = g.run("autosave(0)")
        r["config"] = g.eval("__import__('lo_store').config() is None")
    finally:
        g.close()
    return r


def test_save_reboot_load_gives_the_same_digest(runs):
    assert re.search(r"saved one: tick 12, \d+ bytes, digest " + runs["one"][:16],
                     runs["save"]), runs["save"]
    assert runs["load"].strip().startswith("loaded one: tick 12"), runs["load"]
    assert runs["loaded"] == runs["one"]


def test_autosave_keeps_exactly_k(runs):
    assert "autosave every 5 ticks" in runs["autosave"], runs["autosave"]
    assert runs["tick"] == 35
    autos = [n for n in runs["saves"] if n.startswith("auto-")]
    assert autos == ["auto-00000003", "auto-00000004", "auto-00000005"], runs["saves"]
    # Rounds 2 and 4 of a mesh wrote autosaves 6 and 7; with keep=1 only 7 is left.
    assert runs["mesh"] == [("auto-00000007", 4)], runs["mesh"]


def test_guest_journal_replays_on_the_host_to_the_guest_digest(runs):
    p = runs["replay"]
    assert p.returncode == 0, p.stderr
    assert "(5 ticks) from tick 30 to tick 35" in p.stdout and "same digest" in p.stdout, \
        p.stdout


def test_damaged_newest_autosave_is_skipped_at_boot(runs):
    b = runs["banner"]
    assert re.search(r"field: /data/field/auto-00000005\.snap is damaged \(.*checksum.*\); "
                     r"skipped", b), b
    assert "field: restored /data/field/auto-00000004.snap (tick 30" in b, b
    assert runs["restored"] == runs["auto30"]
    assert runs["armed"] == 5
    assert "autosave off" in runs["off"] and runs["config"] == "True"


def test_no_valid_autosave_at_boot_restores_nothing(runs):
    out = runs["none"]
    assert "field: /data/field/auto-00000007.snap is damaged" in out, out
    assert "field: no restore at boot: no valid autosave in /data/field: auto-00000007: " \
        in out, out
    assert out.rstrip().endswith("None"), out


def test_error_messages(runs):
    assert "OSError" in runs["missing"] and "no saved field 'nope'" in runs["missing"]
    assert "ValueError" in runs["badname"] and "save name '../x'" in runs["badname"]
    assert "no /data" in runs["nodata"], runs["nodata"]
    full = runs["full"]
    assert "refused: 28 /data is full: /data/field/big.snap needs" in full, full
    assert "[]" in full, full     # no temporary file left behind
