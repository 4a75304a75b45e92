# SPDX-License-Identifier: MIT
"""Budgeted calls (`_budget`, vm/budget) and the REPL idle hook (`kernel.idle`) in the
guest: every limit stops code that tries to catch, delay or outlive the stop, and the
REPL and the heap are fine afterwards."""

from __future__ import annotations

import re
import time

from guestprog import prog

STEPS = prog("budget")


def run(guest, call: str, timeout: float = 60) -> tuple:
    out = guest.eval(f"r = _budget.run({call}); print(r[0], repr(r[1]), r[2], r[3], r[4])",
                     timeout=timeout)
    status, rest = out.split(" ", 1)
    value, ops, cycles, alloc = rest.rsplit(" ", 3)
    return int(status), value, int(ops), int(cycles), int(alloc)


def test_setup_and_constants(guest):
    out = guest.paste(STEPS)
    assert "Traceback" not in out, out
    assert guest.eval("_budget.OK, _budget.RAISED, _budget.OPS, _budget.CYCLES, "
                      "_budget.ALLOC, _budget.ABORTED") == "(0, 1, 2, 3, 4, 5)"
    assert guest.eval("gc.collect(); free0 = gc.mem_free(); free0 > 0") == "True"


def test_return_value_and_counts(guest):
    assert run(guest, "add, 41, 0, 0, 0")[:2] == (0, "42")
    # Ops are VM events: deterministic, and each loop iteration adds the same number.
    a, b, c = (run(guest, f"loop, {n}, 0, 0, 0") for n in (10, 20, 30))
    assert a[0] == b[0] == c[0] == 0
    assert b[2] - a[2] == c[2] - b[2] > 0, (a, b, c)
    assert run(guest, "loop, 20, 0, 0, 0")[2] == b[2]
    assert a[3] > 0
    # Bytes requested from the GC: a list of 1000 words, plus its header.
    status, _, _, _, alloc = run(guest, "mk, 1000, 0, 0, 0")
    assert status == 0 and 8000 <= alloc < 9000, alloc
    assert run(guest, "loop, 10, 0, 0, 0")[4] == 0


def test_ops_limit_stops_loops_handlers_cannot_catch_it(guest):
    assert run(guest, "spin, 0, 1000, 0, 0")[:3] == (2, "None", 1000)
    assert run(guest, "spin_exc, 0, 1000, 0, 0")[:3] == (2, "None", 1000)
    assert run(guest, "spin_fin, 0, 1000, 0, 0")[:3] == (2, "None", 1000)
    assert guest.eval("ran") == "[]"  # the finally clause never ran


def test_deep_recursion_without_loops(guest):
    # No branch in rec: only the entry hook sees it.
    assert run(guest, "rec, 0, 500, 0, 0")[:3] == (2, "None", 500)
    # Without a limit the VM's own recursion check ends it, as an exception.
    status, value, *_ = run(guest, "rec, 0, 0, 0, 0")
    assert status == 1 and "maximum recursion depth" in value, value


def test_alloc_limit_refuses_the_request(guest):
    status, value, _, _, alloc = run(guest, "big, 0, 0, 0, 65536")
    assert (status, value) == (4, "None") and alloc <= 65536
    status, value, _, _, alloc = run(guest, "grow, 0, 0, 0, 65536")
    assert (status, value) == (4, "None") and 32768 < alloc <= 65536, alloc
    assert guest.eval("ran") == "[]"  # neither handler ran
    # The heap is usable at once: the refused request never happened.
    assert guest.eval("len(bytearray(10**7))") == "10000000"


def test_cycles_limit(guest):
    status, _, ops, cycles, _ = run(guest, "spin, 0, 0, 20000000, 0")
    assert status == 3 and ops > 0 and cycles >= 20000000, (status, cycles)


def test_abort_code(guest):
    assert run(guest, "ab, 42, 0, 0, 0")[:2] == (5, "42")
    err = guest.run("_budget.abort(3)")
    assert "RuntimeError: _budget.abort: no budgeted call is running" in err, err


