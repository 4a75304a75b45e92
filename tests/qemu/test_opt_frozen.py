# SPDX-License-Identifier: MIT
"""The image's frozen code as the optimiser's candidate (issue 20, item 2): a frozen
function is rewritten in a heap copy of its code, and twinned from its source, which the
image keeps in a ROM filesystem mounted at /rom; a .mpy module read in place gets a heap
copy too. The copies run exactly as the image's code (a colony's digests are unchanged
with every frozen function copied), and the optimiser's own code and the modules that
write to disks are never candidates. A colony's env callback, a frozen closure called
with the live Mesh, is gated on copies of its free variables with the Mesh's stand-in
(loci/python/opt_env.py). Under -icount, so the gates' verdicts are exact."""

from __future__ import annotations

import ast
import hashlib
import subprocess
from pathlib import Path

from guestprog import prog

from tools.build.mkromfs import frozen_sources, romfs_image

ICOUNT = True
SETUP = prog("colony_digests") + "\n" + prog("opt_frozen") + "\n" + prog("opt_env")

ROOT = Path(__file__).resolve().parents[2]
MPY_DIR = ROOT / "build" / "micropython-1.25.0-lociOS"
MPY_CROSS = ROOT / "build" / "port" / "mpy-cross" / "mpy-cross"

MPY_MODULE = """\
def tri(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s
"""


def val(g, expr: str, timeout: float = 60):
    return ast.literal_eval(g.eval(expr, timeout=timeout))


def test_rom_holds_the_source_of_every_frozen_module(g):
    want = {name: hashlib.sha256(data).hexdigest()
            for name, data in frozen_sources(MPY_DIR, ROOT / "port",
                                             ROOT / "port" / "manifest.py").items()}
    assert "mesh.py" in want and "opt/_gates.py" in want and "asyncio/core.py" in want
    assert val(g, "rom_hashes()", timeout=120) == want
    # Every frozen module the guest imported is there under the name its code carries.
    names = val(g, "sorted({m.__file__ for m in sys.modules.values()"
                   " if getattr(m, '__file__', '/')[0] != '/'})")
    assert names and set(names) <= set(want), set(names) - set(want)
    # Read-only, and the ioctl refuses to write a segment.
    out = g.run("open('/rom/x.py', 'w')")
    assert "OSError" in out, out
    assert val(g, "vfs.rom_ioctl(3, 0, 0)") < 0


def test_frozen_functions_get_native_twins_from_their_source_in_rom(g):
    g.paste("""
helpers_loop()
opt.settle(helpers_loop, rounds=24)
""", timeout=900)
    for name in ("next", "jain", "_ident", "_module"):
        e = val(g, f"entry({name!r}, 'native', 'swapped')")
        assert e is not None, (name, val(g, f"verdicts({name!r})"))
        assert e["gain"] > 1.05, e
    # Twins are compiled from the defs in /rom: the text the host froze.
    src = (ROOT / "loci" / "python" / "colonies" / "common.py").read_text()
    got = val(g, "opt._source.def_source(common.percentile)")
    assert got.startswith("def percentile(xs, p):") and got.strip() in src
    assert val(g, "_rw.twin(common.jain) is not None")
    assert val(g, "common.jain([1.0, 1.0, 4.0])") == 6.0 ** 2 / (3 * 18.0)


def test_a_frozen_function_is_rewritten_in_its_heap_copy_and_rolled_back(g):
    g.paste("""
opt.native_promotion = False
E = decide(lm._plain, plain_loop)
opt.native_promotion = True
""", timeout=600)
    e = val(g, "E")
    assert (e["kind"], e["verdict"]) == ("rewrite", "swapped"), e
    assert e["gain"] > 1.02, e
    assert val(g, "opt._journal.code_digest(lm._plain)") == e["new"]
    back = val(g, "opt.rollback(E['id'])")
    assert back["verdict"] == "rolled back", back
    assert val(g, "opt._journal.code_digest(lm._plain)") == e["old"]


def test_heap_copies_of_frozen_code_run_as_the_image_runs_it(g):
    colonies = ["(tasks, 3, 120, {'tasks': 40})", "(foraging, 5, 120, {})",
                "(healing, 7, 120, {})", "(hostile, 11, 120, {})", "(bridge, 1, 60, {})"]
    # A colony's first run in a boot can differ from its next ones (the hostile colony's
    # 'hostile-starve-kids' takes 4 steps the first time, 3 after, and its kids differ),
    # so both compared runs come after a first one.
    g.paste("RUNS = [" + ", ".join(colonies) + "]\n"
            "FIRST = [colony_marks(mod, s, t, **o) for mod, s, t, o in RUNS]\n"
            "BEFORE = [colony_marks(mod, s, t, **o) for mod, s, t, o in RUNS]",
            timeout=900)
    found, copied = val(g, "own_all()", timeout=120)
    assert found > 400 and copied == found, (found, copied)
    assert val(g, "[_rw.frozen(f) for f in (mesh.Mesh.round, lm._plain)]") == [False, False]
    assert val(g, "opt._source.is_frozen(mesh.Mesh.round)") is True
    g.paste("AFTER = [colony_marks(mod, s, t, **o) for mod, s, t, o in RUNS]", timeout=900)
    assert val(g, "AFTER == BEFORE"), g.run("BEFORE, AFTER")


