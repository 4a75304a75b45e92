# SPDX-License-Identifier: MIT
"""The profiler in the guest (`_prof`, `prof`; vm/profile): a hot loop is first in
prof.hot() with its source line, the always-on counters count calls and back edges
exactly (running frames included), samples survive a collection and a Ctrl-C, and
10 kHz sampling leaves the REPL working."""

from __future__ import annotations

import ast
import re
import time

from guestprog import prog

# Line numbers are those of this block as pasted (<stdin>; line 1 is the import).
CODE = prog("profile")
HOT_LINE = 7


def test_hot_loop_is_first_with_its_line(guest):
    guest.paste(CODE)
    guest.run("prof.reset(); prof.start(2000)")
    guest.run("x = hot(1000000); x = cold(2000)", timeout=120)
    guest.run("prof.stop()")
    rows = ast.literal_eval(guest.eval("prof.top(3)"))
    samples, name, file, line, offset, opcode = rows[0]
    assert (name, file, line) == ("hot", "<stdin>", HOT_LINE), rows
    # Samples are timer ticks, so their number follows the host's speed under TCG: the
    # loop's offsets together, not one of them, must clearly dominate.
    assert sum(r[0] for r in rows if r[1] == "hot") > 50 and opcode != "?", rows
    out = guest.run("prof.hot(3)")
    first = out.splitlines()[2]   # "N samples", header, hottest function
    assert re.search(r"\d+ +\d+\.\d  hot \(<stdin>:5\)", first), out
    assert f"hot  <stdin>:{HOT_LINE}  +{offset}  {opcode}" in out, out


def test_counters_are_exact(guest):
    guest.run("_prof.reset()")
    guest.run("k(7); k(7); k(1000)")
    assert guest.eval("count(k)") == "[(3, 1014)]"
    guest.run("many_bad(5)")
    assert guest.eval("count(bad)") == "[(5, 15)]"      # a raise finishes a call too
    guest.run("g = gen(4); next(g); next(g)")
    assert guest.eval("count(gen)") == "[(0, 2)]"   # suspended: no call yet; a loop is
    # entered through its backward condition jump, so each yield follows one back edge
    guest.run("list(g)")
    assert guest.eval("count(gen)") == "[(1, 4)]"       # finished once
    # Threshold and back-off: k has 1017 + 1 calls/back edges past 1024 -> one event.
    guest.run("k(10)")
    assert guest.eval("[c[3] for c in _prof.counters() if c[0] is k]") == "[1]"
    # 4 calls + 1024 back edges now; the next event is at 2048, exactly.
    guest.run("k(1018)")
    assert guest.eval("[c[1:] for c in _prof.counters() if c[0] is k]") == "[(5, 2042, 1)]"
    guest.run("k(0)")
    assert guest.eval("[c[1:] for c in _prof.counters() if c[0] is k]") == "[(6, 2042, 2)]"
    # counters(True): the functions with a hot event, and only those.
    assert guest.eval("[c[1:] for c in _prof.counters(True) if c[0] is k]") == "[(6, 2042, 2)]"
    assert guest.eval("all(c[3] for c in _prof.counters(True))") == "True"
    assert guest.eval("{c[0] for c in _prof.counters(True)} == "
                      "{c[0] for c in _prof.counters() if c[3]}") == "True"
    # A running frame's back edges are in the table as soon as anyone reads it.
    guest.run("_prof.reset()")
    assert guest.eval("inner(100)") == "[(0, 100)]"
    assert guest.eval("count(inner)") == "[(1, 100)]"


def test_a_full_table_gives_way_to_new_hot_code(guest):
    # 700 one-off functions each called 3 times fill the 512 slots; a function that runs
    # afterwards is still counted exactly: it takes the least active slot of its window.
    guest.run("_prof.reset()")
    guest.paste("""
def fill(n):
    fs = []
    for j in range(n):
        exec('def f%d(x):\\n    return x + %d' % (j, j))
        f = globals()['f%d' % j]
        f(1); f(2); f(3)
        fs.append(f)
    return fs
""")
    guest.run("fs = fill(700)")
    st = ast.literal_eval(guest.eval("_prof.stats()"))
    assert st["evicted"] > 0 and st["unslotted"] == 0, st
    guest.run("k(500); k(500)")
    assert guest.eval("count(k)") == "[(2, 1000)]"
    guest.run("del fs")


def test_vm_abort_counts_back_edges_not_calls(guest):
    # _budget stops spin_q with nlr_jump_abort, which skips its frame's exit: the skipped
    # frame's back edges still reach the table, it is not a call, and the chain of
    # running frames is intact afterwards (counting and reading go on exactly).
    guest.paste("import _budget\ndef spin_q(x):\n    while True:\n        pass\n")
    guest.run("_prof.reset()")
    assert guest.eval("_budget.run(spin_q, 0, 1000, 0, 0)[0]") == "2"   # OPS: stopped
    calls, back = ast.literal_eval(guest.eval("count(spin_q)"))[0]
    assert calls == 0 and 0 < back <= 1000, (calls, back)
    guest.run("k(7)")
    assert guest.eval("count(k)") == "[(1, 7)]"
    assert guest.eval("inner(5)") == "[(0, 5)]"


def test_samples_survive_gc_and_ctrl_c(guest):
    guest.run("prof.reset(); _prof.start(5000)")
    # A function that is sampled and then dropped: the ring keeps it alive.
    guest.run("exec('def tmp(n):\\n    s = 0\\n    for i in range(n):\\n        s += i\\n'); "
              "tmp(100000); del tmp", timeout=60)
    guest.run("junk = [bytearray(1000) for i in range(2000)]; del junk; gc.collect()")
    guest.send("spin()\r")
    guest.expect("spinning")
    time.sleep(0.5)
    guest.send(b"\x03")
    out = guest.expect(re.escape(">>> "), timeout=30).decode(errors="replace")
    assert "KeyboardInterrupt" in out, out
    guest.run("_prof.stop(); gc.collect()")
    names = ast.literal_eval(guest.eval("sorted(set(r[1] for r in prof.top(50)))"))
    assert "tmp" in names and "spin" in names, names
    line = ast.literal_eval(guest.eval("[r[3] for r in prof.top(50) if r[1] == 'tmp'][0]"))
    assert line == 4


def test_10khz_leaves_the_repl_fine(guest):
    hz = guest.eval("kernel.tick_hz()")
    guest.run("prof.reset(); _prof.start(10000)")
    guest.run("x = hot(100000); time.sleep_ms(300); x = cold(50000)",
              timeout=120)
    st = ast.literal_eval(guest.eval("_prof.stats()"))
    assert st["hz"] == 10000 and st["taken"] > 100, st
    assert guest.eval("kernel.tick_hz()") == "10000"
    guest.run("_prof.stop()")
    assert guest.eval("kernel.tick_hz()") == hz
    assert guest.eval("1 + 1") == "2"
    out = guest.run("prof.hot(2)")
    assert "samples" in out and "hot" in out, out
    assert guest.eval("_prof.stats()['hz']") == "0"
    try_bad = guest.run("_prof.start(20000)")
    assert "ValueError" in try_bad, try_bad