def test_exceptions_come_back_raised(guest):
    status, value, *_ = run(guest, "boom, 7, 0, 0, 0")
    assert (status, value) == (1, "ValueError(7,)")
    assert guest.eval("r[1] is saved[-1]") == "True"
    assert run(guest, "bye, 3, 0, 0, 0")[:2] == (1, "SystemExit(3,)")


def test_nested_run_refused(guest):
    status, value, *_ = run(guest, "nest, 0, 0, 0, 0")
    assert status == 1 and "RuntimeError('_budget.run: already inside run()" in value, value
    assert guest.eval("_budget.active()") == "False"


def test_generators(guest):
    # Left suspended by a step: resumable afterwards.
    assert run(guest, "gen_left, 0, 0, 0, 0")[:2] == (0, "0")
    assert guest.eval("list(G)") == "[1, 4, 9]"
    # Stopped while running: it stays marked as executing and refuses to resume.
    assert run(guest, "gen_stuck, 0, 1000, 0, 0")[:2] == (2, "None")
    assert "generator already executing" in guest.run("next(H)")


def test_ctrl_c_during_a_step_comes_back_raised(guest):
    # Ctrl-C is an interrupt only once the line runs: wait until the step says so. A few
    # rounds, because the interrupt can land on either side of the VM's pending check.
    for delay in (0.3, 0.5, 0.7):
        guest.send("r = _budget.run(spin_say, 0, 0, 0, 0); print('got', r[0], repr(r[1]))\r")
        guest.expect("spinning")
        time.sleep(delay)
        guest.send(b"\x03")
        out = guest.expect(re.escape(">>> "), timeout=30).decode(errors="replace")
        assert "got 1 KeyboardInterrupt()" in out, out


def test_repl_and_heap_after_all_of_it(guest):
    assert guest.eval("1 + 1") == "2"
    assert guest.eval("_budget.active()") == "False"
    out = guest.eval("gc.collect(); f = gc.mem_free(); print(f > free0 - 2**20, f)")
    assert out.startswith("True"), out
    guest.paste("def z():\n    raise KeyError('k')\n")
    out = guest.run("z()")
    assert "KeyError: k" in out, out


def test_idle_hook(guest):
    guest.paste("n = [0]\ndef tick():\n    n[0] += 1\ndef bad():\n    raise OSError(5)\n")
    guest.eval("kernel.idle(tick)")
    time.sleep(1.0)
    first = int(guest.eval("n[0]"))
    assert first > 0
    t0 = time.monotonic()
    assert guest.eval("6 * 7") == "42"
    assert time.monotonic() - t0 < 5
    time.sleep(0.5)
    assert int(guest.eval("n[0]")) > first
    guest.eval("kernel.idle(None)")
    stopped = int(guest.eval("n[0]"))
    time.sleep(0.5)
    assert int(guest.eval("n[0]")) == stopped
    # An exception escaping fn is printed once and unregisters it.
    guest.run("kernel.idle(bad)")
    time.sleep(1.5)
    out = guest.run("print('end')")  # everything printed after the previous prompt
    assert out.count("kernel.idle: the idle function raised") == 1, out
    assert "OSError: [Errno 5]" in out and out.rstrip().endswith("end"), out
    assert "TypeError" in guest.run("kernel.idle(3)")
    assert guest.eval("1 + 2") == "3"


def test_counts_come_back_as_small_ints(guest):
    # A count that fits a small int is one: a big int would be a heap object made on every
    # step the mesh accounts (its ops, cycles and bytes) and on every kernel.cycles().
    guest.paste("def grown(f, *a):\n"
                "    gc.collect()\n"
                "    m0 = gc.mem_alloc()\n"
                "    f(*a)\n"
                "    return gc.mem_alloc() - m0\n")
    assert guest.eval("grown(kernel.cycles)") == "0"
    # Only the 5-tuple itself (56 bytes: four 16-byte blocks).
    assert guest.eval("grown(_budget.run, add, 41, 0, 0, 0)") == "64"
