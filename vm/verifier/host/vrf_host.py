# SPDX-License-Identifier: MIT
"""The bytecode verifier (vm/verifier/*.c) built for the host through cffi, a reader for
MicroPython 1.25.0 .mpy files, and helpers to compile Python with the tree's mpy-cross."""

from __future__ import annotations

import contextlib
import importlib.util
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))  # run as a file: `tools` importable
from tools.build import cffihost  # noqa: E402

VRF = ROOT / "vm" / "verifier"
MPY_DIR = ROOT / "build" / "micropython-1.25.0"
OUT = ROOT / "build" / "host" / "verifier"
MPY_CROSS = ROOT / "build" / "port" / "mpy-cross" / "mpy-cross"

RULES = ["ok", "decode", "prelude", "flow", "stack", "block", "interrupt", "profile",
         "limit"]

_libs: dict[tuple[str, ...], object] = {}
_defines: tuple[str, ...] = ()


def sources() -> list[Path]:
    return sorted(VRF.glob("*.c")) + [VRF / "host" / "vrf_table.c"]


@contextlib.contextmanager
def variant(*defines: str):
    """Runs the helpers below on a build with extra -D defines (e.g. the rewrite cache
    opcodes as if the VM had them: LOCIOS_BC_CACHE_IN_VM=1), then back."""
    global _defines
    old, _defines = _defines, tuple(defines)
    try:
        yield lib()
    finally:
        _defines = old


def lib():
    """The cffi module (.ffi, .lib), compiled once per source hash (and set of
    variant() defines) under build/host; declarations from verify.h and the host
    table's vrf_table.h."""
    if _defines not in _libs:
        _libs[_defines] = cffihost.build(
            "verifier", sources(), [VRF / "verify.h", VRF / "host" / "vrf_table.h"],
            defines=_defines)
    return _libs[_defines]


# ---- .mpy files (py/persistentcode.c, version 6) --------------------------------------

def _static_qstrs() -> list[str]:
    sys.path.insert(0, str(MPY_DIR / "py"))
    try:
        import makeqstrdata
    finally:
        sys.path.pop(0)
    # Index 0 is MP_QSTRnull; static qstrs are numbered from 1 (tools/mpy-tool.py).
    return [""] + list(makeqstrdata.static_qstr_list)


_STATIC: list[str] | None = None


