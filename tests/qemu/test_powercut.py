# SPDX-License-Identifier: MIT
"""Power cuts of /data (issue 18): a writable copy of the image boots, runs a workload that
writes to /data without pause (progs/powercut.py: autosaves of a ticking field, a named
save of it, a file rewritten by write-then-rename, a log appended to), and QEMU is killed
with SIGKILL after a random delay. Then, on the host, the partition must mount and hold
only whole files: every autosave a valid snapshot, the newest one the guest finished (or
the one it was writing), the named save the last one finished (or the one being
written), the rewritten file the old or the new generation, the log every line it
flushed. The next boot must reach the prompt with /data mounted, restore that newest
autosave (its digest the one the host computed) or say why there is none, find the same
named save the host did, and becomes the boot the next cut kills.

`make test` makes 3 cuts; `make test-powercut CUTS=50 SEED=1` (LOCIOS_POWERCUT_CUTS,
LOCIOS_POWERCUT_SEED) many more, with a summary in build/powercut/report.txt. The seed
fixes the delays; where in the guest's work a delay lands also depends on the host's
speed, so each cut's record says what the guest had started and finished when it fell."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from guestprog import prog

from tools import datafs
from tools.field import fieldsnap
from tools.guest.console import ConsoleError
from tools.guest.guestconsole import IMAGE, ROOT, Guest

CUTS = int(os.environ.get("LOCIOS_POWERCUT_CUTS", "3"))
SEED = int(os.environ.get("LOCIOS_POWERCUT_SEED", "1"))
# Delays are drawn from [0, MAX_DELAY) seconds after the workload is started: the low end
# falls in its set-up (first autosave settings, opening the log), the rest in its loop.
MAX_DELAY = float(os.environ.get("LOCIOS_POWERCUT_MAX_DELAY", "4"))
REPORT = os.environ.get("LOCIOS_POWERCUT_REPORT")

MOUNTED = "data: virtio0 partition 2 (LOCIDATA) mounted at /data"
KEEP = 3        # pc_work's autosave keep=, so the last finished one is never pruned
AUTO = re.compile(r"auto-(\d{8})\.snap$")
NAMED = ("mine", "mine.prev")  # what lo.load('mine') tries, in order
RESTORED = re.compile(r"field: restored /data/field/(auto-\d{8})\.snap \(tick (\d+), "
                      r"digest ([0-9a-f]{16})\)")


# The two generators of progs/powercut.py, the same on this side to check the files.
def state_text(n: int) -> bytes:
    return (f"gen {n}\n" + f"{n}," * (5000 // (len(str(n)) + 1)) + "\nend\n").encode()


def log_line(n: int) -> bytes:
    return f"line {n:06d} {'abcdefghij'[n % 10] * (n % 37)}\n".encode()


class CutFailure(AssertionError):
    pass


@dataclass
class Disk:
    """What the host finds on LOCIDATA after a cut."""
    autos: dict = field(default_factory=dict)    # number -> (tick, digest hex[:16])
    named: dict = field(default_factory=dict)    # 'mine' / 'mine.prev' -> (tick, hex)
    config: bytes | None = None
    state: bytes | None = None
    log: bytes | None = None
    files: int = 0


def read_disk(image: Path) -> Disk:
    # Read-only: littlefs-python's writes would fail, so the check cannot repair anything.
    fd = os.open(image, os.O_RDONLY)
    try:
        try:
            fs = datafs.open_fs(fd, datafs.find_data(fd))
        except ValueError as e:
            raise CutFailure(f"the host does not mount /data: {e}") from None
        d = Disk()
        for path, _size in datafs.walk_files(fs):
            d.files += 1
            with fs.open(path, "rb") as f:
                data = f.read()
            m = AUTO.search(path)
            if path.startswith("/field/") and m:
                try:
                    s = fieldsnap.parse(data)
                except fieldsnap.SnapshotError as e:
                    raise CutFailure(f"{path} is torn or damaged: {e}") from None
                d.autos[int(m.group(1))] = (s.tick, s.digest[:8].hex())
            elif path.startswith("/field/") and path[7:-5] in NAMED and path.endswith(".snap"):
                try:
                    s = fieldsnap.parse(data)
                except fieldsnap.SnapshotError as e:
                    raise CutFailure(f"{path} is torn or damaged: {e}") from None
                d.named[path[7:-5]] = (s.tick, s.digest[:8].hex())
            elif path == "/field/autosave":
                d.config = data
            elif path == "/pc/state":
                d.state = data
            elif path == "/pc/log":
                d.log = data
        fs.unmount()
        return d
    finally:
        os.close(fd)


@dataclass
class Run:
    """What one boot's workload said it started (name>) and finished before the cut."""
    go: tuple | None = None             # (gen, lines, tick, digest) it started from
    saved: list = field(default_factory=list)   # [(number, tick, digest)] finished
    gen_done: int | None = None
    gen_started: int | None = None
    line_done: int | None = None
    line_started: int | None = None
    named_done: tuple | None = None     # (tick, digest) of the last lo.save('mine') done
    named_started: tuple | None = None  # (tick, digest) of the one begun
    last: str = "set-up"                 # the last marker: where the cut fell
    errors: list = field(default_factory=list)


