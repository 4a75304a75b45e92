# SPDX-License-Identifier: MIT
# What the optimiser learnt in earlier boots. Every journal entry is also appended to
# /data/opt/journal (one JSON object a line) while /data is mounted; at the next boot the
# verdicts found there are hints, looked up by a key of the function's code:
#   swapped before   its winning candidate kind is gated first, through all four gates
#                    (a saved verdict is a hint, never a proof); the other kind is gated
#                    only if that one fails now;
#   refused before   for a reason of its code (every kind, at plan, verify, source,
#                    equivalent or faster), it is decided at once: not recorded, not
#                    measured, journaled as rejected at 'experience'. Refusing needs no
#                    proof; opt.EXPERIENCE = False (or deleting the file) tries again.
import binascii
import hashlib
import json
import os

import opt

from . import _journal, _source

DIR = "/data/opt"
PATH = DIR + "/journal"
# Refusals that say something about the code, not about this boot's calls or tables.
CODE_GATES = ("plan", "verify", "source", "equivalent", "faster")
# ... except these details, which say the calls were missing.
NOT_CODE = ("no replayable calls",)
# Rollbacks that say nothing against the swap (the console's, a namespace forgotten).
NEUTRAL_ROLLBACKS = ("console", "forgotten")

hints = {}  # key -> {"swapped": kind or None, "gain": x, "refused": {kind: (gate, why)}}
stats = {"lines": 0, "skipped": 0, "written": 0, "error": None, "loaded": False}
_key_memo = {}  # id(fn) -> (fn, key); holding fn keeps its id from being reused


def key(fn):
    """A key for fn's code that holds across boots: the SHA-256 of its file name, name and
    def source when that is kept (bytecode names global names by interned numbers, which
    depend on what ran before), else of its opcodes."""
    memo = _key_memo.get(id(fn))
    if memo is not None:
        return memo[1]
    try:
        src = _source.def_source(fn)
    except (TypeError, ValueError):
        src = None
    if src is not None:
        file = _source.where(fn)[0]
        data = ("%s\n%s\n%s" % (file, _journal.name(fn), src)).encode()
        k = "src:" + binascii.hexlify(hashlib.sha256(data).digest()[:12]).decode()
    else:
        k = "bc:" + _journal.code_digest(fn)[:24]
    _key_memo[id(fn)] = (fn, k)
    return k


def _mounted():
    try:
        import storage
    except ImportError:
        return False
    return bool(storage.mounted)


def _learn(e):
    # One entry (a dict read back or just written) into the hints.
    k = e.get("key")
    if not k:
        return
    h = hints.get(k)
    if h is None:
        h = hints[k] = {"swapped": None, "gain": None, "refused": {}}
    v, kind = e.get("verdict"), e.get("kind")
    if v == "swapped":
        h["swapped"], h["gain"] = kind, e.get("gain")
        h["refused"].pop(kind, None)
    elif v == "rejected" and e.get("gate") != "experience":
        h["refused"][kind] = (e.get("gate"), e.get("detail") or "")
    elif v in ("rolled back", "rollback digest mismatch"):
        why = e.get("detail") or ""
        if h["swapped"] == kind and not why.startswith(NEUTRAL_ROLLBACKS):
            h["swapped"] = None
            h["refused"][kind] = ("rollback", why)


def load():
    """Reads the journal of earlier boots into the hints, once a boot (at `import opt`,
    before this boot adds to it); returns stats. A line that does not parse (the last
    one, after a power cut) is skipped and counted."""
    if stats["loaded"]:
        return stats
    stats["loaded"] = True
    if not _mounted():
        return stats
    try:
        f = open(PATH)
    except OSError:
        return stats
    with f:
        for line in f:
            stats["lines"] += 1
            try:
                e = json.loads(line)
            except ValueError:
                stats["skipped"] += 1
                continue
            if type(e) is dict:
                _learn(e)
            else:
                stats["skipped"] += 1
    if stats["skipped"]:
        print("opt: %s: %d of %d lines did not parse; skipped"
              % (PATH, stats["skipped"], stats["lines"]))
    return stats


def _persist(e, fn):
    # The journal sink: the entry (with fn's key) appended to /data/opt/journal. A write
    # that fails (a full or read-only disk) says so once and stops persisting this boot;
    # it never reaches the optimiser.
    if fn is None or stats["error"] is not None or not _mounted():
        return
    try:
        e["key"] = key(fn)
    except Exception:  # noqa: BLE001 - a key that cannot be made is only a lost hint
        return
    line = json.dumps({k: e[k] for k in ("key", "function", "kind", "verdict", "gate",
                                         "gain", "detail", "old", "new")})
    try:
        try:
            os.mkdir(DIR)
        except OSError as x:
            if x.errno != 17:  # EEXIST
                raise
        with open(PATH, "a") as f:
            f.write(line + "\n")
        stats["written"] += 1
    except OSError as x:
        stats["error"] = "%s: %s" % (PATH, x)
        print("opt: the journal is no longer saved: %s" % stats["error"])


def hint(fn):
    """The hint for fn's code from earlier boots, or None (also with EXPERIENCE off)."""
    if not opt.EXPERIENCE or not hints:
        return None
    return hints.get(key(fn))


def refusal(fn):
    """Why fn is decided without gating, from earlier boots' refusals, or None: when no
    swap of its code stands and every kind this boot would try was refused for a reason
    of its code."""
    h = hint(fn)
    if h is None or h["swapped"] is not None:
        return None
    kinds = ("rewrite", "native") if opt.native_promotion else ("rewrite",)
    parts = []
    for kind in kinds:
        r = h["refused"].get(kind)
        if r is None or r[0] not in CODE_GATES or r[1].startswith(NOT_CODE):
            return None
        parts.append("%s at %s (%s)" % (kind, r[0], r[1]))
    return "refused in an earlier boot: " + "; ".join(parts)


def experience():
    """(stats, {key: hint}) of what earlier boots taught the optimiser."""
    load()
    return stats, hints