def test_the_optimisers_own_code_and_disk_writers_are_never_candidates(g):
    g.paste("""
import storage, opt_mesh
NEVER = [opt._gates.equivalent, opt_mesh.start, storage.mount]
""")
    assert val(g, "[opt._policy._eligible(f) for f in NEVER]") == [False, False, False]
    # Asked for at the console, each is refused, and the journal says why.
    whys = val(g, "[(e['verdict'], e['gate'], e['detail']) for e in"
                  " [opt.attempt(f) for f in NEVER]]")
    assert [w[:2] for w in whys] == [("rejected", "frozen")] * 3, whys
    assert "own code" in whys[0][2] and "FROZEN_SKIP" in whys[2][2], whys
    g.paste("opt.FROZEN = False")
    try:
        assert val(g, "opt._policy._eligible(common.percentile)") is False
    finally:
        g.paste("opt.FROZEN = True")


def test_a_mpy_module_read_in_place_gets_a_heap_copy(g, tmp_path):
    src = tmp_path / "tri_m.py"
    src.write_text(MPY_MODULE)
    subprocess.run([str(MPY_CROSS), "-o", str(tmp_path / "tri_m.mpy"), "-s", "tri_m.py",
                    str(src)], check=True)
    image = romfs_image({"tri_m.mpy": (tmp_path / "tri_m.mpy").read_bytes()})
    g.paste(f"""
vfs.mount(vfs.VfsRom(bytes.fromhex({image.hex()!r})), "/t")
sys.path.append("/t")
import tri_m
def tri_loop():
    for n in range(40):
        tri_m.tri(n)
""")
    # Read in place: inside the buffer, neither a heap block of its own nor the image's.
    assert val(g, "_rw.frozen(tri_m.tri)") is False
    assert "ValueError" in g.run("_rw.start(tri_m.tri)")
    e = val(g, "decide(tri_m.tri, tri_loop)", timeout=600)
    assert (e["kind"], e["verdict"]) == ("rewrite", "swapped"), e
    assert val(g, "_rw.start(tri_m.tri) >= 0 and not opt._source.is_frozen(tri_m.tri)")
    # Its source is nowhere in the image: no twin.
    assert ("native", "rejected", "source") in val(g, "verdicts('tri')")
    assert val(g, "tri_m.tri(10)") == 45


def test_a_colony_env_closure_is_gated_with_the_meshs_stand_in(g):
    first, verdicts, untouched = val(g, "env_verdicts()", timeout=600)
    assert first is None, first   # the first move records its calls
    rewrite = [v for v in verdicts if v[0] == "rewrite"]
    # It passed the verifier (its free variables are cells) and the equivalence gate
    # (replayed on copies of them, with the stand-in): only the timing decides.
    assert rewrite and rewrite[0][2] in (None, "faster"), verdicts
    # Its twin is compiled inside a def taking its free variables in its closure's order,
    # probed for float sites on the same stand-in calls (its one site, `waiting += 1`,
    # ran as int arithmetic: no fast path).
    note = "float sites: 1, 1 ran, 0 with a fast path, 0 storing unboxed"
    assert ("native", "swapped", None, note) in verdicts, verdicts
    # The replays and the timed calls left the colony's state and the field as they were.
    assert untouched is True


def test_a_colony_deposits_the_same_with_its_env_twin_swapped_in(g):
    chain, report, verdict = val(g, "env_twin_run(True)", timeout=900)
    assert verdict == ("native", "swapped")
    # The same field digest chain and report as with the bytecode env, same seed.
    assert val(g, "env_twin_run(False)", timeout=900) == (chain, report, None)


def test_an_env_asking_what_the_stand_in_cannot_answer_is_refused(g):
    _first, verdicts, untouched = val(g, "asking_env_verdicts()", timeout=600)
    rewrite = [v for v in verdicts if v[0] == "rewrite"]
    assert rewrite and rewrite[0][1:3] == ("rejected", "equivalent"), verdicts
    assert rewrite[0][3].endswith("its replay asked the stand-in for m.ps, which it cannot"
                                  " answer"), rewrite
    assert untouched is True


def test_a_replay_copies_a_closures_cells(g):
    new_cell, original, copy, same_as_changed, same_as_copy = val(g, "cell_copies()")
    assert new_cell is True
    # The copy's contents are copies: changing them leaves the original as it was.
    assert original == [1, {"a": 2.5}] and copy == [1, {"a": 3.5}]
    assert same_as_changed is True and same_as_copy is False


def test_a_closures_function_is_verified_with_its_cells(g):
    assert val(g, "closures_functions()") == (True, None, [0, 2, 4, 3])