def parse_run(text: str) -> Run:
    r = Run()
    # A marker counts once it is whole, up to its closing bar: a cut may fall inside the
    # last line, even between the bar and the line end (print writes that apart).
    for line in text.replace("\r", "").split("\n"):
        if "autosave at tick" in line and "failed" in line:
            r.errors.append(line)
        if "Traceback" in line or "Error:" in line:
            r.errors.append(line)
        w = line.split()
        if not line.startswith("PC ") or w[-1] != "|":
            continue
        r.last = w[1]
        if w[1] == "go":
            r.go = (int(w[2]), int(w[3]), int(w[4]), w[5])
        elif w[1] == "as":
            r.saved.append((int(w[2][len("auto-"):]), int(w[3]), w[4]))
        elif w[1] == "w>":
            r.gen_started = int(w[2])
        elif w[1] == "w":
            r.gen_done = int(w[2])
        elif w[1] == "a>":
            r.line_started = int(w[2])
        elif w[1] == "a":
            r.line_done = int(w[2])
        elif w[1] == "ns>":
            r.named_started = (int(w[3]), w[4])
        elif w[1] == "ns":
            r.named_done = r.named_started
    return r


PHASES = {"set-up": "before the loop", "go": "between writes", "as>": "inside an autosave",
          "as": "between writes", "w>": "inside a state rewrite", "w": "between writes",
          "a>": "inside a log append", "a": "between writes",
          "ns>": "inside a named save", "ns": "between writes"}


class History:
    """What must hold across cuts, whatever this one hit."""

    def __init__(self):
        self.newest = 0        # newest autosave number seen on the disk so far
        self.ever_saved = False
        self.gen = 0           # newest state generation seen on the disk
        self.lines = 0
        self.named = None      # (tick, digest) lo.load('mine') finds on the disk


