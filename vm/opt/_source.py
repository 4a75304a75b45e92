# SPDX-License-Identifier: MIT
# A function's def as source text, for its native twin: found in the texts the lexer
# kept (vm/opt/mod/rw_source.c) or in the function's file, and compiled on its own.
import _prof
import _rw

import vm

from . import _journal


def _native_type():
    # The type of a @micropython.native function ("<twin>" keeps the text unkept).
    ns = {}
    exec(compile("@micropython.native\ndef f():\n    pass\n", "<twin>", "exec"), ns)
    return type(ns["f"])


NATIVE = _native_type()


def is_native_code(fn):
    # Whether fn is a native function, also while _rw records or promotes it (its type is
    # then one of _rw's).
    try:
        _rw.native_file(fn)
        return True
    except TypeError:
        return False


def _gen():
    yield


GENERATOR_FUNCTION = type(_gen)


def is_generator(fn):
    return type(fn) is GENERATOR_FUNCTION


def past_literal(src, i):
    """Where scanning src goes on from i: past a string literal or a comment that starts
    there, else i itself."""
    c = src[i]
    if c in "'\"":
        q = src[i:i + 3] if src[i:i + 3] in ("'''", '\"\"\"') else c
        j = src.find(q, i + len(q))
        return len(src) if j < 0 else j + len(q)
    if c == "#":
        j = src.find("\n", i)
        return len(src) if j < 0 else j
    return i


def has_generator_expression(src):
    # Whether a `for` in src sits directly inside parentheses: a generator expression
    # (a comprehension in [] or {} is a plain call). String literals are skipped.
    stack = []
    i, n = 0, len(src)
    while i < n:
        j = past_literal(src, i)
        if j != i:
            i = j
            continue
        c = src[i]
        if c in "([{":
            stack.append(c)
        elif c in ")]}":
            if stack:
                stack.pop()
        elif (c == "f" and src[i:i + 3] == "for" and stack and stack[-1] == "("
              and (i == 0 or not (src[i - 1].isalpha() or src[i - 1].isdigit()
                                  or src[i - 1] == "_"))
              and (i + 3 >= n or not (src[i + 3].isalpha() or src[i + 3].isdigit()
                                      or src[i + 3] == "_"))):
            return True
        i += 1
    return False


# Functions now running a heap copy of code they did not own (_rw.own): id -> (fn,
# whether the code was frozen); holding fn keeps its id from being reused. Frozen code's
# source is the image's, in the ROM filesystem.
owned = {}
# Where the image's ROM filesystem (port/romfs.c) is mounted: the sources of the frozen
# modules, by the names their code was compiled under (mesh.py, opt/_gates.py, ...).
ROM = "/rom/"


def own(fn):
    """Gives fn a heap copy of its code to be rewritten in when its code is not a heap
    block of its own (frozen, or a .mpy file's left in place: _rw.own). False when the
    code does not decode to a closed end."""
    try:
        frozen = _rw.frozen(fn)
        if _rw.own(fn):
            owned[id(fn)] = (fn, frozen)
    except ValueError:
        return False
    return True


def is_frozen(fn):
    # Whether fn's code came from the image (frozen), copied to the heap since or not.
    if type(fn) is NATIVE:
        return False
    o = owned.get(id(fn))
    if o is not None and o[0] is fn:
        return o[1]
    try:
        return _rw.frozen(fn)
    except TypeError:
        return False


def where(fn):
    # (file, line of fn's first instruction). Native code has no line table: its def is
    # looked for in the whole text it was compiled from (_native_def_lines).
    if type(fn) is NATIVE:
        return _rw.native_file(fn), 1 << 30
    return _prof.where(fn, 0)[1:3]


def _texts(file, frozen=False):
    # (lines) of each text of this file name: the kept ones, newest first, then the file.
    # Frozen code's only text is the image's own, in the ROM filesystem.
    if frozen:
        file = ROM + file
    for src_name, data in ([] if frozen else _rw.sources()) + [(file, None)]:
        if src_name != file:
            continue
        if data is None:
            # Last: a module imported from a file is read again (if it changed since,
            # gate 1's name check and gate 2 catch the difference).
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except (OSError, TypeError):
                return
        lines = _lines(data)
        if lines is not None:
            yield lines


def _lines(data):
    try:
        # (Paste mode hands the lexer "\r" line ends, as a terminal sends them.)
        return data.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    except UnicodeError:
        return None


def _defs(lines, name, line):
    # Indexes of the 'def name(' lines at or before `line`, the last first.
    out = []
    for i in range(min(line, len(lines))):
        t = lines[i].lstrip()
        if t.startswith("def " + name + "(") or t.startswith("def " + name + " ("):
            out.append(i)
    out.reverse()
    return out


def _def_lines(fn):
    # (lines, index of fn's def line) in the source texts the lexer kept (_rw.sources(),
    # newest first), then in fn's file: the last 'def name(' at or before the line of
    # fn's first instruction, in a text of fn's file name. None when none has it.
    if type(fn) is NATIVE:
        return _native_def_lines(fn)
    name = _journal.name(fn)
    file, line = where(fn)
    for lines in _texts(file, is_frozen(fn)):
        found = _defs(lines, name, line)
        if found:
            return lines, found[0]
    return None


