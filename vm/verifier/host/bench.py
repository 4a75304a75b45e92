# SPDX-License-Identifier: MIT
"""Verifier cost on the host, by callgrind: instructions per bytecode byte over all of
MicroPython's tests/basics, the largest function, and the ratio to the cost of parsing
and compiling the same source with mpy-cross. Writes build/host/verifier/bench.json."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vrf_host as H  # noqa: E402

OUT = H.OUT / "bench.json"
CG = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def callgrind_ir(cmd: list[str], toggles: list[str]) -> int:
    """Instructions executed inside the toggled functions (inclusive)."""
    args = CG + [f"--toggle-collect={t}" for t in toggles] + cmd
    err = subprocess.run(args, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"Collected : (\d+)", err).group(1))


def build_mpy_cross() -> Path:
    """An unstripped mpy-cross of the same tree, built under build/ (callgrind needs its
    symbols; the port's copy is stripped)."""
    build = H.OUT / "mpy-cross-build"
    subprocess.run(["make", "-C", str(H.MPY_DIR / "mpy-cross"), f"BUILD={build}",
                    "PROG=mpy-cross", "STRIP=", "USER_C_MODULES=", "FROZEN_MANIFEST="],
                   check=True, capture_output=True)
    return build / "mpy-cross"


def build_bench() -> Path:
    exe = H.OUT / "vrf_bench"
    srcs = [str(s) for s in sorted(H.VRF.glob("*.c"))] + [str(H.VRF / "host" / "vrf_bench.c")]
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{H.VRF}",
                    *srcs, "-o", str(exe)], check=True)
    return exe


def corpus_of(files: list[Path], path: Path) -> dict:
    data = b"".join(H.corpus_records(H.parse_mpy(H.mpy_cross(f, f.name))) for f in files)
    path.write_bytes(data)
    return {"path": str(path)}


def main() -> None:
    H.OUT.mkdir(parents=True, exist_ok=True)
    exe = build_bench()
    mpy_cross = build_mpy_cross()
    files = sorted((H.MPY_DIR / "tests" / "basics").glob("*.py"))
    corpus = H.OUT / "bench_corpus.bin"
    corpus_of(files, corpus)
    out = subprocess.run([str(exe), str(corpus), "all"], capture_output=True, text=True,
                         check=True).stdout.split()
    functions, nbytes, largest = int(out[1]), int(out[3]), int(out[5])
    ir_all = callgrind_ir([str(exe), str(corpus), "all"], ["vrf_verify_fn"])
    ir_big = callgrind_ir([str(exe), str(corpus), "largest"], ["vrf_verify_fn"])
    # Compile cost over a tenth of the files, against verifying those files' functions.
    sample = files[::10]
    with tempfile.TemporaryDirectory() as tmp:
        sc = Path(tmp) / "sample.bin"
        corpus_of(sample, sc)
        ir_vs = callgrind_ir([str(exe), str(sc), "all"], ["vrf_verify_fn"])
        ir_cs = 0
        for f in sample:
            ir_cs += callgrind_ir([str(mpy_cross), "-o", str(Path(tmp) / "o.mpy"), str(f)],
                                  ["mp_parse", "mp_compile_to_raw_code"])
    result = {
        "functions": functions, "bytes": nbytes,
        "verify_ir": ir_all, "ir_per_byte": round(ir_all / nbytes, 1),
        "largest_function_bytes": largest, "largest_function_ir": ir_big,
        "sample_files": len(sample), "sample_verify_ir": ir_vs, "sample_compile_ir": ir_cs,
        "verify_over_compile": round(ir_vs / ir_cs, 4),
    }
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
