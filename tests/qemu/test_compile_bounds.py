# SPDX-License-Identifier: MIT
"""Compiling is bounded (issue 22, item 3; vm/patches/0013): the parser folds an integer
expression only when its operands and result fit in 512 bits, so source such as
`2 ** 10 ** 8` compiles at once and its work is left to run time, under the budgets.
Ordinary constants are still folded. One guest for the module."""

from __future__ import annotations

import math
import time

from guestprog import prog

from tools.guest.guestconsole import Guest

SETUP = prog("sandbox")
ask = Guest.ask

# Each of these made the parser compute for ever (or fill the heap) before the patch.
BOMBS = ["2 ** 10 ** 8", "10 ** 10 ** 6", "1 << 10 ** 9", "(1 << 400) * (1 << 400)",
         "-(7 ** 3 ** 20)", "'a' * 10 ** 9", "(3 ** 300) ** 300 + 1"]


def test_huge_folds_compile_at_once_from_the_repl(g):
    for expr in BOMBS:
        t0 = time.monotonic()
        # A lambda is compiled, not run: only the parser's folding could take time.
        assert g.eval(f"f = lambda: {expr}", timeout=20) == "", expr
        assert time.monotonic() - t0 < 5, expr
        # compile() is the path a Locus's source takes.
        assert ask(g, f"type(compile({expr!r}, 's', 'eval')).__name__", timeout=20) == "code"
    assert ask(g, "1 + 1") == 2