def check_disk(d: Disk, r: Run, h: History) -> dict:
    """The disk after the cut, against what the guest finished (r) and what was there
    before (h). Returns what the next boot must restore."""
    if r.errors:
        raise CutFailure("the workload reported: " + " | ".join(r.errors))
    newest = max(d.autos, default=0)
    if newest < h.newest:
        raise CutFailure(f"newest autosave is {newest}, but {h.newest} was on the disk "
                         "before this boot: a finished autosave was lost")
    if r.saved:
        num, tick, dig = r.saved[-1]
        if d.autos.get(num) != (tick, dig):
            raise CutFailure(f"auto-{num:08d} was finished (tick {tick}, digest {dig}) but "
                             f"the disk has {d.autos.get(num)}")
        if newest > num + 1 or (newest == num + 1 and r.last != "as>"):
            raise CutFailure(f"newest autosave {newest}: the guest finished {num} and had "
                             f"{'started' if r.last == 'as>' else 'not started'} another")
    elif newest > h.newest + 1:
        raise CutFailure(f"newest autosave {newest} after {h.newest} with none finished")
    # Autosaves are numbered on from the newest and pruned oldest first, only once a newer
    # one is whole: the disk holds an unbroken run ending at the newest, at least KEEP
    # long (fewer early on).
    have = sorted(d.autos)
    if have and (have != list(range(have[0], newest + 1)) or len(have) < min(KEEP, newest)):
        raise CutFailure(f"autosaves on the disk: {have}; an older one than the newest "
                         f"{KEEP} was lost")
    h.ever_saved = h.ever_saved or bool(d.autos)
    if h.ever_saved and d.config is None:
        raise CutFailure("/field/autosave (the settings) is gone after autosaves were made")

    # /pc/state: written to state.tmp then renamed, so one whole generation.
    done = r.gen_done if r.gen_done is not None else (r.go[0] if r.go else h.gen)
    if d.state is None:
        if done:
            raise CutFailure(f"/pc/state is missing; generation {done} was finished")
        gen = 0
    else:
        m = re.match(rb"gen (\d+)\n", d.state)
        gen = int(m.group(1)) if m else -1
        if gen < 0 or d.state != state_text(gen):
            raise CutFailure(f"/pc/state is torn: {len(d.state)} bytes, begins "
                             f"{d.state[:24]!r}, ends {d.state[-24:]!r}")
        ok = {done} | ({done + 1} if r.gen_started == done + 1 else set())
        if gen not in ok:
            raise CutFailure(f"/pc/state is generation {gen}; the guest had finished {done}"
                             f" and started {r.gen_started}")
    # /pc/log: every flushed line, at most the one being appended more, none torn.
    lines_done = (r.line_done + 1 if r.line_done is not None
                  else (r.go[1] if r.go else h.lines))
    log = d.log or b""
    n = log.count(b"\n")
    if log != b"".join(log_line(i) for i in range(n)):
        raise CutFailure(f"/pc/log is torn or out of order: {len(log)} bytes, ends "
                         f"{log[-40:]!r}")
    if not (lines_done <= n <= lines_done + (1 if r.line_started == lines_done else 0)):
        raise CutFailure(f"/pc/log has {n} lines; the guest had flushed {lines_done}")
    # mine.snap: the save renames the old one to mine.prev first, so a cut in between
    # leaves mine.prev alone; what lo.load('mine') finds is the last save finished, or
    # the one the cut fell inside (perhaps finished but not yet said).
    named = next((d.named[n] for n in NAMED if n in d.named), None)
    done = r.named_done or h.named
    ok = {done} | ({r.named_started} if r.last == "ns>" else set())
    if named not in ok:
        raise CutFailure(f"lo.load('mine') would find {named} (files {d.named}); the guest "
                         f"had finished {done} and started {r.named_started}")
    h.newest, h.gen, h.lines, h.named = newest, gen, n, named
    return {"config": d.config is not None, "newest": newest,
            "want": d.autos.get(newest), "named": named}


def check_boot(banner: str, expect: dict) -> str:
    """The boot after a cut; returns what it restored ('auto-N', 'none' or 'off')."""
    if "does not mount" in banner or MOUNTED not in banner:
        raise CutFailure(f"/data did not mount at boot:\n{banner[-800:]}")
    for bad in ("restore at boot failed", "is damaged", "Traceback"):
        if bad in banner:
            raise CutFailure(f"boot printed {bad!r} though every file checked on the host:"
                             f"\n{banner[-800:]}")
    m = RESTORED.search(banner)
    if not expect["config"]:
        if m or "no restore at boot" in banner:
            raise CutFailure(f"no autosave settings on the disk, yet:\n{banner[-800:]}")
        return "off"
    if expect["want"] is None:
        if m or "field: no restore at boot: no valid autosave" not in banner:
            raise CutFailure(f"no autosave on the disk; the boot should say so:\n"
                             f"{banner[-800:]}")
        return "none"
    name = f"auto-{expect['newest']:08d}"
    tick, dig = expect["want"]
    if not m or m.groups() != (name, str(tick), dig):
        raise CutFailure(f"boot should restore {name} (tick {tick}, digest {dig}):\n"
                         f"{banner[-800:]}")
    return name


# What lo.load('mine') would load, read without loading it (the workload's field must
# stay the one restored at boot).
FIND_NAMED = ("(lambda c: (c[1].tick, ''.join('%02x' % b for b in c[1].digest[:8])))"
              "(lo_store._first_valid('mine', True))")


def _qemu_pid(g: Guest) -> int:
    # The launcher's child: QEMU itself is killed, so the launcher still cleans up after it.
    launcher = g.qemu.proc.pid
    kids = Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()
    if len(kids) != 1:
        raise RuntimeError(f"launcher {launcher} has children {kids}, not one QEMU")
    return int(kids[0])