class MpyError(ValueError):
    pass


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise MpyError("truncated .mpy")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def uint(self) -> int:
        v = 0
        while True:
            b = self.byte()
            v = (v << 7) | (b & 0x7F)
            if not b & 0x80:
                return v

    def bytes(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise MpyError("truncated .mpy")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b


@dataclass
class Made:
    """How a parent makes a child (vrf_child_t); status 0 made, -1 never, -2 two ways."""
    status: int
    n_free: int = 0
    n_defaults: int = -1
    kw_defaults: int = -1
    class_body: bool = False


ROOT_MADE = Made(0)


@dataclass
class RawCode:
    kind: int
    code: bytes
    children: list[RawCode] = field(default_factory=list)


@dataclass
class Mpy:
    qstrs: list[str]
    n_obj: int
    root: RawCode
    obj_kinds: list[int] = field(default_factory=list)  # 1 + n: tuple of n (VRF_OBJ_TUPLE)


def _skip_obj(r: _Reader) -> int:
    """Skips one constant; returns its VRF_OBJ_* kind (1 + n for a tuple of n)."""
    t = r.byte()
    if t <= 4:   # fun table, None, False, True, Ellipsis
        return 0
    n = r.uint()
    if t == 10:  # tuple
        for _ in range(n):
            _skip_obj(r)
        return 1 + n if n <= 64 else 0
    r.bytes(n)
    if t in (5, 6):  # str, bytes: NUL terminated
        r.byte()
    return 0


def _raw_code(r: _Reader, depth: int = 0) -> RawCode:
    if depth > 64:
        raise MpyError("raw code nesting too deep")
    kind_len = r.uint()
    kind, has_children, n = kind_len & 3, kind_len & 4, kind_len >> 3
    if kind != 0:
        raise MpyError("native code in .mpy")
    rc = RawCode(kind, r.bytes(n))
    if has_children:
        for _ in range(r.uint()):
            rc.children.append(_raw_code(r, depth + 1))
    return rc


def parse_mpy(data: bytes) -> Mpy:
    global _STATIC
    if _STATIC is None:
        _STATIC = _static_qstrs()
    r = _Reader(data)
    if r.bytes(4)[:2] != b"M\x06":
        raise MpyError("not a version 6 .mpy")
    n_qstr, n_obj = r.uint(), r.uint()
    qstrs = []
    for _ in range(n_qstr):
        v = r.uint()
        if v & 1:
            qstrs.append(_STATIC[v >> 1])
        else:
            qstrs.append(r.bytes(v >> 1).decode("utf-8", "replace"))
            r.byte()
    kinds = [_skip_obj(r) for _ in range(n_obj)]
    return Mpy(qstrs, n_obj, _raw_code(r), kinds)


def size_info(code: bytes, p: int) -> tuple[int, int, int]:
    """(n_info, n_cell, offset after them) of the prelude's size var-uints at p."""
    n_info = n_cell = shift = 0
    while True:
        z = code[p]
        p += 1
        n_cell |= (z & 1) << shift
        n_info |= ((z & 0x7E) >> 1) << (6 * shift)
        shift += 1
        if not z & 0x80:
            break
    return n_info, n_cell, p


def opcodes_start(code: bytes) -> int:
    """Offset of a bytecode function's first opcode: past the signature, the size
    (n_info, n_cell) var-uints and the info and cell sections."""
    p = 0
    while code[p] & 0x80:
        p += 1
    n_info, n_cell, p = size_info(code, p + 1)
    return p + n_info + n_cell


def insn_size(code: bytes, p: int) -> int:
    """Length of the instruction at code[p], by MicroPython 1.25.0's operand formats
    (py/bc0.h: MP_BC_FORMAT, MP_BC_MASK_EXTRA_BYTE), decoded here apart from the C."""
    op = code[p]
    fmt = (0x3A4 >> (2 * (op >> 4))) & 3
    q = p + 1
    if fmt in (1, 2):
        while code[q] & 0x80:
            q += 1
        q += 1
    elif fmt == 3:
        q += 2 if code[q] & 0x80 else 1
    if (op & 0x9E) == 0:
        q += 1
    return q - p


def mpy_cross(source: str | Path, name: str = "<src>.py") -> bytes:
    """Compiles Python source text (or a file) to .mpy bytes with the tree's mpy-cross."""
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(source, Path):
            src = source
        else:
            src = Path(tmp) / Path(name).name
            src.write_text(source)
        out = Path(tmp) / "out.mpy"
        subprocess.run([str(MPY_CROSS), "-o", str(out), "-s", Path(name).name, str(src)],
                       check=True, capture_output=True)
        return out.read_bytes()


def generated_mpy(source: str) -> Mpy | None:
    """The parsed .mpy of a generated program, or None when the compiler rejects it (a
    property test then has nothing to check)."""
    try:
        data = mpy_cross(source)
    except Exception:  # noqa: BLE001 - whatever mpy-cross refuses
        return None
    return parse_mpy(data)


# ---- Verification ---------------------------------------------------------------------

@dataclass
class Verdict:
    path: str
    rule: int
    msg: str
    max_depth: int
    max_blocks: int
    n_state: int
    n_exc_stack: int
    n_locals: int
    steps: int
    n_insns: int

    @property
    def ok(self) -> bool:
        return self.rule == 0


class Table:
    """A qstr table kept alive for C, with the resolver the verifier calls."""

    def __init__(self, qstrs: list[str], obj_kinds: list[int] | None = None):
        m = lib()
        self._bufs = [m.ffi.new("char[]", q.encode()) for q in qstrs]
        self.strs = m.ffi.new("const char *[]", self._bufs or [m.ffi.NULL])
        self.lens = m.ffi.new("size_t[]", [len(q.encode()) for q in qstrs] or [0])
        kinds = obj_kinds or []
        self.kinds = m.ffi.new("uint8_t[]", kinds or [0])
        self.table = m.ffi.new("vrf_table_t *", {"strs": self.strs, "lens": self.lens,
                                                  "n": len(qstrs), "obj_kinds": self.kinds,
                                                  "n_obj": len(kinds)})


def make_fn(code: bytes, table: Table | None, n_qstr: int, n_obj: int, n_children: int,
            made: Made = ROOT_MADE, bound: bool = False):
    """A vrf_fn_t for code; returns (fn, keepalive)."""
    m = lib()
    buf = m.ffi.new("uint8_t[]", code or b"\0")
    fn = m.ffi.new("vrf_fn_t *")
    fn.code, fn.len = buf, len(code)
    fn.n_qstr, fn.n_obj, fn.n_children, fn.n_free = n_qstr, n_obj, n_children, made.n_free
    fn.len_is_bound = bound
    fn.class_body = made.class_body
    fn.n_defaults, fn.kw_defaults = made.n_defaults, made.kw_defaults
    if table is not None:
        fn.qstr = m.lib.vrf_table_qstr
        fn.obj_kind = m.lib.vrf_table_obj_kind
        fn.ctx = table.table
    return fn, buf


def profile(name: str):
    p = lib().lib.vrf_profile_find(name.encode())
    if p == lib().ffi.NULL:
        raise KeyError(name)
    return p


def verify_code(code: bytes, qstrs: list[str] | None = None, n_obj: int = 0,
                n_children: int = 0, n_free: int = 0, prof: str = "trusted",
                table: Table | None = None, bound: bool = False,
                made: Made | None = None,
                qstr_ops: list[tuple[int, int]] | None = None) -> tuple[Verdict, list[Made]]:
    """Verifies one function (made by its parent as made, else a root with n_free);
    returns the verdict and how it makes each child. With qstr_ops, a verified
    function's (opcode, qstr index) operands are appended to it (vrf_next_qstr)."""
    m = lib()
    if table is None and qstrs is not None:
        table = Table(qstrs)
    n_qstr = len(qstrs) if qstrs is not None else 0
    made = made or Made(0, n_free)
    fn, _keep = make_fn(code, table, n_qstr, n_obj, n_children, made, bound)
    res = m.ffi.new("vrf_result_t *")
    rule = m.lib.vrf_verify_fn(fn, profile(prof), res)
    frees = []
    if rule == 0 and qstr_ops is not None:
        off, op, q = m.ffi.new("uint32_t *"), m.ffi.new("int *"), m.ffi.new("uint32_t *")
        while m.lib.vrf_next_qstr(fn, res, off, op, q):
            qstr_ops.append((op[0], q[0]))
    if rule == 0:
        ch = m.ffi.new("vrf_child_t *")
        for i in range(n_children):
            st = m.lib.vrf_child(i, ch)
            frees.append(Made(st, ch.n_free, ch.n_defaults, ch.kw_defaults,
                              bool(ch.class_body)) if st == 0 else Made(st))
    v = Verdict("", rule, m.ffi.string(res.msg).decode(), res.max_depth, res.max_blocks,
                res.n_state, res.n_exc_stack, res.n_locals, res.steps, res.n_insns)
    return v, frees


def verify_mpy(mpy: Mpy, prof: str = "trusted", pad: bytes = b"",
               qstr_ops: list[tuple[int, int]] | None = None) -> list[Verdict]:
    """Verifies every function of a module, parents first; children get the n_free their
    parent's MAKE_CLOSURE passes. A child its parent never makes (dead code) cannot run
    and is skipped.
    With pad, each function is followed by pad and verified with len as a bound only.
    With qstr_ops, every verified function's (opcode, qstr index) operands go there."""
    table = Table(mpy.qstrs, mpy.obj_kinds)
    out: list[Verdict] = []

    def walk(rc: RawCode, path: str, made: Made) -> None:
        v, frees = verify_code(rc.code + pad, mpy.qstrs, mpy.n_obj, len(rc.children),
                               0, prof, table, bound=bool(pad), made=made,
                               qstr_ops=qstr_ops)
        v.path = path
        out.append(v)
        if not v.ok:
            return
        for i, child in enumerate(rc.children):
            if frees[i].status == -1:
                continue  # never made by its parent: it cannot run, nothing to prove
            if frees[i].status < 0:
                out.append(Verdict(f"{path}/{i}", 4, "verify: child made in two different "
                                   "ways", 0, 0, 0, 0, 0, 0, 0))
                continue
            walk(child, f"{path}/{i}", frees[i])

    walk(mpy.root, "<module>", ROOT_MADE)
    return out


# Opcodes vm.names() sorts into loaded, stored and deleted global names (py/bc0.h).
NAME_OPS = {0x11: 0, 0x12: 0, 0x16: 1, 0x17: 1, 0x19: 2, 0x1A: 2}


def names_mpy(mpy: Mpy) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """What vm.names() answers for a module: (loaded, stored, deleted) global names
    over every function, sorted; ValueError with the verifier's message when the code
    does not verify structurally (profile 'trusted')."""
    ops: list[tuple[int, int]] = []
    for v in verify_mpy(mpy, "trusted", qstr_ops=ops):
        if not v.ok:
            raise ValueError(v.msg)
    sets: tuple[set[str], set[str], set[str]] = (set(), set(), set())
    for op, q in ops:
        if op in NAME_OPS:
            sets[NAME_OPS[op]].add(mpy.qstrs[q])
    return tuple(tuple(sorted(x)) for x in sets)  # type: ignore[return-value]


def corpus_records(mpy: Mpy) -> bytes:
    """The module's functions as fuzz/bench corpus records (vm/verifier/host/vrf_fuzz.c):
    u32 len, n_qstr, n_obj, n_children, n_free, class_body, n_defaults (i32, -1 not
    known), kw_defaults (i32), then the code; each child as its parent makes it, dead
    children left out."""
    out = bytearray()

    def walk(rc: RawCode, made: Made) -> None:
        out.extend(struct.pack("<6I2i", len(rc.code), len(mpy.qstrs), mpy.n_obj,
                               len(rc.children), made.n_free, made.class_body,
                               made.n_defaults, made.kw_defaults) + rc.code)
        v, frees = verify_code(rc.code, mpy.qstrs, mpy.n_obj, len(rc.children), made=made)
        for i, child in enumerate(rc.children):
            if v.ok and frees[i].status == 0:
                walk(child, frees[i])

    walk(mpy.root, ROOT_MADE)
    return bytes(out)


def replace(new: bytes, orig: bytes, mpy: Mpy, n_children: int, prof: str = "trusted",
            n_free: int = 0, made: Made | None = None) -> Verdict:
    """vrf_verify_replacement: new (which may hold the rewriter's head opcodes) in the
    place of orig, made by its parent as made (else a root with n_free cells)."""
    m = lib()
    made = made or Made(0, n_free)
    table = Table(mpy.qstrs, mpy.obj_kinds)
    fn_new, k1 = make_fn(new, table, len(mpy.qstrs), mpy.n_obj, n_children, made)
    fn_old, k2 = make_fn(orig, table, len(mpy.qstrs), mpy.n_obj, n_children, made)
    res = m.ffi.new("vrf_result_t *")
    rule = m.lib.vrf_verify_replacement(fn_new, fn_old, profile(prof), res)
    return Verdict("", rule, m.ffi.string(res.msg).decode(), res.max_depth,
                   res.max_blocks, res.n_state, res.n_exc_stack, res.n_locals, res.steps,
                   res.n_insns)


def functions(mpy: Mpy) -> list[tuple[str, RawCode, Made]]:
    """Every function of a module that verifies ('trusted') and that its parent makes,
    parents first, with how its parent makes it: what a replacement is checked against."""
    out: list[tuple[str, RawCode, Made]] = []

    def walk(rc: RawCode, path: str, made: Made) -> None:
        v, frees = verify_code(rc.code, mpy.qstrs, mpy.n_obj, len(rc.children),
                               made=made, table=Table(mpy.qstrs, mpy.obj_kinds))
        if not v.ok:
            return
        out.append((path, rc, made))
        for i, child in enumerate(rc.children):
            if frees[i].status == 0:
                walk(child, f"{path}/{i}", frees[i])

    walk(mpy.root, "<module>", ROOT_MADE)
    return out


def load_tool(name: str):
    """Imports one of MicroPython's tools/*.py scripts (names may hold dashes)."""
    path = MPY_DIR / "tools" / name
    spec = importlib.util.spec_from_file_location(name.replace("-", "_")[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
