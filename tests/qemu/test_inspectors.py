# SPDX-License-Identifier: MIT
"""The console inspectors (`from lo import *`, loci/README.md "Inspecting the field") on a
seeded foraging colony under -icount: each one's exact bytes against
tests/qemu/inspect_golden.json; show() within its byte budget and its escapes only where
the colour changes; the console size asked of the terminal (and 80x24 when it does not
answer); ps() paging and watch() redrawing, both driven by keys over the serial line;
help() naming only modules that import.

Regenerate the golden file after a deliberate change with
`INSPECT_GOLDEN=write .venv/bin/python -m pytest -q tests/qemu/test_inspectors.py`, and
read the diff before committing it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ICOUNT = True
GOLDEN = Path(__file__).with_name("inspect_golden.json")
SETUP = """
import builtins, kernel, lo, mesh
from lo import *
def out(fn):
    # What fn prints, as the bytes that leave for the line.
    kernel.capture(True)
    try:
        fn()
    finally:
        b, lost = kernel.capture(False)
    assert not lost
    return b
R = run('foraging', seed=1, ticks=60, quiet=True)
# A Locus that deposits outside its region: refused three times, then retired.
STRAY = "def step(ctx):\\n    ctx.deposit('trail', 1000.0, (60, 60))\\n"
spawn({'name': 'stray', 'code': STRAY, 'restart': 'never',
       'caps': [{'flavours': ['trail'], 'ops': ['sense', 'deposit'], 'region': (0, 0, 4, 4)}],
       'attend': {'flavour': 'trail', 'at': (1, 1)}})
mesh.LAST[0].run(12)
console(80, 24)
"""

# Each inspector on the colony, as a person would call it (paging off for ps: the
# paging test drives that through the line).
CALLS = [
    "show('trail')",
    "show('trail', ascii=True)",
    "show('food', zoom=4)",
    "show('nest', region=(30, 30, 12, 6), ascii=True)",
    "show('deliv')",
    "ps(name='ant-1?', more=False)",
    "ps(state='retired', more=False)",
    "audit(4)",
    "audit(3, locus=5)",
    "audit(2, kind='grant', raw=True)",
    "audit(4, kind='refused')",
    "journal(4)",
    "journal(3, locus=7, flavour='trail')",
    "help()",
    "help('field')",
    "builtins.help()",
]


def ask(g, expr, timeout=120):
    return g.ask(expr, timeout=timeout)


@pytest.fixture(scope="module")
def outputs(g):
    return {c: ask(g, f"out(lambda: {c})").decode() for c in CALLS}


def test_each_inspector_prints_its_golden_bytes(outputs):
    if os.environ.get("INSPECT_GOLDEN") == "write":
        GOLDEN.write_text(json.dumps(outputs, indent=1, ensure_ascii=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert sorted(want) == sorted(CALLS)
    for call in CALLS:
        assert outputs[call] == want[call], call


def test_the_raw_repl_gets_the_same_bytes(g, outputs):
    # mpremote exec runs code through the raw REPL: the same inspectors, the same bytes.
    g.raw_enter()
    try:
        got = g.exec("from lo import *\nshow('trail', ascii=True)\nps(name='ant-1?', "
                     "more=False)")
    finally:
        g.raw_exit()
    assert got.decode() == (outputs["show('trail', ascii=True)"]
                            + outputs["ps(name='ant-1?', more=False)"])


def test_show_fits_80x24_within_its_byte_budget(outputs):
    text = outputs["show('trail')"]
    lines = text.rstrip("\r\n").split("\r\n")
    assert len(lines) <= 23
    plain = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", x) for x in lines]
    assert max(len(x) for x in plain[:-1]) <= 79     # the legend's swatches are spaces too
    assert len(text.encode()) <= 2500
    # Never the same colour twice in a row: an escape only where the colour changes.
    for line in lines[:-2]:
        cols = re.findall(r"\x1b\[(?:48;5;)?(\d+)m", line)
        assert all(a != b for a, b in zip(cols, cols[1:], strict=False)), line
    assert "trail 71x71 t=72" in text and "scale" in lines[-1]


def test_the_console_size_is_asked_of_the_terminal(g):
    g.send("console(True)\r")
    g.expect(re.escape(b"\x1b[6n"), timeout=30)
    g.send(b"\x1b[30;100R")                   # the terminal's answer: row 30, column 100
    g.expect(re.escape(b">>> "), timeout=30)
    assert ask(g, "console()") == (100, 30)
    # No answer: 80x24 (the screen console, when there is one, is larger here).
    assert ask(g, "console(True)") == (80, 24)
    assert ask(g, "console(80, 24)") == (80, 24)


def test_ps_pages_a_screenful_at_a_time(g):
    g.send("ps()\r")
    first = g.expect(re.escape(b"-- 110 more: any key, q to stop --"), timeout=60)
    assert b"126 Loci: 125 live, 1 retired" in first, first
    assert b"by name: 125 ant-*, 1 stray" in first, first
    # A screenful: 22 lines before the prompt line, 2 of the 24 left for it and the echo.
    assert first.count(b"\r\n") == 1 + 22, first
    g.send(" ")
    second = g.expect(re.escape(b"-- 88 more: any key, q to stop --"), timeout=60)
    assert second.count(b"\r\n") == 22 and b"ant-" in second
    g.send("q")
    rest = g.expect(re.escape(b">>> "), timeout=60)
    assert b"ant-" not in rest
    assert ask(g, "1 + 1") == 2


def test_watch_redraws_in_place_until_a_key(g):
    t0 = ask(g, "lo.F.tick_count()")
    g.send("watch('trail', every=5)\r")
    g.expect(re.escape(b"(any key stops)"), timeout=60)
    frame = g.expect(re.escape(b"(any key stops)"), timeout=60)
    # The second frame starts by going back up over the first: 23 lines at 80x24, the
    # map's 20 rows, its legend and the status line, so nothing scrolled.
    assert frame.startswith(b"\x1b[J\r\n\x1b[23F"), frame[:40]
    g.send("x")
    g.expect(re.escape(b">>> "), timeout=60)
    t1 = ask(g, "lo.F.tick_count()")
    assert t1 >= t0 + 5 and (t1 - t0) % 5 == 0


def test_watch_leaves_cleanly_on_ctrl_c(g):
    g.send("watch(ps, every=1)\r")
    g.expect(re.escape(b"(any key stops)"), timeout=60)
    g.send(b"\x03")
    out = g.expect(re.escape(b">>> "), timeout=60)
    assert b"stopped at tick" in out and b"Traceback" not in out
    assert ask(g, "1 + 1") == 2


def modules(text):
    names = set()
    for m in re.finditer(r"\bfrom (\w+) import|\bimport (\w+(?:, \w+)*)", text):
        names.update([m.group(1)] if m.group(1) else m.group(2).split(", "))
    return sorted(names)


def test_help_names_only_modules_that_import(outputs, g):
    mentioned = set()
    for call in ("help()", "builtins.help()"):
        mentioned.update(modules(outputs[call]))
    for t in ask(g, "list(__import__('lo_help').TOPICS)"):
        mentioned.update(modules(ask(g, f"__import__('lo_help').TOPICS[{t!r}]")))
    assert {"lo", "field", "opt", "prof", "vm", "kernel"} <= mentioned, mentioned
    for name in sorted(mentioned):
        assert ask(g, f"__import__({name!r}) is not None") is True, name
