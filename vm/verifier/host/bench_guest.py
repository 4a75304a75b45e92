# SPDX-License-Identifier: MIT
"""Verifier cost in the guest under -icount (TSC cycles follow the instruction count, so
runs repeat): cycles per bytecode byte over every function of the frozen modules, and
verify/compile for the same generated source. Writes build/host/verifier/bench_guest.json."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # `tools` importable
from tools.guest.console import program  # noqa: E402
from tools.guest.guestconsole import IMAGE, Guest  # noqa: E402

OUT = ROOT / "build" / "host" / "verifier" / "bench_guest.json"
FROZEN = "asyncio, asyncio.core, asyncio.funcs, asyncio.event, asyncio.lock, asyncio.stream"
REPS = 20

# The walker test_verifier.py uses too (vwalk), then the timing loop.
SETUP = program(ROOT / "tests" / "qemu" / "progs" / "verifier_walk.py") + """
import time
def vbench(fns, reps):
    t = time.ticks_cpu()
    for _ in range(reps):
        for f in fns:
            vm.check(f, 'trusted')
    return time.ticks_diff(time.ticks_cpu(), t)
"""

GEN = ("src = ''.join('def fNN(a, b):\\n    x = a + b\\n    for i in range(a):\\n"
       "        if i % 3:\\n            x += i * b\\n        else:\\n            x -= 1\\n"
       "    return x\\n'.replace('NN', str(i)) for i in range(40))")


def main() -> None:
    os.environ.setdefault("LOCIOS_ACCEL", "tcg")
    g = Guest(IMAGE, extra=["-icount", "shift=0,align=off,sleep=off"])
    try:
        g.boot()
        g.paste(SETUP)
        g.run("import " + FROZEN)
        n = int(g.eval(f"w = []; _ = [vwalk(m, set(), w) for m in ({FROZEN},)]; "
                       "fns = [o[1] for o in w if o[2] is None]; del w; print(len(fns))"))
        stats = g.eval("s = [vm.stats(f, 'trusted') for f in fns]; "
                       "print(sum(x[0] for x in s), sum(x[1] for x in s), "
                       "sum(x[2] for x in s))").split()
        cycles = int(g.eval(f"print(vbench(fns, {REPS}))"))
        made = g.run(GEN)
        assert "Error" not in made, made
        comp = int(g.eval("t = time.ticks_cpu(); code = compile(src, 'g', 'exec'); "
                          "print(time.ticks_diff(time.ticks_cpu(), t))"))
        g.run("ns = {}; exec(code, ns); gf = [v for k, v in ns.items() if k[0] == 'f']")
        gstats = g.eval("s = [vm.stats(f, 'trusted') for f in gf]; "
                        "print(sum(x[1] for x in s))")
        ver = int(g.eval("print(vbench(gf, 1))"))
        src_len = int(g.eval("print(len(src))"))
    finally:
        g.close()
    functions, nbytes = int(stats[0]), int(stats[1])
    result = {
        "frozen_objects": n, "frozen_functions": functions, "frozen_bytes": nbytes,
        "reps": REPS, "cycles": cycles,
        "cycles_per_byte": round(cycles / (REPS * nbytes), 1),
        "generated_source_chars": src_len, "generated_bytecode_bytes": int(gstats),
        "compile_cycles": comp, "verify_cycles": ver,
        "verify_over_compile": round(ver / comp, 4),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
