# SPDX-License-Identifier: MIT
# The optimiser (vm/opt/README.md): only a candidate that verifies, behaves the same and
# measures faster replaces running code, and every verdict is journaled. `import opt`
# gives its console API and its tunables; the parts are private modules:
#   _policy   what to work on (trusted, hot, undecided), one move at a time, the rules
#             that roll a swap back, optimise/settle/auto
#   _swap     a function's candidates through the gates, the live swaps, rollback
#   _gates    verify, equivalent (replays), faster (A/B timing)
#   _journal  the journal's entries and digests
#   _experience  the journal saved to /data, and the hints it gives the next boot
#   _source   a def's source text, compiled again for a native twin
#   _values   copies and comparison of the values a replay passes and returns
# The parts read the tunables below from this module at every use, so setting one at the
# console (opt.MARGIN = 0.05) takes effect at once.
from . import _experience, _journal, _values
from ._experience import experience
from ._gates import PLAIN
from ._journal import journal, log
from ._policy import (
    aggressive,
    attempt,
    auto,
    by_key,
    check,
    consider,
    forget,
    hot,
    key,
    optimise,
    recording,
    settle,
    stop_recording,
    trust,
    trusted,
)
from ._swap import live_swap, live_swaps, rollback, swaps

# A copy of a value for a replay, as a 1-tuple; None when it cannot be copied faithfully.
copy_value = _values.clone


def stand_in(t, make):
    """Replay calls that got a live object of type t with make(obj) in its place: a
    stand-in (REPLAY = True, copy(), state(), and `missing`: what it was asked and could
    not answer) that answers reads and records writes. loci/python/opt_env.py registers
    the Mesh's, for the colonies' env callbacks."""
    _values.STAND_INS[t] = make


# A candidate must be at least this much faster (new/old cycle ratio, median of the A/B
# rounds) to be swapped in. 2 %: under QEMU -icount reruns differ by ~0.04 %, and on TCG
# without -icount (or hardware) the A/B rounds interleave, so drift hits both sides.
MARGIN = 0.02
# A/B rounds (each runs every input once with old code, once with new, interleaved).
ROUNDS = 5
# Recorded calls kept per function, and how many calls the optimiser waits for.
INPUTS = 8
# A swapped function is rolled back when its guards missed more often than this share
# of its profiled activity (calls + loop iterations) since the swap, or than twice the
# rate they missed at while the swap measured faster, whichever is higher.
MISS_SHARE = 0.25
# Functions whose one call costs more than this many cycles are not A/B measured
# (the measurement itself would stall the console for too long); journaled as refused.
MAX_CALL_CYCLES = 2_000_000_000
# Gate 2 replays each recorded call under a cycle budget (`_budget`): the original's is
# MAX_CALL_CYCLES, the candidate's REPLAY_FACTOR times what the original took on the
# same call plus REPLAY_FLOOR (room for a host's pauses on TCG without -icount). A
# candidate that runs out is refused: a twin that never returns cannot hang the gates.
REPLAY_FACTOR = 4
REPLAY_FLOOR = 200_000_000
# Past this many cycles a round, 3 A/B rounds instead of ROUNDS: -icount makes a
# round's cycles repeat exactly, and on hardware such long rounds average out noise.
LONG_ROUND = 50_000_000
# Passes a function may be recorded for with no call coming before it is given up.
PATIENCE = 4
# check() measures each live swap again on its recorded calls every this many passes,
# and rolls back one that is no longer faster than the original.
RECHECK_PASSES = 20
# Native twins are compiled only for defs whose source uses none of these: they need
# the class cell, or write the enclosing scope's variables (a closure's twin is compiled
# in a def of its own that only passes the free variables' cells, _source.compile_def).
NATIVE_REFUSE = ("super", "__class__", "nonlocal")
# A native function (@micropython.native) whose loops took this many back edges is hot:
# the profiler's first hot event for bytecode is at 1024 calls + back edges.
NATIVE_HOT = 1024
# A generator function's calls are compared (and timed) over at most this many items.
GEN_ITEMS = 100_000
# How many swaps vm/opt/mod/rw_watch.c watches for new exception types at once.
WATCH_MAX = 256
# auto(True): one optimise() pass at most this often while the console waits for input.
AUTO_PERIOD_MS = 500
# Whether the optimiser also tries native twins (set False to measure rewrites alone).
native_promotion = True
# Whether a native twin's float sites (arithmetic on locals and number constants) get
# fast paths on doubles from type feedback: its recorded calls replayed on a probing
# compile first (vm/patches/0029). False compiles twins without them.
FLOAT_SITES = True
# Whether a native twin inlines the small functions it calls (one returned expression,
# or a choice of two; vm/opt/_inline.py, vm/patches/0030), each behind a guard that the
# function called is the one inlined. False compiles twins that call them.
INLINE = True
# Whether frozen code (the image's own modules: the mesh, the colonies, the console's
# helpers) is a candidate: rewritten in a heap copy of its code, twinned from its source
# in the ROM filesystem. The optimiser's own modules never are (_policy._own_code).
FROZEN = True
# Frozen modules that are never candidates: they write to disks or drive the console,
# and the gates' replays would do that again (asyncio: its loop must not be re-entered).
FROZEN_SKIP = ("_boot", "storage", "gpt", "audit_store", "lo", "lo_page", "lo_store",
               "asyncio")
# Whether verdicts of earlier boots (/data/opt/journal) guide this one (_experience).
EXPERIENCE = True

# Every verdict is also appended to /data/opt/journal while /data is mounted; what earlier
# boots appended is read now, before this boot adds to it.
_journal.sinks.append(_experience._persist)
_experience.load()


# The API, for readers and the linter (MicroPython's `import *` does not read __all__).
__all__ = ("PLAIN", "aggressive", "attempt", "auto", "by_key", "check", "consider",
           "copy_value", "experience", "forget", "hot", "journal", "key", "live_swap",
           "live_swaps", "log", "optimise", "recording", "rollback", "settle",
           "stand_in", "stop_recording", "swaps", "trust", "trusted")
