# SPDX-License-Identifier: MIT
"""Capability profiles of the bytecode verifier: hand-written hostile functions are
refused with a message naming the rule, offset, opcode and name; benign twins pass."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "vm" / "verifier" / "host"))
import vrf_host as H  # noqa: E402

# (hostile source, opcode and name in the refusal, benign twin)
PAIRS = [
    ("def f():\n    return machine.reset()\n", "LOAD_GLOBAL 'machine'",
     "def f():\n    return math.sqrt(2)\n"),
    ("import machine\n", "IMPORT_NAME 'machine'", "import math\n"),
    ("from kernel import poweroff\n", "IMPORT_NAME 'kernel'", "from math import pi\n"),
    ("import os.path\n", "IMPORT_NAME 'os.path'", "import struct\n"),
    # Not pure enough for a Locus: sleep stalls the mesh, random is one shared state,
    # re backtracks in C without a budget hook.
    ("import time\n", "IMPORT_NAME 'time'", "import math\n"),
    ("import random\n", "IMPORT_NAME 'random'", "import heapq\n"),
    ("import re\n", "IMPORT_NAME 're'", "import json\n"),
    ("from math import _secret\n", "IMPORT_FROM '_secret'", "from math import sqrt\n"),
    ("def f(g):\n    return g.__globals__\n", "LOAD_ATTR '__globals__'",
     "def f(g):\n    return g.name\n"),
    ("def f(x):\n    return x.__class__.__bases__[0].__subclasses__()\n",
     "LOAD_ATTR '__class__'", "def f(x):\n    return x.real.imag\n"),
    ("def f(x):\n    x.__dict__ = {}\n", "STORE_ATTR '__dict__'",
     "def f(x):\n    x.data = {}\n"),
    ("def f(x):\n    return getattr(x, 'y')\n", "LOAD_GLOBAL 'getattr'",
     "def f(x):\n    return len(x)\n"),
    ("def f():\n    return eval('1+1')\n", "LOAD_GLOBAL 'eval'",
     "def f():\n    return abs(-2)\n"),
    ("def f():\n    def g():\n        return __import__('machine')\n    return g\n",
     "LOAD_GLOBAL '__import__'", "def f():\n    def g():\n        return 1\n    return g\n"),
    ("class C:\n    def m(self):\n        return self.__class__\n", "LOAD_ATTR '__class__'",
     "class C:\n    def __init__(self):\n        self.x = 1\n"),
    # Every attribute starting with '_' (the ctx object's private fields), not only
    # dunders, and no exception for __init__ (re-running a constructor on a live object).
    ("class C(B):\n    def __init__(self):\n        super().__init__()\n",
     "LOAD_SUPER_METHOD '__init__'",
     "class C(B):\n    def __init__(self):\n        super().setup()\n"),
    ("def f(c):\n    return c._grid\n", "LOAD_ATTR '_grid'", "def f(c):\n    return c.grid\n"),
    ("def f(c):\n    c._tick = 0\n", "STORE_ATTR '_tick'", "def f(c):\n    c.tick = 0\n"),
    ("def f(c):\n    del c._caps\n", "STORE_ATTR '_caps'", "def f(c):\n    del c.caps\n"),
    ("def f(c):\n    return c._audit(1)\n", "LOAD_METHOD '_audit'",
     "def f(c):\n    return c.audit(1)\n"),
    ("def f(c):\n    return c.__init__\n", "LOAD_ATTR '__init__'",
     "def f(c):\n    return c.init\n"),
    # async-with handlers trust the global BaseException to be the builtin one
    ("BaseException = ValueError\n", "STORE_NAME 'BaseException'",
     "E = BaseException\n"),
    ("def f():\n    global BaseException\n    BaseException = 1\n",
     "STORE_GLOBAL 'BaseException'", "def f():\n    return BaseException\n"),
]

MSG = re.compile(r"^verify: offset 0x[0-9a-f]+ (\S+)(?: (\S+))? (.*) \(rule (\d): (\w+)\)$")


def _verdicts(src, prof):
    return H.verify_mpy(H.parse_mpy(H.mpy_cross(src)), prof)


@pytest.mark.parametrize("hostile,what,benign", PAIRS)
def test_hostile_refused_benign_passes(hostile, what, benign):
    bad = [v for v in _verdicts(hostile, "locus") if not v.ok]
    assert len(bad) == 1, [v.msg for v in _verdicts(hostile, "locus")]
    msg = bad[0].msg
    assert what in msg, msg
    assert "profile 'locus'" in msg, msg
    m = MSG.match(msg)
    assert m and m.group(5) == "profile" and m.group(4) == "7", msg
    # The same code is structurally fine: the trusted profile accepts it.
    assert all(v.ok for v in _verdicts(hostile, "trusted"))
    assert all(v.ok for v in _verdicts(benign, "locus")), [v.msg for v in
                                                         _verdicts(benign, "locus")]


def test_message_names_the_offset_of_the_instruction():
    src = "def f():\n    return machine\n"
    mpy = H.parse_mpy(H.mpy_cross(src))
    child = mpy.root.children[0]
    v, _ = H.verify_code(child.code, mpy.qstrs, mpy.n_obj, 0, prof="locus")
    off = int(re.search(r"offset (0x[0-9a-f]+)", v.msg).group(1), 16)
    assert child.code[off] == 0x12  # LOAD_GLOBAL
    assert v.msg.startswith(f"verify: offset {off:#x} LOAD_GLOBAL 'machine' not permitted "
                            "by profile 'locus'")


def test_unknown_profile_is_an_error():
    with pytest.raises(KeyError):
        H.profile("root")
