# SPDX-License-Identifier: MIT
"""vm/rewrite/rw_opcodes.h, the one definition of the rewritten opcodes' numbers and undo
map that the VM, the rewriter and the verifier share: compiled on the host as plain C11
(-Wall -Wextra -Werror, no MicroPython headers) and checked byte by byte against the
table of the issue-7 rewrite design, written out independently here."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER_DIR = ROOT / "vm" / "rewrite"

PROBE = r"""
#include <stdio.h>
#include "rw_opcodes.h"
int main(void) {
    for (int b = 0; b < 256; b++) {
        for (int n = 0; n < 16; n += 5) {
            uint8_t code[4] = { (uint8_t)b, 0x84, 0xe5, (uint8_t)(0xc0 + n) };
            printf("%d %d %d %d\n", b, n, locios_bc_is_new((uint8_t)b),
                   locios_bc_undo(code, sizeof(code), 0));
        }
        uint8_t shortcode[3] = { (uint8_t)b, 0x84, 0xe5 };
        uint8_t badtail[4] = { (uint8_t)b, 0x84, 0xe5, 0xb0 };
        printf("short %d %d %d\n", b, locios_bc_undo(shortcode, sizeof(shortcode), 0),
               locios_bc_undo(badtail, sizeof(badtail), 0));
    }
    return 0;
}
"""

BINOP = 0xd7
ARITH_LO = [27, 28, 29, 31, 33, 24, 22, 23]  # 0x08..0x0f: + - * // % & | ^
ARITH_HI = [14, 15, 26, 25]  # 0x6a..0x6d: += -= >> <<


def spec_undo(b: int, n: int) -> int | None:
    """The original byte behind new opcode b (None: b is not a new opcode)."""
    if 0x02 <= b <= 0x07:
        return BINOP + b - 0x02
    if 0x08 <= b <= 0x0f:
        return BINOP + ARITH_LO[b - 0x08]
    if 0x6a <= b <= 0x6d:
        return BINOP + ARITH_HI[b - 0x6a]
    return {0x6e: 0x55, 0x6f: 0x56, 0xd4: 0x58, 0xd5: 0xb0 + n, 0xd6: 0x51,
            0x1d: 0x12, 0x1e: 0x13, 0x1f: 0x14}.get(b)


def test_undo_map_matches_the_design(tmp_path):
    src = tmp_path / "probe.c"
    src.write_text(PROBE)
    exe = tmp_path / "probe"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{HEADER_DIR}",
                    str(src), "-o", str(exe)], check=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    seen = 0
    for line in lines:
        f = line.split()
        if f[0] == "short":
            b, short, bad = map(int, f[1:])
            want = -1 if b == 0xd5 else (spec_undo(b, 0) or b)
            assert (short, bad) == (want, want), (hex(b), short, bad)
            continue
        b, n, is_new, undo = map(int, f)
        want = spec_undo(b, n)
        assert is_new == (want is not None), hex(b)
        assert undo == (b if want is None else want), (hex(b), n, undo, want)
        seen += 1
    assert seen == 256 * 4
    # 26 new opcodes, none of them 0x00 (marshal finds the end of code by trailing zeros).
    new = [b for b in range(256) if spec_undo(b, 0) is not None]
    assert len(new) == 26 and 0 not in new


CACHE_PROBE = r"""
#include <stdio.h>
#include "rw_opcodes.h"
int main(void) { printf("%d\n", LOCIOS_BC_CACHE_IN_VM); return 0; }
"""


def test_vm_runs_every_new_opcode(tmp_path):
    """The VM has a body (rw_ops.h) and a computed-goto entry (rw_entries.h) for each of
    the 26 opcodes, so rw_opcodes.h declares the caches implemented; a build can still
    ask for the other setting with -D (the verifier's tests do)."""
    names = {}
    for line in (HEADER_DIR / "rw_opcodes.h").read_text().splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "#define" and f[1].startswith("LOCIOS_BC_") \
                and not f[1].startswith("LOCIOS_BC_ORIG_") and f[2].startswith("(0x"):
            names[f[1]] = int(f[2].strip("()"), 16)
    assert sorted(names.values()) == [b for b in range(256) if spec_undo(b, 0) is not None]
    ops = (HEADER_DIR / "rw_ops.h").read_text()
    entries = (HEADER_DIR / "rw_entries.h").read_text()
    for name in names:
        assert ops.count(f"ENTRY({name}):") == 1, name
        assert entries.count(f"[{name}] = &&entry_{name},") == 1, name
    src = tmp_path / "cache.c"
    src.write_text(CACHE_PROBE)
    for extra, want in (([], "1"), (["-DLOCIOS_BC_CACHE_IN_VM=0"], "0")):
        exe = tmp_path / f"cache{len(extra)}"
        subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{HEADER_DIR}",
                        *extra, str(src), "-o", str(exe)], check=True)
        assert subprocess.run([str(exe)], check=True, capture_output=True,
                              text=True).stdout.strip() == want
