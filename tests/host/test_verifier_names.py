# SPDX-License-Identifier: MIT
"""The global names code uses, as vm.names() reports them (vrf_next_qstr over verified
code, here through vrf_host.names_mpy): checked against CPython's own compiler on random
programs, refused with the verifier's message when the code does not verify; and the
`locus` profile's opcodes that the VM patch made safe."""

from __future__ import annotations

import dis
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

KINDS = {"LOAD_NAME": 0, "LOAD_GLOBAL": 0, "STORE_NAME": 1, "STORE_GLOBAL": 1,
         "DELETE_NAME": 2, "DELETE_GLOBAL": 2}


def cpython_names(src: str) -> tuple[tuple[str, ...], ...]:
    """The same question answered from CPython's bytecode: both compilers resolve scopes
    by the same rules, so a name is global (or module-level) in one iff in the other."""
    sets: tuple[set[str], ...] = (set(), set(), set())

    def walk(co) -> None:
        for ins in dis.get_instructions(co):
            if ins.opname in KINDS:
                sets[KINDS[ins.opname]].add(ins.argval)
        for c in co.co_consts:
            if hasattr(c, "co_code"):
                walk(c)

    walk(compile(src, "<gen>", "exec"))
    return tuple(tuple(sorted(s)) for s in sets)


def names(src: str):
    return H.names_mpy(H.parse_mpy(H.mpy_cross(src)))


def test_names_of_a_locus_module():
    src = ("import math\nSEEN = 0\n"
           "def step(ctx):\n    global SEEN\n    SEEN += 1\n"
           "    return [c for c in range(3) if c > LIMIT], len(ctx.mem)\n"
           "def init(ctx):\n    global OLD\n    del OLD\n")
    assert names(src) == (("LIMIT", "SEEN", "len", "range"),
                          ("SEEN", "init", "math", "step"), ("OLD",))


def test_locals_attributes_and_imports_are_not_global_names():
    src = "def f(a):\n    b = a.x\n    del b\n    from math import pi\n    return pi\n"
    assert names(src) == ((), ("f",), ())


def test_module_level_except_as_deletes_its_name():
    # The compiler unbinds the exception name at the end of the handler: a module-level
    # `except E as e` counts as deleting a global (functions use a local instead).
    assert names("try:\n    pass\nexcept E as e:\n    pass\n") == (("E",), ("e",), ("e",))
    assert names("def f():\n    try:\n        pass\n    except E as e:\n        pass\n") == (
        ("E",), ("f",), ())


def test_names_refuses_code_that_does_not_verify():
    mpy = H.parse_mpy(H.mpy_cross("def f():\n    return g\n"))
    child = mpy.root.children[0]
    at = H.opcodes_start(child.code)
    child.code = child.code[:at] + b"\x02" + child.code[at + 1:]  # an opcode the VM lacks
    with pytest.raises(ValueError, match=r"^verify: offset 0x[0-9a-f]+ .*\(rule 1: decode\)$"):
        H.names_mpy(mpy)


def test_dead_code_is_not_read():
    # Bytes after the last RETURN_VALUE decode (rule 1 covers every byte) but never run,
    # and nothing range-checks their operands: a LOAD_GLOBAL there naming qstr 127 of a
    # short table must neither count nor be looked up.
    mpy = H.parse_mpy(H.mpy_cross("def f():\n    return g\n"))
    child = mpy.root.children[0]
    assert len(mpy.qstrs) < 127
    child.code = child.code.rstrip(b"\0") + bytes([0x12, 0x7F, 0x63])
    assert all(v.ok for v in H.verify_mpy(mpy))
    assert H.names_mpy(mpy) == (("g",), ("f",), ())


# ---- random programs ---------------------------------------------------------------

VARS = ["a", "b", "c", "d"]
var = st.sampled_from(VARS)


@st.composite
def expr(draw, depth=0):
    choice = draw(st.integers(0, 5 if depth < 2 else 1))
    if choice == 0:
        return draw(var)
    if choice == 1:
        return str(draw(st.integers(0, 9)))
    if choice == 2:
        return f"{draw(expr(depth + 1))} + {draw(expr(depth + 1))}"
    if choice == 3:
        return f"[q for q in {draw(var)} if q > {draw(expr(depth + 1))}]"
    if choice == 4:
        return f"(lambda p: p + {draw(expr(depth + 1))})"
    return f"len({draw(expr(depth + 1))})"


@st.composite
def statement(draw, indent):
    pad = "    " * indent
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"{pad}{draw(var)} = {draw(expr())}\n"
    if kind == 1:
        return f"{pad}del {draw(var)}\n"
    if kind == 2:
        return f"{pad}for {draw(var)} in {draw(expr())}:\n{pad}    pass\n"
    return f"{pad}{draw(expr())}\n"


@st.composite
def program(draw):
    out = []
    for i in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            out.append(draw(statement(0)))
            continue
        decl = draw(st.lists(var, max_size=2, unique=True))
        body = [f"    global {', '.join(decl)}\n"] if decl else []
        body += [draw(statement(1)) for _ in range(draw(st.integers(0, 3)))]
        body.append(f"    return {draw(expr())}\n")
        out.append(f"def f{i}(x):\n" + "".join(body))
    return "".join(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program())
def test_names_agree_with_cpython(src):
    assert names(src) == cpython_names(src), src


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_names_on_mutated_code_answers_or_refuses(data):
    """Arbitrary bytes in a function: names either answers with names from the module's
    qstr table or raises ValueError with a verifier message; never anything else."""
    mpy = H.parse_mpy(H.mpy_cross("X = 1\ndef f(a):\n    global Y\n    Y = a + X\n"
                                  "    del Z\n    return [b for b in a]\n"))
    fns = [mpy.root, *mpy.root.children]
    target = data.draw(st.sampled_from(fns))
    code = bytearray(target.code)
    for _ in range(data.draw(st.integers(1, 4))):
        code[data.draw(st.integers(0, len(code) - 1))] = data.draw(st.integers(0, 255))
    target.code = bytes(code)
    try:
        out = H.names_mpy(mpy)
    except ValueError as e:
        assert str(e).startswith("verify: offset "), e
        return
    assert all(n in mpy.qstrs for group in out for n in group)


# ---- what vm/patches/0002 makes safe under the locus profile -------------------------

@pytest.mark.parametrize("src", [
    "from math import *\n",
    "class A:\n    def go(self):\n        return 1\n"
    "class B(A):\n    def go(self):\n        return super().go()\n",
])
def test_locus_allows_import_star_and_super_methods(src):
    verdicts = H.verify_mpy(H.parse_mpy(H.mpy_cross(src)), "locus")
    assert all(v.ok for v in verdicts), [v.msg for v in verdicts]
