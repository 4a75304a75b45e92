# SPDX-License-Identifier: MIT
"""Deeply nested data walked by MicroPython's C (hash, ==, <, repr, json, sorted, ...)
raises RuntimeError at the C stack limit instead of running into the guard page below
the main stack (which stopped the machine with a double fault): from the REPL, and from
a Locus's step, where the mesh goes on."""

from __future__ import annotations

import pytest
from guestprog import prog

SETUP = prog("deep_data")
NAMES = ["hash of a tuple", "tuple as a dict key", "frozenset hash", "tuple ==", "list ==",
         "dict ==", "list <", "tuple in list", "repr of a list", "str of a dict",
         "json.dumps", "sorted", "max"]


@pytest.mark.parametrize("name", NAMES)
def test_a_recursive_c_path_raises_instead_of_stopping_the_machine(g, name):
    out = g.eval(f"attempt({name!r})", timeout=120)
    assert "maximum recursion depth exceeded" in out or out == "'MemoryError'", out
    assert g.eval("6 * 7") == "42"


LOCUS = '''
import mesh
from field import grid

# No cycles limit (a console spawn may ask for none): building the data takes longer
# than the default allows under TCG, and this is about the C stack, not the clock.
SRC = """
def step(ctx):
    x = 0
    for _ in range(200000):
        x = (x,)
    hash(x)
"""
M = mesh.Mesh([grid("trail", 8, 8)], seed=1)
man = {"name": "deep", "code": SRC, "restart": "never",
       "caps": [{"flavours": ["trail"], "ops": ["sense"]}],
       "budget": {"ops": 10000000, "alloc": 16 << 20, "cycles": 0},
       "attend": {"flavour": "trail", "at": (1, 1)}}
lid = M.spawn(man)
M.run(3)
info = M.info(lid)
'''


def test_a_locus_hashing_deep_data_is_stopped_and_the_mesh_goes_on(g):
    out = g.paste(LOCUS, timeout=300)
    assert "Traceback" not in out, out
    err = g.eval("str(info.get('error'))")
    assert "recursion" in err or "RuntimeError" in err, (err, g.eval("info"))
    assert g.eval("M.tick > 0") == "True"
    assert g.eval("6 * 7") == "42"
