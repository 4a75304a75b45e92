# SPDX-License-Identifier: MIT
# The profiler at the REPL: prof.start(hz) samples the running bytecode, prof.hot(n)
# prints the hottest functions and offsets with their source lines (vm/profile).
import _prof

_acc = {}  # (function, offset) -> samples, accumulated over drains


def start(hz=1000):
    _prof.start(hz)


def stop():
    _prof.stop()


def reset():
    _acc.clear()
    _prof.reset()


def _drain():
    for k, v in _prof.samples().items():
        _acc[k] = _acc.get(k, 0) + v


def top(n=10):
    """[(samples, name, file, line, offset, opcode)], hottest first."""
    _drain()
    rows = sorted(_acc.items(), key=lambda kv: -kv[1])[:n]
    return [(v,) + _where(k) for k, v in rows]


def _where(k):
    name, file, line, op = _prof.where(k[0], k[1])
    return name, file, line, k[1], op


def hot(n=10):
    """Print the n hottest functions, then the n hottest offsets, by samples."""
    _drain()
    total = sum(_acc.values())
    if not total:
        print("no samples: prof.start(hz), run something, then prof.hot()")
        return
    funs = {}
    for (fn, _), v in _acc.items():
        funs[fn] = funs.get(fn, 0) + v
    print(f"{total} samples")
    print("  samples    %  function")
    for fn, v in sorted(funs.items(), key=lambda kv: -kv[1])[:n]:
        name, file, line, _, _ = _where((fn, 0))
        print(f"{v:9d} {100 * v / total:4.1f}  {name} ({file}:{line})")
    print("  samples    %  function  file:line  +offset  opcode")
    for v, name, file, line, off, op in top(n):
        print(f"{v:9d} {100 * v / total:4.1f}  {name}  {file}:{line}  +{off}  {op}")


def counters(n=10):
    """Print the n functions with most calls + back edges (always-on counters)."""
    rows = sorted(_prof.counters(), key=lambda r: -(r[1] + r[2]))[:n]
    print("    calls  back-edges  hot  function")
    for fn, calls, back, h in rows:
        name, file, line, _, _ = _where((fn, 0))
        print(f"{calls:9d} {back:11d} {h:4d}  {name} ({file}:{line})")
