# SPDX-License-Identifier: MIT
# The optimiser's journal: one entry for every verdict (swapped, rejected, rolled back),
# written before any code changes, with the SHA-256 of the code before and after.
import binascii
import hashlib

import _rw

entries = []  # the journal; an entry's id is its index + 1
sinks = []  # called with (entry, fn) after each entry is added (_experience saves it)
_epoch = 0


def digest(data):
    return binascii.hexlify(hashlib.sha256(data).digest()).decode()


def code_digest(fn):
    # The SHA-256 of fn's running code: its opcodes, or a native function's machine code.
    try:
        return digest(_rw.code(fn))
    except TypeError:
        return digest(_rw.machine_code(fn))


def name(fn):
    try:
        return fn.__name__
    except AttributeError:
        return repr(fn)


def add(fn, verdict, gate, old, new, edits, gain, detail="", kind="rewrite"):
    global _epoch
    _epoch += 1
    e = {
        "id": len(entries) + 1,
        "epoch": _epoch,
        "function": name(fn),
        "kind": kind,
        "old": old,
        "new": new,
        "rewrites": [(off, k) for off, _o, _n, k in edits],
        "gain": gain,
        "verdict": verdict,
        "gate": gate,
        "detail": detail,
    }
    entries.append(e)
    for sink in sinks:
        sink(e, fn)
    return e


def journal(n=20):
    """The last n journal entries (dicts): id, epoch, function, kind ('rewrite' or
    'native'), old and new SHA-256 (of the opcodes; of the machine code for a native
    twin), rewrites [(offset, kind)], gain (old/new cycles), verdict, gate, detail."""
    return entries[-n:]


def log(n=10):
    """Print the last n journal entries, one line each."""
    for e in entries[-n:]:
        print("%3d %4d %-12s %-10s %-16s %-7s %-7s %2d rewrites %s %s" % (
            e["id"], e["epoch"], e["verdict"], e["gate"] or "-", e["function"], e["kind"],
            "%.3fx" % e["gain"] if e["gain"] else "-", len(e["rewrites"]),
            e["old"][:12], e["detail"]))
