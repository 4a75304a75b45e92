# SPDX-License-Identifier: MIT
"""Negative control of the oracle's stack-bound check (stackcheck.py): it must be able to
fail. Runs unmodified tests/basics modules on the probe oracle (they must show no
violation), picks functions whose run fills their prelude's bound exactly (value stack
up to n_state - n_locals, or exception blocks up to n_exc_stack) where one more would
land in memory ASan does not watch, lowers that field by one, confirms the verifier
refuses the result, forces it through the oracle anyway and counts how many the check
catches, and how many ASan/UBSan/asserts alone would have.

    stack_control.py [N_EACH] [SEED]  -> build/host/verifier/stack_control.json
    (N_EACH corrupted functions of each kind, default 20; exit 1 unless every one is
    refused by the verifier and caught by the check, and the originals are clean)
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import soundness as S  # noqa: E402
import stackcheck as SC  # noqa: E402
import vrf_host as H  # noqa: E402

OUT = H.OUT / "stack_control.json"
GENERATOR = 0x01  # MP_SCOPE_FLAG_GENERATOR (py/runtime0.h): state in the generator object
FIELDS = {"n_state": ("depth", "value stack into the locals"),
          "n_exc_stack": ("exc", "exception stack above n_exc_stack")}


def main() -> None:
    n_each = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    oracle = S.build_oracle()
    files = sorted((H.MPY_DIR / "tests" / "basics").glob("*.py"))
    rng.shuffle(files)
    originals = {"modules": 0, "functions_ran": 0, "violations": 0}
    clean_detail: list[dict] = []
    cases: dict[str, list[dict]] = {k: [] for k in FIELDS}
    for f in files:
        if all(len(c) >= n_each for c in cases.values()):
            break
        data = H.mpy_cross(f, f.name)
        mpy = H.parse_mpy(data)
        verdicts = {v.path: v for v in H.verify_mpy(mpy)}
        if not all(v.ok for v in verdicts.values()):
            continue
        logs: list[str] = []
        S.run_mutant(oracle, data, logs)
        rep = SC.check(logs[0], mpy.root, verdicts)
        originals["modules"] += 1
        originals["functions_ran"] += rep.ran
        if rep.violations:
            originals["violations"] += len(rep.violations)
            clean_detail.append({"file": f.name, "violations": rep.violations[:4]})
        seen, _ = SC.parse_log(logs[0])
        fns = SC.preorder(mpy.root)
        for i, s in seen.items():
            path, rc = fns[i]
            v, sig = verdicts.get(path), SC.decode_sig(rc.code)
            if not s.ran or v is None:
                continue
            if SC.encode_sig(sig) != rc.code[:sig.end]:
                raise SystemExit(f"{f.name} {path}: signature does not re-encode")
            # Only overflows that stay inside memory the VM owns, where ASan is blind: a
            # value stack one slot into the locals, an exception block past a generator's
            # state (inside the GC heap). Elsewhere ASan stops the run at the overflowing
            # write, before the probe's next tick could see the depth.
            full = {"n_state": s.depth[0] == sig.n_state - v.n_locals and v.n_locals > 0,
                    "n_exc_stack": (0 < s.exc[0] == sig.n_exc_stack
                                    and sig.flags & GENERATOR)}
            for name, hit in full.items():
                if hit and len(cases[name]) < n_each:
                    cases[name].append(corrupt(oracle, f, data, i, name, verdicts))
    summary = {name: {"corrupted": len(c), "refused_by_verifier": sum(x["refused"] for x in c),
                      "caught_by_stack_check": sum(x["caught"] for x in c),
                      "caught_by_sanitizers_alone": sum(x["run"] == "failure" for x in c)}
               for name, c in cases.items()}
    result = {"originals": originals, "originals_detail": clean_detail, **summary,
              "cases": cases}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({"originals": originals, **summary}))
    ok = originals["violations"] == 0 and all(
        s["corrupted"] == n_each == s["refused_by_verifier"] == s["caught_by_stack_check"]
        for s in summary.values())
    if not ok:
        sys.exit(1)


def corrupt(oracle: Path, f: Path, data: bytes, index: int, name: str,
            verdicts: dict[str, H.Verdict]) -> dict:
    """Lowers field name of function index by one; what the verifier and the oracle say."""
    mpy = H.parse_mpy(data)
    path, rc = SC.preorder(mpy.root)[index]
    sig = SC.decode_sig(rc.code)
    rc.code = SC.with_sig(rc.code, **{name: getattr(sig, name) - 1})
    refused = [v for v in H.verify_mpy(mpy) if not v.ok]
    mutant = S.serialize(data, mpy.root)
    logs: list[str] = []
    kind, _, err = S.run_mutant(oracle, mutant, logs)
    rep = SC.check(logs[0], mpy.root, verdicts)  # the bounds of the original function
    hits = [x for x in rep.violations
            if x.get("function") == path and x["kind"].startswith(FIELDS[name][1])]
    return {"file": f.name, "function": path, "field": name,
            "from": getattr(sig, name), "to": getattr(sig, name) - 1,
            "refused": bool(refused), "verifier": refused[0].msg if refused else "",
            "caught": bool(hits), "violation": hits[0] if hits else None, "run": kind,
            "stderr": err.strip().splitlines()[-1] if kind == "failure" and err.strip() else ""}


if __name__ == "__main__":
    main()
