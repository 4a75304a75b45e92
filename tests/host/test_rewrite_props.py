# SPDX-License-Identifier: MIT
"""Property tests of the rewriter on its unix oracle (vm/rewrite.mk): random small
functions (vm/rewrite/host/rw_progs.py) called with random arguments print and return the
same, or raise the same exception type, before and after `_rw.apply(fn, _rw.plan(fn))`,
after `_rw.undo`, and when aggressive mode rewrites them (verified first) at the first
call; undo restores the original bytes; planning rewritten code plans nothing.
Derandomised for CI; `make rewrite-props-deep` runs RW_PROPS_EXAMPLES batches."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "vm" / "rewrite" / "host"))
import rw_progs as P  # noqa: E402

EXAMPLES = int(os.environ.get("RW_PROPS_EXAMPLES", "25"))
BATCH = (20, 30)   # functions per oracle process
SEEN: Counter[str] = Counter()   # edit kinds met over the run, checked at the end
COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module")
def oracle() -> Path:
    path = P.oracle()
    if not path.is_file():
        pytest.fail(f"no rewriter oracle at {path}")
    return path


@settings(max_examples=EXAMPLES, derandomize=EXAMPLES <= 100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(batch=P.cases(*BATCH))
def test_rewriting_keeps_behaviour_and_undoes_exactly(oracle, batch):
    for case, out in zip(batch, P.run_batch(oracle, batch), strict=True):
        b = out.phases["b"]
        where = f"\n{case.src}\nargs: {case.argsets}\nbefore: {b}"
        assert out.phases["a"] == b, f"after apply(plan) differs: {out.phases['a']}{where}"
        assert out.phases["u"] == b, f"after undo differs: {out.phases['u']}{where}"
        assert out.phases["g"] == b, f"aggressive mode differs: {out.phases['g']}{where}"
        assert out.undo_identical, f"undo did not restore the original bytes{where}"
        assert out.n_edits_again == 0 and out.reapply_same, \
            f"planning the rewritten code planned {out.n_edits_again} more{where}"
        assert out.changed == (out.n_edits > 0), where
        assert out.undone_bytes == out.n_edits, where   # every edit is one byte
        assert out.refused == 0, f"verifier refused a rewrite: {out.last_refusal}{where}"
        assert out.aggressive_same, f"aggressive mode rewrote other bytes than the plan{where}"
        SEEN.update(out.kinds)
        COUNTS["functions"] += 1
        COUNTS["rewritten"] += out.n_edits > 0
        COUNTS["calls"] += len(b) and sum(1 for line in b if line.startswith("@"))
        COUNTS["raised"] += sum(1 for line in b if line.startswith("! "))


def test_the_generator_reaches_every_kind_and_both_outcomes(oracle):
    """Not vacuous: the programs above met every rewrite kind of phase 1, most were
    rewritten, and calls both returned and raised."""
    if not COUNTS["functions"]:
        # Run on its own (-k): generate the programs here instead.
        test_rewriting_keeps_behaviour_and_undoes_exactly(oracle=oracle)
    print(f"\n{dict(COUNTS)} kinds: {dict(SEEN)}")
    assert set(SEEN) >= {"cmpj", "arith_si", "subscr_si", "forrange", "incr_fast",
                         "return_none"}, SEEN
    assert COUNTS["rewritten"] >= COUNTS["functions"] * 3 // 4, COUNTS
    assert 0 < COUNTS["raised"] < COUNTS["calls"], COUNTS
