# SPDX-License-Identifier: MIT
"""The host half of the soundness oracle's exact stack-bound check
(vm/verifier/host/stackcheck.py): prelude signatures decode as the verifier reads them
and re-encode byte for byte, a lowered n_state or n_exc_stack is refused, and the
comparison of a probe log with the verifier's bounds flags each kind of overrun.
The oracle run itself (an ASan unix-port build) is `make verifier-soundness`."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import stackcheck as SC  # noqa: E402
import vrf_host as H  # noqa: E402

SRC = """
def gen(n):
    for i in range(n):
        try:
            with ctx() as c:
                yield (i, c, [i, i + 1, {i: c}])
        except ValueError as e:
            yield e

def f(a, b=2, *args, k, **kw):
    return [a, b, args, k, kw, (a, (b, (a, b)))]
"""


@given(st.integers(1, 5000), st.integers(0, 300), st.integers(0, 15), st.integers(0, 300),
       st.integers(0, 300), st.integers(0, 300))
def test_signature_round_trip(s: int, e: int, f: int, a: int, k: int, d: int) -> None:
    sig = SC.Sig(s, e, f, a, k, d, 0)
    enc = SC.encode_sig(sig)
    back = SC.decode_sig(enc + b"\x00")
    assert back == SC.Sig(s, e, f, a, k, d, len(enc))


def _module():
    mpy = H.parse_mpy(H.mpy_cross(SRC, "stackcheck_src.py"))
    verdicts = {v.path: v for v in H.verify_mpy(mpy)}
    assert all(v.ok for v in verdicts.values())
    return mpy, verdicts


def test_signature_matches_the_verifier_and_corruption_is_refused() -> None:
    mpy, verdicts = _module()
    for path, rc in SC.preorder(mpy.root):
        sig, v = SC.decode_sig(rc.code), verdicts[path]
        assert (sig.n_state, sig.n_exc_stack) == (v.n_state, v.n_exc_stack)
        assert SC.encode_sig(sig) == rc.code[:sig.end]

        def rule(code: bytes, n: int = len(rc.children)) -> int:
            return H.verify_code(code, mpy.qstrs, mpy.n_obj, n)[0].rule

        assert rule(rc.code) == 0
        assert rule(SC.with_sig(rc.code, n_state=v.n_locals + v.max_depth - 1)) == \
            H.RULES.index("stack")
        if v.max_blocks:
            assert rule(SC.with_sig(rc.code, n_exc_stack=v.max_blocks - 1)) == \
                H.RULES.index("block")


def _log(mpy, lines: list[str]) -> str:
    loads = [f"L {i} {len(rc.code)} 0" for i, (_, rc) in enumerate(SC.preorder(mpy.root))]
    return "\n".join(loads + lines) + "\n"


def test_check_flags_every_overrun() -> None:
    mpy, verdicts = _module()
    i, (path, _) = next((i, x) for i, x in enumerate(SC.preorder(mpy.root))
                        if verdicts[x[0]].max_blocks)
    v = verdicts[path]
    at_bound = [f"D {i} {v.max_depth} 9", f"E {i} {v.max_blocks} 9",
                f"F {i} {v.n_locals - 1} 9"]
    rep = SC.check(_log(mpy, at_bound), mpy.root, verdicts)
    assert (rep.ran, rep.violations) == (1, [])
    assert rep.at_depth_bound == rep.at_exc_bound == 1
    cases = {f"D {i} {v.max_depth + 1} 9": "value stack above the verifier's max_depth",
             f"U {i} -1 9": "value stack below empty",
             f"E {i} {v.max_blocks + 1} 9": "exception stack above the verifier's max_blocks",
             f"F {i} {v.n_locals} 9": "local slot at or above the verifier's n_locals"}
    for line, kind in cases.items():
        kinds = [x["kind"] for x in SC.check(_log(mpy, [line]), mpy.root, verdicts).violations]
        assert kind in kinds, line
    del verdicts[path]  # as if the verifier had never accepted it
    kinds = [x["kind"] for x in SC.check(_log(mpy, at_bound), mpy.root, verdicts).violations]
    assert kinds == ["ran but not accepted"]
    bad_order = f"L 0 {len(mpy.root.code) + 1} 0\nD 0 1 0\n"
    assert SC.check(bad_order, mpy.root, verdicts).violations[0]["kind"].startswith("load order")
