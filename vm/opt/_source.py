# SPDX-License-Identifier: MIT
# A function's def as source text, for its native twin: found in the texts the lexer
# kept (vm/opt/mod/rw_source.c) or in the function's file, and compiled on its own.
import _prof
import _rw

from . import _journal


def _def_lines(fn):
    # (lines, index of fn's def line) in the source texts the lexer kept (_rw.sources(),
    # newest first), then in fn's file: the last 'def name(' at or before the line of
    # fn's first instruction, in a text of fn's file name. None when none has it.
    name = _journal.name(fn)
    _n, file, line, _op = _prof.where(fn, 0)
    for src_name, data in _rw.sources() + [(file, None)]:
        if src_name != file:
            continue
        if data is None:
            # Last: a module imported from a file is read again (if it changed since,
            # gate 1's name check and gate 2 catch the difference).
            try:
                with open(file, "rb") as f:
                    data = f.read()
            except (OSError, TypeError):
                return None
        try:
            # (Paste mode hands the lexer "\r" line ends, as a terminal sends them.)
            lines = data.decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
        except UnicodeError:
            continue
        at = None
        for i in range(min(line, len(lines))):
            t = lines[i].lstrip()
            if t.startswith("def " + name + "(") or t.startswith("def " + name + " ("):
                at = i
        if at is not None:
            return lines, at
    return None


def _indent(ln):
    return len(ln) - len(ln.lstrip())


def def_source(fn):
    """fn's def, dedented: its line and the lines indented deeper. None if not kept."""
    found = _def_lines(fn)
    if found is None:
        return None
    lines, at = found
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


def compile_def(fn, src, native):
    # The function a def compiles to in a copy of fn's globals (so fn's namespace is not
    # touched); "<twin>" keeps the text out of _rw.sources().
    scratch = dict(fn.__globals__)
    text = ("@micropython.native\n" + src) if native else src
    exec(compile(text, "<twin>", "exec"), scratch)
    return scratch[_journal.name(fn)]
