# SPDX-License-Identifier: MIT
"""A finally or with handler moved back onto code that jumps to before it (rule 5).

The VM runs a finally/with handler entered by a return's unwind with the value and a
sentinel where its exception entry has one cause: one word more, which the verifier
counts only where the block is active by layout (handler <= ip). A handler retargeted
onto a loop head jumps back into the loop body with its block still open, so the body
runs again one slot deeper than the verifier's max_depth. Such an edge is refused.
Each case here was accepted before; the soundness oracle's stack probe measured the run
over the bound (`soundness.py --replay`, the numbers below)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import stackcheck as SC  # noqa: E402
import vrf_host as H  # noqa: E402

RULE = {name: i for i, name in enumerate(H.RULES)}
WHY = "leaves a finally or with handler for code before it"

# The last function of tests/basics/with_return.py: the outer SETUP_WITH at offset 17
# has its handler moved from the WITH_CLEANUP at 92 to the `range(1, 3)` loop's head at
# 84 (the mutant `make verifier-soundness` found at seed 15). The probe measured depth
# 13 at the 4-tuple's build, where the verifier had computed max_depth 12.
WITH_RETURN = ("<module>/5", 18, 0x49, 0x41)

# The smallest such function: the finally handler moved from 31 onto the loop head at
# 24; measured depth 6 against max_depth 5.
SRC = ("def f(g):\n    try:\n        for i in range(1, 3):\n            return (i, i, i, i)\n"
       "    finally:\n        g()\nprint(f(print))\n")
TRY_FINALLY = ("<module>/0", 9, 0x15, 0x0E)


def _mutant(mpy: H.Mpy, edit: tuple[str, int, int, int]) -> H.Mpy:
    path, at, was, now = edit
    rc = dict(SC.preorder(mpy.root))[path]
    code = bytearray(rc.code)
    assert code[at] == was, (path, at)  # the compiler's output as recorded
    code[at] = now
    rc.code = bytes(code)
    return mpy


def _with_return() -> H.Mpy:
    return H.parse_mpy(H.mpy_cross(H.MPY_DIR / "tests" / "basics" / "with_return.py",
                                   "with_return.py"))


def _try_finally() -> H.Mpy:
    return H.parse_mpy(H.mpy_cross(SRC, "with_handler.py"))


def _refused(mpy: H.Mpy, path: str) -> None:
    bad = [v for v in H.verify_mpy(mpy) if not v.ok]
    assert [v.path for v in bad] == [path], [(v.path, v.msg) for v in bad]
    assert bad[0].rule == RULE["block"] and WHY in bad[0].msg, bad[0].msg


def test_the_compiled_code_verifies():
    for mpy in (_with_return(), _try_finally()):
        assert all(v.ok for v in H.verify_mpy(mpy))


def test_with_handler_moved_onto_a_loop_head_is_refused():
    _refused(_mutant(_with_return(), WITH_RETURN), WITH_RETURN[0])


def test_finally_handler_moved_onto_a_loop_head_is_refused():
    _refused(_mutant(_try_finally(), TRY_FINALLY), TRY_FINALLY[0])