def _native_def_lines(fn):
    # Native code keeps no line table, but the port noted which kept text each block of
    # machine code was compiled from (vm/opt/mod/rw_exec.c, rw_source.c): fn's def is the
    # one 'def name(' in that text. None when the text is no longer kept, or holds more
    # than one def of that name (which one compiled to fn is then unknown).
    kept = _rw.source_of(fn)
    if kept is None or kept[0] != _rw.native_file(fn):
        return None
    lines = _lines(kept[1])
    found = _defs(lines, _journal.name(fn), 1 << 30) if lines is not None else ()
    if len(found) != 1:
        return None
    return lines, found[0]


def _indent(ln):
    return len(ln) - len(ln.lstrip())


def def_source(fn):
    """fn's def, dedented: its line and the lines indented deeper. None if not kept."""
    found = _def_lines(fn)
    if found is None:
        return None
    return _cut(*found)


def _cut(lines, at):
    head = lines[at]
    indent = _indent(head)
    out = [head[indent:]]
    for ln in lines[at + 1:]:
        t = ln.strip()
        if t and _indent(ln) <= indent and not t.startswith("#"):
            break
        # A comment indented less than the def (a banner after a method, say) stays a
        # whole comment: cutting the def's indentation off it would cut its text.
        out.append(ln[indent:] if _indent(ln) >= indent else t)
    return "\n".join(out).rstrip() + "\n"


def nested(fn):
    # Whether fn's def sits inside another def: then every call of the outer function
    # makes a new function object from the same code, and a twin promoted for this one
    # object would not reach the next (an in-place rewrite of the shared code does).
    found = _def_lines(fn)
    if found is None:
        return False
    lines, at = found
    indent = _indent(lines[at])
    for ln in reversed(lines[:at]):
        t = ln.strip()
        if not t or t.startswith("#") or _indent(ln) >= indent:
            continue
        indent = _indent(ln)
        if t.startswith(("def ", "async def ")):
            return True
        if indent == 0:
            return False
    return False


def compile_def(fn, src, native, tier=True, count_ops=False, free=(), float_mode=0, inline=()):
    # The function a def compiles to in a copy of fn's globals (so fn's namespace is not
    # touched); "<twin>" keeps the text out of _rw.sources(). A native twin is compiled
    # by the second tier (direct calls, vm/patches/0021) unless tier is False (what the
    # stock emitter makes of the def, to compare with a native original); with
    # count_ops, it counts a budget's ops as the VM does (vm/patches/0023). `free`: fn is
    # a closure's function with these free variables, in the order its closure passes
    # them (free_order): the def is compiled inside an enclosing def taking them as
    # parameters, so it takes their cells first in that order, and the function is the
    # one a closure made by that def calls (its cells are not used: promotion passes
    # fn's callers' cells). `float_mode`: how the emitter treats float sites
    # (_rw.float_mode, vm/patches/0029): probing them, or giving them fast paths.
    # `inline`: the callees the twin may inline (_inline.callees): each def is compiled
    # after fn's under its own name, and the emitter told which object each call of it
    # must find (vm/patches/0030).
    scratch = dict(fn.__globals__)
    name = _journal.name(fn)
    text = ("@micropython.native\n" + src) if native else src
    inline = inline if native and not free else ()
    for callee in inline:
        text += "\n\n" + callee[4]
    if free:
        if '"""' in src or "'''" in src:
            raise ValueError("a closure's def with a multi-line string: indenting it would"
                             " change the string")
        body = "".join("    " + ln + "\n" for ln in text.splitlines())
        text = "def _enclose(%s):\n%s    return %s\n" % (", ".join(free), body, name)
    was = _rw.tier(native and tier)  # the emitter runs in compile()
    was_counting = _rw.count_ops(native and count_ops)
    was_float = _rw.float_mode(float_mode if native else 0)
    if inline:
        _rw.inline(tuple(c[:4] for c in inline))
    try:
        code = compile(text, "<twin>", "exec")
    finally:
        _rw.tier(was)
        _rw.count_ops(was_counting)
        _rw.float_mode(was_float)
        if inline:
            _rw.inline(None)
    exec(code, scratch)
    if free:
        return _rw.fun_of(scratch["_enclose"](*([None] * len(free))))
    return scratch[name]


def free_order(fn, src):
    """The free variables of fn, a closure's bytecode function, in the order its closure
    passes their cells: () for a function that is no closure's. Raises ValueError when
    the order is not proved: the def compiled inside an enclosing def taking them in that
    order must access the same cells at the same instructions (vm.derefs) as fn."""
    n, orig = vm.derefs(fn)
    if not n:
        return ()
    # Compiled on its own, the def loads its free variables as globals.
    free = sorted(set(vm.names(compile_def(fn, src, False))[0]) - set(vm.names(fn)[0]))
    if len(free) != n:
        raise ValueError("%d free variables, %d found in its source" % (n, len(free)))
    m, probe = vm.derefs(compile_def(fn, src, False, free=free))
    if m != n or len(probe) != len(orig):
        raise ValueError("its source compiles to other cell accesses")
    at = {}   # a free variable's index in `free` -> its index in fn's cells
    for (op, mine), (op0, theirs) in zip(probe, orig):
        if op != op0 or (mine < n) != (theirs < n) or (mine >= n and mine != theirs) or \
                at.setdefault(mine, theirs) != theirs:
            raise ValueError("its source compiles to other cell accesses")
    if len([i for i in at if i < n]) != n:
        raise ValueError("a free variable it only passes on to an inner function")
    order = [None] * n
    for mine, theirs in at.items():
        if mine < n:
            order[theirs] = free[mine]
    order = tuple(order)
    if vm.derefs(compile_def(fn, src, False, free=order)) != (n, orig):
        raise ValueError("its source compiles to other cell accesses")
    return order
