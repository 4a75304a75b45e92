# SPDX-License-Identifier: MIT
"""Mutation soundness of the verifier against a host oracle: mutate one function of a
tests/basics module (byte changes, truncation, jump retargeting, prelude corruption),
keep the mutants the verifier accepts in full, and run them on MicroPython's unix port
built with AddressSanitizer, UBSan and the VM's asserts (DEBUG=1). A Python exception is
fine; a sanitizer report, an assertion or a signal is a soundness failure.
The oracle is built from the patched tree (vm/patches.mk), the VM LociOS runs, plus a
host-only stack-bound probe (oracle/): every function that runs must stay within the
value-stack depth, exception-block nesting and locals the verifier computed for it and
within what its prelude allocates (stackcheck.py); stack_control.py is the negative control.

    soundness.py [--pristine] [N_ACCEPTED] [SEED] [TEXT]  -> build/host/verifier/soundness.json
    (exit status 1 on any failure or stack-bound violation)
    (with TEXT, only the files containing it: "async with" aims at those handlers;
    --pristine: on an oracle built from the unpatched tree, for comparison)
    soundness.py --replay [--pristine] FILE.mpy...
    (runs kept mutants again, on the patched oracle or the pristine one)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stackcheck as SC  # noqa: E402
import vrf_host as H  # noqa: E402

PATCHED_DIR = H.ROOT / "build" / "micropython-1.25.0-lociOS"
PROBE_DIR = Path(__file__).resolve().parent / "oracle"
# The probe (the patched tree itself carries vm/patches/0017, the fix of the upstream
# undefined behaviour in mpz_shr_inpl that mutants of int_big1.py reached).
PROBE_PATCHES = (PROBE_DIR / "oracle-stack.patch",)
ORACLE_SRC = H.OUT / "micropython-oracle"  # the patched tree plus PROBE_PATCHES
ORACLE_BUILD = H.OUT / "unix-build-oracle"
PRISTINE_BUILD = H.OUT / "unix-build"
OUT = H.OUT / "soundness.json"
FAIL_DIR = H.OUT / "soundness-failures"
# Modules that turn integers into addresses through uctypes (bytearray_at(0, ...), and
# struct's "O"/"S" formats on addressof values) read raw memory, which the trusted
# profile allows on purpose and no verifier can bound (the locus profile refuses the
# import): a mutant that moves such an address faults by design, not through a hole.
RAW_MEMORY = "uctypes"


def probe_tree() -> Path:
    """The patched tree with PROBE_PATCHES applied (host oracle only), copied afresh
    whenever the patch set or one of those patches changes."""
    subprocess.run(["make", "--no-print-directory", "-C", str(H.ROOT), "vm-patches"],
                   check=True)
    stamp = ORACLE_SRC / ".oracle-stack.sha256"
    digest = hashlib.sha256((PATCHED_DIR / ".lociOS-patches.sha256").read_bytes()
                            + b"".join(p.read_bytes() for p in PROBE_PATCHES)).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return ORACLE_SRC
    tmp = ORACLE_SRC.with_name(ORACLE_SRC.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(PATCHED_DIR, tmp, symlinks=True)
    for patch in PROBE_PATCHES:
        subprocess.run(["patch", "-d", str(tmp), "-p1", "--batch", "--forward", "--quiet",
                        "--no-backup-if-mismatch", "-r", "-", "-i", str(patch)],
                       check=True)
    (tmp / stamp.name).write_text(digest)
    shutil.rmtree(ORACLE_SRC, ignore_errors=True)
    shutil.rmtree(ORACLE_BUILD, ignore_errors=True)  # every object from the old copy
    tmp.rename(ORACLE_SRC)
    return ORACLE_SRC


def build_oracle(pristine: bool = False) -> Path:
    """Builds (if needed) the sanitizer oracle; returns its executable. The patched
    oracle carries the stack-bound probe (oracle/); the pristine one does not."""
    if pristine:
        tree, build, probe = H.MPY_DIR, PRISTINE_BUILD, []
    else:
        tree, build = probe_tree(), ORACLE_BUILD
        probe = [f"USER_C_MODULES={PROBE_DIR.parent}"]
    subprocess.run(
        ["make", "-C", str(tree / "ports" / "unix"), "VARIANT=standard", *probe,
         f"BUILD={build}", "PROG=micropython", "DEBUG=1", "STRIP=",
         "MICROPY_PY_BTREE=0", "MICROPY_PY_SSL=0", "MICROPY_SSL_MBEDTLS=0",
         "MICROPY_PY_FFI=0", "FROZEN_MANIFEST=",
         # MicroPython itself passes NULL with length 0 to memcpy and offsets NULL by
         # zero-length arrays (benign, seen on unmutated code): those two UBSan checks
         # are off so that any report left is ours to explain.
         "CFLAGS_EXTRA=-fsanitize=address,undefined -fno-omit-frame-pointer "
         "-fno-sanitize=nonnull-attribute,pointer-overflow",
         "LDFLAGS_EXTRA=-fsanitize=address,undefined"],
        check=True, capture_output=True)
    return build / "micropython"


ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0",
           UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")


def run_mutant(oracle: Path, mpy: bytes, probe_log: list[str] | None = None
               ) -> tuple[str, int, str]:
    """Imports mpy on the oracle: ("failure" | "ok" | "python_error" | "timeout", rc, stderr).
    With probe_log, the stack-bound probe's log of the run is appended to it (also after
    a timeout: it is written as the run goes)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "mutant.mpy").write_bytes(mpy)
        log = Path(tmp) / "probe.log"
        try:
            p = subprocess.run([str(oracle), "-c", "import mutant"], cwd=tmp,
                               env=dict(ENV, LOCI_ORACLE_LOG=str(log)),
                               capture_output=True, timeout=5, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            p = None
        if probe_log is not None:
            probe_log.append(log.read_text() if log.exists() else "")
    if p is None:
        return "timeout", 0, ""
    err = p.stderr.decode("utf-8", "replace")
    # A C assert prints "Assertion `...' failed"; Python's AssertionError is a test's
    # own check failing on mutated code, which is fine.
    if (p.returncode < 0 or "AddressSanitizer" in err or "runtime error:" in err
            or "Assertion `" in err):
        return "failure", p.returncode, err
    return ("ok" if p.returncode == 0 else "python_error"), p.returncode, err


# Plain source that reached undefined behaviour in py/ before vm/patches fixed it (each
# found first through a mutant): run on the oracle before the mutants, a sanitizer
# report from any is a failure like a mutant's.
PLAIN_UB = [
    ("0017 mpz_shr_inpl mask", "print(-(2 ** 100) >> 31)"),
    ("0018 mpz_set_from_bytes shift",
     "print(int.from_bytes(bytes([0, 0, 0, 0xab]) + bytes(7) + b'\\x01', 'little'))"),
]


def run_plain(oracle: Path) -> list[dict]:
    """The PLAIN_UB programs on the oracle: a failure record for each that reports."""
    out = []
    for name, src in PLAIN_UB:
        p = subprocess.run([str(oracle), "-c", src], env=ENV, capture_output=True,
                           timeout=10, stdin=subprocess.DEVNULL)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0 or "runtime error:" in err or "AddressSanitizer" in err:
            out.append({"file": f"plain source: {name}", "rc": p.returncode,
                        "stderr": err[-2000:]})
    return out


def replay(args: list[str]) -> None:
    pristine = "--pristine" in args
    oracle = build_oracle(pristine)
    for f in (a for a in args if a != "--pristine"):
        data = Path(f).read_bytes()
        mpy = H.parse_mpy(data)
        verdicts = H.verify_mpy(mpy)
        logs: list[str] | None = None if pristine else []
        kind, rc, err = run_mutant(oracle, data, logs)
        last = err.strip().splitlines()[-1] if err.strip() else ""
        print(f"{Path(f).name}: verifier {'accepts' if all(v.ok for v in verdicts) else 'refuses'}"
              f", {'pristine' if pristine else 'patched'} oracle: {kind} (rc {rc}) {last}")
        if logs is not None:
            rep = SC.check(logs[0], mpy.root, {v.path: v for v in verdicts})
            print(f"  stack check: {rep.ran} functions ran, violations {rep.violations}")


def _uint(v: int) -> bytes:
    out = [v & 0x7F]
    v >>= 7
    while v:
        out.append(0x80 | (v & 0x7F))
        v >>= 7
    return bytes(reversed(out))


def _tables_end(data: bytes) -> int:
    """Offset where the raw-code tree starts (after header, qstrs and constants)."""
    r = H._Reader(data)
    r.bytes(4)
    n_qstr, n_obj = r.uint(), r.uint()
    for _ in range(n_qstr):
        v = r.uint()
        if not v & 1:
            r.bytes(v >> 1)
            r.byte()
    for _ in range(n_obj):
        H._skip_obj(r)
    return r.pos


def serialize(data: bytes, root: H.RawCode) -> bytes:
    out = bytearray(data[:_tables_end(data)])

    def emit(rc: H.RawCode) -> None:
        out.extend(_uint(len(rc.code) << 3 | (4 if rc.children else 0) | rc.kind))
        out.extend(rc.code)
        if rc.children:
            out.extend(_uint(len(rc.children)))
            for c in rc.children:
                emit(c)

    emit(root)
    return bytes(out)


def mutate(code: bytes, rng: random.Random) -> bytes:
    b = bytearray(code)
    kind = rng.randrange(5)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(b))
        if kind == 0:
            b[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            b[at] = rng.randrange(256)
        elif kind == 2:
            b[rng.randrange(min(len(b), 6))] = rng.randrange(256)  # prelude
        elif kind == 3:
            jumps = [i for i in range(len(b) - 1) if b[i] & 0xF0 == 0x40]
            if jumps:
                b[rng.choice(jumps) + 1] = rng.randrange(256)
        else:
            del b[rng.randrange(len(b)):]
            break
    return bytes(b)


def functions(rc: H.RawCode) -> list[H.RawCode]:
    out = [rc]
    for c in rc.children:
        out += functions(c)
    return out


def main() -> None:
    if sys.argv[1:2] == ["--replay"]:
        replay(sys.argv[2:])
        return
    pristine = "--pristine" in sys.argv
    argv = [a for a in sys.argv if a != "--pristine"]
    want = int(argv[1]) if len(argv) > 1 else 300
    rng = random.Random(int(argv[2]) if len(argv) > 2 else 1)
    oracle = build_oracle(pristine)
    only = argv[3] if len(argv) > 3 else ""
    files = [f for f in sorted((H.MPY_DIR / "tests" / "basics").glob("*.py"))
             if only in f.read_text() and RAW_MEMORY not in f.read_text()]
    mods = [(f, H.mpy_cross(f, f.name)) for f in files]
    stats = {"tried": 0, "accepted": 0, "ran_ok": 0, "python_error": 0, "timeout": 0,
             "failures": 0}
    # The exact stack-bound check (stackcheck.py), on the patched oracle's probe only.
    stack = {"functions_ran": 0, "at_max_depth": 0, "at_max_blocks": 0,
             "stack_violations": 0} if not pristine else {}
    failures = [] if pristine else run_plain(oracle)
    stats["failures"] += len(failures)
    violations = []
    while stats["accepted"] < want and stats["tried"] < want * 400:
        f, data = rng.choice(mods)
        mpy = H.parse_mpy(data)
        target = rng.choice(functions(mpy.root))
        new = mutate(target.code, rng)
        stats["tried"] += 1
        if new == target.code or not new:
            continue
        target.code = new
        verdicts = H.verify_mpy(mpy)
        if not all(v.ok for v in verdicts):
            continue
        stats["accepted"] += 1
        mutant = serialize(data, mpy.root)
        logs: list[str] | None = None if pristine else []
        kind, rc, err = run_mutant(oracle, mutant, logs)
        if logs is not None:
            rep = SC.check(logs[0], mpy.root, {v.path: v for v in verdicts})
            stack["functions_ran"] += rep.ran
            stack["at_max_depth"] += rep.at_depth_bound
            stack["at_max_blocks"] += rep.at_exc_bound
            if rep.violations:
                stack["stack_violations"] += 1
                FAIL_DIR.mkdir(parents=True, exist_ok=True)
                keep = FAIL_DIR / f"{f.stem}-{stats['accepted']}-stack.mpy"
                keep.write_bytes(mutant)
                violations.append({"file": f.name, "mpy": str(keep),
                                   "violations": rep.violations[:8]})
        if kind == "failure":
            stats["failures"] += 1
            FAIL_DIR.mkdir(parents=True, exist_ok=True)
            keep = FAIL_DIR / f"{f.stem}-{stats['accepted']}{'-pristine' * pristine}.mpy"
            keep.write_bytes(mutant)
            failures.append({"file": f.name, "mpy": str(keep), "rc": rc,
                             "stderr": err[-600:]})
        else:
            stats[{"ok": "ran_ok"}.get(kind, kind)] += 1
    result = {**stats, **stack, "failures_detail": failures,
              "stack_violations_detail": violations}
    out = OUT.with_name("soundness-pristine.json") if pristine else OUT
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({**stats, **stack}))
    for fl in failures[:5]:
        print(fl["file"], fl["rc"], fl["stderr"][-300:])
    for vl in violations[:5]:
        print(vl["file"], vl["mpy"], vl["violations"][:2])
    # A probe that saw nothing run proves nothing: that is a failure of the check too.
    if failures or violations or (stack and stack["functions_ran"] == 0):
        sys.exit(1)


if __name__ == "__main__":
    main()