def _boot(image: Path, log: Path) -> Guest:
    g = Guest(image, log=log, launch=["--writable"])
    try:
        g.banner = g.boot()
    except ConsoleError as e:
        g.close()
        raise CutFailure(f"the boot did not reach the prompt: {e}") from None
    return g


def power_cuts(image: Path, logs: Path, cuts: int, seed: int) -> dict:
    rng = random.Random(seed)
    work = prog("powercut")
    h = History()
    records = []
    started = time.monotonic()
    g = _boot(image, logs / "boot-00.log")
    restored, want_digest = "off", None
    try:
        for i in range(1, cuts + 1):
            where = f"cut {i} of {cuts} (seed {seed}, image {image})"
            try:
                out = g.paste(work, timeout=120)
                if "Traceback" in out:
                    raise CutFailure(f"workload did not load: {out}")
                if h.named is not None:
                    got = g.ask(FIND_NAMED)
                    if tuple(got) != h.named:
                        raise CutFailure(f"the guest finds {got} for lo.load('mine'), "
                                         f"the host {h.named}")
                delay = rng.uniform(0, MAX_DELAY)
                g.send("pc_work()\r")
                time.sleep(delay)
                os.kill(_qemu_pid(g), signal.SIGKILL)
                text = g.read_eof(60).decode("utf-8", "replace")
                g.close()
                r = parse_run(text)
                if r.go and restored.startswith("auto-") and r.go[3] != want_digest:
                    raise CutFailure(f"lo.F after the restore has digest {r.go[3]}, the "
                                     f"snapshot {want_digest}")
                expect = check_disk(read_disk(image), r, h)
                g = _boot(image, logs / f"boot-{i:02d}.log")
                restored = check_boot(g.banner, expect)
                want_digest = expect["want"][1] if expect["want"] else None
            except CutFailure as e:
                raise CutFailure(f"{where}: {e}") from None
            records.append({"cut": i, "delay": round(delay, 3), "last": r.last,
                            "phase": PHASES[r.last], "autosaves": len(r.saved),
                            "newest": h.newest, "gen": h.gen, "lines": h.lines,
                            "restored": restored, "boot_s": round(g.boot_seconds, 1)})
    finally:
        g.close()
    phases: dict = {}
    for rec in records:
        phases[rec["phase"]] = phases.get(rec["phase"], 0) + 1
    return {"cuts": len(records), "seed": seed, "max_delay": MAX_DELAY,
            "seconds": round(time.monotonic() - started), "phases": phases,
            "inside_a_write": sum(1 for rec in records if rec["last"].endswith(">")),
            "restores": sum(1 for rec in records if rec["restored"].startswith("auto-")),
            "autosaves_finished": sum(rec["autosaves"] for rec in records),
            "newest_autosave": h.newest, "state_gen": h.gen, "log_lines": h.lines,
            "records": records}


def summary_text(s: dict) -> str:
    lines = [f"power cuts: {s['cuts']} SIGKILLs of QEMU, seed {s['seed']}, delays 0-"
             f"{s['max_delay']:g} s, {s['seconds']} s in all",
             f"  inside a write: {s['inside_a_write']} ("
             + ", ".join(f"{k} {v}" for k, v in sorted(s["phases"].items())) + ")",
             f"  every cut: /data mounted (host and guest), no torn file, the newest "
             f"finished autosave kept; {s['restores']} boots restored an autosave",
             f"  written in all: {s['autosaves_finished']} autosaves finished (newest "
             f"auto-{s['newest_autosave']:08d}), state generation {s['state_gen']}, "
             f"{s['log_lines']} log lines"]
    return "\n".join(lines) + "\n"


def test_power_cuts_leave_data_whole(tmp_path):
    image = tmp_path / "lociOS.img"
    shutil.copyfile(IMAGE, image)
    p = datafs.main([str(image), "format", "--yes"])
    assert p in (0, None)
    s = power_cuts(image, tmp_path, CUTS, SEED)
    text = summary_text(s)
    print(text)
    if REPORT:
        out = Path(REPORT) if os.path.isabs(REPORT) else ROOT / REPORT
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".json").write_text(json.dumps(s, indent=1) + "\n")
    assert s["cuts"] == CUTS
    # A run where no cut fell inside a write would not have tested much.
    if CUTS >= 10:
        assert s["inside_a_write"] > 0, text
