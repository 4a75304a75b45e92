# SPDX-License-Identifier: MIT
"""Guest cycles per loop iteration with the rewritten opcodes (vm/rewrite/rw_ops.h) patched
in by hand (`_rwops.poke`, no rewriter), against the unpatched twin, under QEMU -icount
(instruction counts: reruns agree).
Usage: bench_ops.py [IMAGE] [N] [CASE,CASE...] > result.json  (default: every case)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # `tools` importable
from tools.guest import guestconsole  # noqa: E402
from tools.guest.rwguest import DECODE_FIND  # noqa: E402

# Boot under -icount on a loaded 2-core host can exceed the console default.
guestconsole.BOOT_TIMEOUT = 400

# decode/find from tools/guest/rwguest.py (shared with tests/qemu/test_rewrite_ops.py); apply()
# patches the first match of each (pattern, new byte) and returns the offsets.
GUEST = r"""
import _rwops, time
""" + DECODE_FIND + r"""
def twin(src, name):
    g = {}
    exec(src, g)
    return g[name]
def apply(fn, edits):
    return [(_rwops.poke(fn, find(fn, p), b), b) for p, b in edits]
def t(fn, n, a):
    t0 = time.ticks_cpu(); fn(n, a); return time.ticks_diff(time.ticks_cpu(), t0)
def g0():
    pass
class O:
    def __init__(s):
        s.u = 0
        s.v = 1
        s.w = 2
    def m(s):
        pass
OB = O()
"""
BOP = 0xd7
LF, SI, SF = "range(0xb0, 0xc0)", "range(0x70, 0xb0)", "range(0xc0, 0xd0)"
CMPJ_LT = f"(({BOP},), (0x43,))", 0x02
IADD = f"(({BOP + 14},),)", 0x6a
INCR = f"({LF}, {SI}, ({BOP + 14}, {BOP + 15}), {SF})", 0xd5
FORR = f"((0x58,), (0x5a,), ({BOP},), (0x43,))", 0xd4
SUBSCR = "((0x55,),)", 0x6e
STORE = "((0x56,),)", 0x6f
ADD = f"(({BOP + 27},),)", 0x08
RETN = "((0x51,), (0x63,))", 0xd6
GLOBAL = "((0x12,),)", 0x1d
ATTR = "((0x13,),)", 0x1e
METHOD = "((0x14,),)", 0x1f

CASES = {
    # name: (source of `def k(n, a)`, [(label, edits)], callee edits)
    "while": ("def k(n, a):\n    i = 0\n    s = 0\n    while i < n:\n        s += i\n"
              "        i += 1\n    return s\n",
              [("cmpj", [CMPJ_LT]), ("cmpj+incr", [CMPJ_LT, INCR]),
               ("cmpj+incr+iadd", [CMPJ_LT, INCR, IADD])]),
    "for": ("def k(n, a):\n    for i in range(0, n):\n        pass\n", [("forrange", [FORR])]),
    "list": ("def k(n, a):\n    for i in range(0, n):\n        a[i] = a[i] + 1\n",
             [("forrange", [FORR]), ("forrange+subscr+add+store", [FORR, SUBSCR, ADD, STORE])]),
    "call": ("def k(n, a):\n    for i in range(0, n):\n        a()\n", [("forrange", [FORR])]),
    "global": ("G = 1\ndef k(n, a):\n    for i in range(0, n):\n        x = G\n",
               [("forrange", [FORR]), ("forrange+global", [FORR, GLOBAL])]),
    "attr": ("def k(n, a):\n    for i in range(0, n):\n        x = a.w\n",
             [("forrange", [FORR]), ("forrange+attr", [FORR, ATTR])]),
    # A builtin through LOAD_GLOBAL: LOAD_GLOBAL_C caches its index in the builtins table.
    "builtin": ("def k(n, a):\n    for i in range(0, n):\n        x = abs\n",
                [("forrange", [FORR]), ("forrange+global", [FORR, GLOBAL])]),
    # A module attribute: LOAD_ATTR_C's guard (an instance member) fails every time.
    "modattr": ("def k(n, a):\n    for i in range(0, n):\n        x = a.ticks_cpu\n",
                [("forrange", [FORR]), ("forrange+attr", [FORR, ATTR])]),
    "method": ("def k(n, a):\n    for i in range(0, n):\n        a.m()\n",
               [("forrange", [FORR]), ("forrange+method", [FORR, METHOD])]),
}


def main() -> None:
    image = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "test" / "lociOS.img"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else list(CASES)
    if unknown := set(only) - set(CASES):
        raise SystemExit(f"unknown cases {sorted(unknown)}; known: {sorted(CASES)}")
    g = guestconsole.Guest(image, icount=True)
    out: dict = {"image": str(image), "n": n, "cases": {}}
    try:
        g.boot()
        g.paste(GUEST)
        g.run(f"A = [0] * {n}")
        g.run("R = twin('def g1():\\n    pass\\n', 'g1')")  # a callee ending in RETURN_NONE
        g.run(f"apply(R, [({RETN[0]}, {RETN[1]})])")
        for case in only:
            src, variants = CASES[case]
            arg = {"list": "A", "call": "g0", "attr": "OB", "method": "OB",
                   "modattr": "time"}.get(case, "None")
            rows = {}
            for label, edits in [("original", [])] + variants:
                g.run(f"K = twin({src!r}, 'k')")
                if edits:
                    g.run("apply(K, [" + ", ".join(f"({p}, {b})" for p, b in edits) + "])")
                g.eval(f"t(K, 1000, {arg})")  # warm-up: TCG translation, first allocations
                cyc = int(g.eval(f"t(K, {n}, {arg})", timeout=600))
                rows[label] = round(cyc / n, 2)
            if case == "call":  # the callee returns through RETURN_NONE as well
                g.run(f"K = twin({src!r}, 'k')")
                g.run(f"apply(K, [({FORR[0]}, {FORR[1]})])")
                g.eval("t(K, 1000, R)")
                cyc = int(g.eval(f"t(K, {n}, R)", timeout=600))
                rows["forrange, callee return_none"] = round(cyc / n, 2)
            out["cases"][case] = rows
    finally:
        g.close()
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
