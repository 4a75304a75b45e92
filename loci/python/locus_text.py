# SPDX-License-Identifier: MIT
# Text about a Locus's values (its exceptions, log lines, bad arguments) for the mesh's
# records. The mesh formats these outside every budget, so nothing here calls str() or
# repr() on a Locus's containers or long numbers: a self-referential list or an int of
# a million digits would make that raise or run for minutes. Each value is described by
# its type and size instead, and every text is cut to a fixed length.

LIMIT = 120              # characters of any one text
_INT_SHOWN = 10 ** 18    # ints of this magnitude or more are not converted to digits
_SIZED = ("list", "tuple", "dict", "set", "frozenset", "bytearray", "memoryview", "array",
          "deque", "OrderedDict")


def _cut(s, limit):
    if len(s) <= limit:
        return s
    return s[:limit - 3] + "..."


def _one(v, limit):
    if v is None or v is True or v is False:
        return "True" if v is True else "False" if v is False else "None"
    if isinstance(v, str):
        # Sliced before it is quoted: repr of a megabyte of text is a megabyte.
        return repr(v[:limit])
    if isinstance(v, bytes):
        return repr(v[:limit])
    if isinstance(v, int):
        if -_INT_SHOWN < v < _INT_SHOWN:
            return str(v)
        return "<int too long to show>"
    if isinstance(v, float):
        return repr(v)
    name = type(v).__name__
    if name in _SIZED:
        return "<%s of %d>" % (name, len(v))
    return "<%s>" % name


def short(v, limit=LIMIT):
    """`v` as at most `limit` characters: a str as itself, anything else described."""
    try:
        if isinstance(v, str):
            return _cut(v, limit)
        return _cut(_one(v, limit), limit)
    except Exception:
        return "<unprintable>"


def quoted(v, limit=LIMIT):
    """Like short(), but a str is quoted as repr() would (a name in a message)."""
    try:
        return _cut(_one(v, limit), limit)
    except Exception:
        return "<unprintable>"


def exception(e, limit=LIMIT):
    """'TypeName: args' of an exception, bounded and unable to raise."""
    try:
        name = type(e).__name__
        args = e.args if isinstance(e, BaseException) else (e,)
        if not args:
            return _cut(name, limit)
        if len(args) == 1:
            a = args[0]
            text = _cut(a, limit) if isinstance(a, str) else _one(a, limit)
        else:
            parts = []
            n = len(name)
            for a in args[:8]:
                parts.append(_one(a, limit))
                n += len(parts[-1]) + 2
                if n > limit:
                    break
            text = "(" + ", ".join(parts) + ")"
        return _cut(name + ": " + text, limit)
    except Exception:
        return "<unprintable exception>"
