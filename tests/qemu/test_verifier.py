# SPDX-License-Identifier: MIT
"""The bytecode verifier in the guest (`vm`): every function of the frozen modules
verifies, REPL-compiled code is judged by profile, tampered bytecode is refused."""

from __future__ import annotations

import re

from guestprog import prog

FROZEN = ("asyncio", "asyncio.core", "asyncio.funcs", "asyncio.event", "asyncio.lock",
          "asyncio.stream", "sysinfo", "field", "lo")

WALK = prog("verifier_walk")


def test_frozen_modules_verify(guest):
    guest.paste(WALK)
    imported = guest.run("import " + ", ".join(FROZEN))
    assert "Error" not in imported, imported
    mods = ", ".join(FROZEN)
    out = guest.eval(f"out = []; _ = [vwalk(m, set(), out) for m in ({mods},)]; "
                     "print(len(out), [(o[0], o[2]) for o in out if o[2]])")
    n, bad = out.split(" ", 1)
    assert int(n) > 100 and bad == "[]", out


def test_repl_function_verifies_and_counts_children(guest):
    guest.paste("def outer(a):\n    def inner(b):\n        return a + b\n"
                "    return inner\n")
    assert guest.eval("vm.verify(outer)") == "2"
    assert guest.eval("vm.verify(outer(1))") == "1"  # the closure itself
    guest.paste("def gen(n):\n    for i in range(n):\n        yield i * i\n")
    assert guest.eval("vm.verify(gen), list(gen(3))") == "(1, [0, 1, 4])"


def assert_only_locus_refuses(guest, obj: str, what: str) -> None:
    """vm.check(obj) refuses `what` (opcode and name) under the default profile, 'locus',
    by rule 7, naming the offset; 'trusted' accepts it."""
    msg = guest.eval(f"vm.check({obj})")
    assert re.fullmatch(rf"'verify: offset 0x[0-9a-f]+ {re.escape(what)} not permitted by "
                        r"profile 'locus' \(rule 7: profile\)'", msg.replace('"', "'")), msg
    assert guest.eval(f"print(vm.check({obj}, 'trusted'))") == "None"


def test_profile_refusal_names_rule_offset_opcode_and_name(guest):
    guest.paste("def h():\n    return machine.reset()\n")
    assert_only_locus_refuses(guest, "h", "LOAD_GLOBAL 'machine'")
    err = guest.run("vm.verify(h)")
    assert "ValueError: verify: offset" in err and "'machine'" in err, err


def test_tampered_function_is_refused(guest):
    guest.paste("def f(a, b):\n    return a + b\n")
    assert guest.eval("print(vm.check(f, 'locus'))") == "None"
    # n_state cut to 1: the two arguments no longer fit.
    msg = guest.eval("b = bytearray(vm.bytecode(f)); b[0] &= 0x87; vm.check(f, 'trusted', b)")
    assert "n_state" in msg and "rule 2: prelude" in msg, msg
    # RETURN_VALUE turned into an opcode the VM lacks.
    msg = guest.eval("b = bytearray(vm.bytecode(f)); b[b.index(b'\\x63')] = 0x02; "
                     "vm.check(f, 'trusted', b)")
    assert "not implemented by the VM" in msg and "rule 1: decode" in msg, msg


def test_replacements(guest):
    # One paste: one module context, so the two share a qstr table.
    guest.paste("def g():\n    return x\ndef k():\n    return machine\n")
    assert guest.eval("print(vm.check_replacement(g, vm.bytecode(g)))") == "None"
    # g's code naming k's global: same shape, a name g never used.
    msg = guest.eval("b = bytearray(vm.bytecode(g)); c = vm.bytecode(k); "
                     "b[b.index(b'\\x12') + 1] = c[c.index(b'\\x12') + 1]; "
                     "vm.check_replacement(g, b, 'trusted')")
    assert "the original does not" in msg and "rule 7: profile" in msg, msg


def test_not_bytecode_is_a_type_error(guest):
    assert "TypeError" in guest.run("vm.verify(print)")


LOCUS_SRC = prog("locus_module")


def test_names_and_verify_of_a_compiled_module(guest):
    # A code object as compile() returns it, the form the Locus runtime verifies.
    guest.paste(f"src = {LOCUS_SRC!r}\nco = compile(src, 'locus', 'exec')")
    assert guest.eval("vm.names(co)") == (
        "(('LIMIT', 'SEEN', 'len', 'range'), ('SEEN', 'init', 'step'), ('OLD',))")
    assert guest.eval("vm.verify(co, 'locus')") == "4"  # module, step, listcomp, init
    assert guest.eval("vm.stats(co, 'trusted')[0], vm.check(co)") == "(4, None)"
    assert "TypeError" in guest.run("vm.names(len)")


def test_private_attribute_refused_by_locus(guest):
    guest.paste("pco = compile('def f(ctx):\\n    return ctx._caps\\n', 'p', 'exec')")
    assert_only_locus_refuses(guest, "pco", "LOAD_ATTR '_caps'")
    err = guest.run("vm.names(pco), vm.verify(pco)")
    assert "ValueError: verify: offset" in err and "'_caps'" in err, err


def test_patched_vm_checks_super_and_import_star_operands(guest):
    # vm/patches/0002: wrong operands are a TypeError, not a VM crash.
    guest.paste("class A:\n    def go(self):\n        return 1\n"
                "class B(A):\n    def go(self):\n        return super().go()\n")
    assert guest.eval("B().go()") == "1"
    err = guest.run("B.go(5)")
    assert "TypeError: super() argument 2 must be an instance or subtype" in err, err
    assert guest.eval("print(vm.check(B.go, 'locus'))") == "None"
    guest.paste("import builtins\nreal_import = builtins.__import__\n"
                "builtins.__import__ = lambda *a: 5\n"
                "try:\n    exec('from math import *')\nexcept TypeError as e:\n"
                "    star = repr(e)\nfinally:\n    builtins.__import__ = real_import\n")
    assert guest.eval("star") == "\"TypeError('import * needs a module',)\"", guest.eval("star")