def test_ordinary_constants_are_still_folded(g):
    g.eval("import vm")
    # A folded expression compiles to the same bytecode as its value written out.
    for expr, value in [("(1 << 64) - 1", (1 << 64) - 1), ("0xff << 8 | 0x0f", 0xff0f),
                        ("3 ** 40", 3 ** 40), ("-2 ** 63", -2 ** 63), ("2 ** 256", 2 ** 256),
                        ("1 << 511", 1 << 511),
                        ("~(1 << 300) // 7 % 1000", ~(1 << 300) // 7 % 1000)]:
        assert ask(g, f"vm.bytecode(lambda: {expr}) == vm.bytecode(lambda: {value})"), expr
        assert ask(g, f"({expr}) == {value}"), expr
    # Past the bound the operation stays in the code, and its value is still right.
    assert ask(g, "vm.bytecode(lambda: 2 ** 1000) == vm.bytecode(lambda: 7)") is False
    # (the bytecode is padded with zeros: compare what comes before)
    assert ask(g, "len(bytes(vm.bytecode(lambda: 2 ** 1000)).rstrip(b'\\0')) > "
                  "len(bytes(vm.bytecode(lambda: 7)).rstrip(b'\\0'))")
    assert ask(g, "2 ** 1000 == int('1' + '0' * 1000, 2)")
    assert ask(g, "len(str(10 ** 10 ** 3))") == 1001
    assert ask(g, "(1 << 600) >> 599") == 2


def test_a_locus_with_a_huge_constant_is_stopped_by_its_budget(g):
    # Before the patch H.spawn never returned: the parser folded at spawn, under no budget.
    g.paste(r"""
import time
C = new()
w = C.spawn(man('walker', WALKER, caps=[{'flavours': ['trail'], 'ops': ['deposit']}]))
t0 = time.ticks_ms()
top = C.spawn(man('top-bomb', 'X = 2 ** 10 ** 8\ndef step(ctx):\n    pass\n'))
inner = C.spawn(man('step-bomb', 'def step(ctx):\n    ctx.mem["x"] = 1 << 10 ** 9\n'))
pw = C.spawn(man('pow-bomb', 'def step(ctx):\n    ctx.mem["x"] = 10 ** 10 ** 6\n'))
SPAWN_MS = time.ticks_diff(time.ticks_ms(), t0)
ESC = rounds(C, 20)
""", timeout=120)
    assert ask(g, "ESC") == []
    assert ask(g, "SPAWN_MS") < 5000
    # The walker stepped every round beside them.
    assert ask(g, "C.info(w)['state']") == "live"
    assert ask(g, "C.info(w)['steps']") >= 20
    for lid in ("top", "inner", "pw"):
        assert ask(g, f"C.info({lid})['state']") == "retired", lid
        assert "allocation budget exhausted" in ask(g, f"C.info({lid})['error']"), lid
    assert ask(g, "6 * 7") == 42


def test_a_big_power_beside_a_larger_allocation_budget(g):
    # 7 ** 20000 (56,150 bits) is no longer folded: a Locus computes it at run time,
    # within an allocation budget that has room for it, and a cycles budget too: str()
    # of it takes about 0.3 G cycles under -icount, past the default (vm/patches/0014
    # polls the budget inside it).
    g.paste(r"""
B = new()
SRC = 'def step(ctx):\n    ctx.mem["n"] = len(str(7 ** 20000))\n'
big = B.spawn(man('big', SRC, budget={'ops': 2000, 'alloc': 262144, 'cycles': 10 ** 10}))
short = B.spawn(man('short', SRC, budget={'ops': 2000, 'alloc': 262144}))
ESC = rounds(B, 2)
""", timeout=120)
    assert ask(g, "ESC") == []
    assert ask(g, "B.info(big)['error'] is None")
    assert ask(g, "B.info(big)['state']") == "live"
    assert ask(g, "B.info(big)['steps']") == 2
    assert ask(g, "B.loci[big].mem['n']") == int(20000 * math.log10(7)) + 1  # digits
    assert ask(g, "B.info(short)['error']").startswith("cycle budget exhausted")


# vm/patches/0015: source nested 100,000 deep, made in the guest. Before the patch the
# lists ran the C stack into its guard page (the machine stopped), the lambdas and the
# tuple target never finished, and 20,000 brackets took half a minute.
DEEP = [("'x = ' + '[' * N + ']' * N", "RuntimeError"),
        ("'x = ' + '(' * N + '1' + ')' * N", "ok"),
        ("'(' * N + 'a,' + '),' * (N - 1) + ') = 1'", "RuntimeError"),
        ("'x = ' + 'lambda: ' * N + '1'", "SyntaxError"),
        ("'x = ' + 'f(' * N + ')' * N", "RuntimeError"),
        ("'x = ' + '1 if x else (' * N + '1' + ')' * N", "RuntimeError"),
        ("'x = ' + 'not ' * N + '1'", "ok")]
TRY_COMPILE = """
def try_compile(src):
    try:
        compile(src, 's', 'exec')
        return 'ok'
    except Exception as e:
        return type(e).__name__
"""


def test_deeply_nested_source_compiles_or_fails_cleanly_from_the_repl(g):
    g.paste(TRY_COMPILE)
    for make, want in DEEP:
        got = ask(g, "try_compile({})".format(make.replace("N", "100000")), timeout=60)
        assert got == want, make
    # Ordinary nesting is untouched.
    assert ask(g, "try_compile('x = ' + '[' * 150 + ']' * 150)") == "ok"
    assert ask(g, "try_compile('x = ' + 'lambda: ' * 150 + '1')") == "ok"
    assert ask(g, "6 * 7") == 42


def test_a_locus_with_deep_or_long_source_is_refused_and_the_mesh_goes_on(g):
    g.paste(r"""
import locus_sandbox
D = new()
w = D.spawn(man('walker', WALKER, caps=[{'flavours': ['trail'], 'ops': ['deposit']}]))
REFUSED = []
for src in ('X = ' + '[' * 16000 + ']' * 16000 + '\ndef step(ctx):\n    pass\n',
            'X = ' + 'lambda: ' * 300 + '1\ndef step(ctx):\n    pass\n',
            '#' * (locus_sandbox.SOURCE_MAX + 1) + '\ndef step(ctx):\n    pass\n'):
    try:
        D.spawn(man('deep', src))
        REFUSED.append(None)
    except ValueError as e:
        REFUSED.append(str(e))
KID = {'name': 'kid', 'code': 'def step(ctx):\n    pass\nX = ' + 'lambda: ' * 300 + '1\n',
       'caps': [{'flavours': ['trail'], 'ops': ['deposit']}],
       'budget': {'ops': 500, 'alloc': 4096}, 'attend': {'flavour': 'trail', 'at': (2, 2)}}
par = D.spawn(man('parent', SPAWNER, args={'kid': KID},
                  caps=[{'flavours': ['trail'], 'ops': ['deposit'], 'spawn': True}],
                  budget={'ops': 2000, 'alloc': 262144}))
ESC = rounds(D, 5)
""", timeout=180)
    refused = ask(g, "REFUSED")
    # Nesting as deep as SOURCE_MAX allows compiles (the compiler is linear in it), and
    # the verifier refuses what it made (too large for its limits).
    assert refused[0].startswith("verify:"), refused
    assert "compile: SyntaxError: too many nested scopes" in refused[1], refused
    assert "source of" in refused[2] and "at most" in refused[2], refused
    assert ask(g, "ESC") == []
    assert ask(g, "D.info(w)['state']") == "live"
    assert ask(g, "D.info(w)['steps']") >= 5
    # The parent asked for a child whose source does not compile: a refusal, not a raise
    # out of round().
    # (compiling the child is charged to the parent's step: with a 16 KiB allocation
    # budget the parent itself is stopped)
    assert ask(g, "len(refusals(D, par))") >= 1, ask(g, "D.info(par)")
    assert ask(g, "len(D.loci)") == 2       # walker and parent: no child was made
    assert ask(g, "6 * 7") == 42
