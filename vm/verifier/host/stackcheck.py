# SPDX-License-Identifier: MIT
"""The exact stack-bound check of the soundness oracle: reads what the oracle's probe
(oracle/oracle_stack.c, patched into the unix port by oracle/oracle-stack.patch) logged
for each function it ran, and compares it with what the verifier computed for that
function and with the bounds its prelude makes the VM allocate."""

from __future__ import annotations

from dataclasses import dataclass, field

import vrf_host as H

# ---- Prelude signature (py/bc.h MP_BC_PRELUDE_SIG_ENCODE / _DECODE_INTO) --------------

@dataclass
class Sig:
    n_state: int
    n_exc_stack: int
    flags: int
    n_pos: int
    n_kwonly: int
    n_def: int
    end: int  # offset of the first byte after the signature


def decode_sig(code: bytes) -> Sig:
    z = code[0]
    s, e, a = (z >> 3) & 0xF, (z >> 2) & 1, z & 3
    f = k = d = 0
    p, n = 1, 0
    while z & 0x80:
        z = code[p]
        p += 1
        s |= (z & 0x30) << (2 * n)
        e |= (z & 0x02) << n
        f |= ((z & 0x40) >> 6) << n
        a |= (z & 0x04) << n
        k |= ((z & 0x08) >> 3) << n
        d |= (z & 0x01) << n
        n += 1
    return Sig(s + 1, e, f, a, k, d, p)


def encode_sig(sig: Sig) -> bytes:
    s, e, f, a, k, d = (sig.n_state - 1, sig.n_exc_stack, sig.flags, sig.n_pos,
                        sig.n_kwonly, sig.n_def)
    out = bytearray()
    z = (s & 0xF) << 3 | (e & 1) << 2 | (a & 3)
    s, e, a = s >> 4, e >> 1, a >> 2
    while s | e | f | a | k | d:
        out.append(0x80 | z)
        z = ((f & 1) << 6 | (s & 3) << 4 | (k & 1) << 3 | (a & 1) << 2 | (e & 1) << 1
             | (d & 1))
        s, e, f, a, k, d = s >> 2, e >> 1, f >> 1, a >> 1, k >> 1, d >> 1
    out.append(z)
    return bytes(out)


def with_sig(code: bytes, **change: int) -> bytes:
    """code with some signature fields replaced (the rest of the function unchanged)."""
    sig = decode_sig(code)
    new = Sig(**{**sig.__dict__, **change})
    return encode_sig(new) + code[sig.end:]


# ---- The probe's log --------------------------------------------------------------------

@dataclass
class Seen:
    """What the oracle saw one function do: maxima and the code offset (from the start
    of the function's bytes) where each was first reached."""
    length: int
    depth: tuple[int, int] = (0, -1)
    low: tuple[int, int] = (0, -1)
    exc: tuple[int, int] = (0, -1)
    local: tuple[int, int] = (-1, -1)
    ran: bool = False


def parse_log(text: str) -> tuple[dict[int, Seen], bool]:
    """{load index: Seen}, and whether the probe's table overflowed."""
    seen: dict[int, Seen] = {}
    full = False
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue  # the last line of a run killed mid-write
        tag, i, v, off = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
        if tag == "L":
            seen[i] = Seen(v)
        elif tag == "X":
            full = True
        elif i in seen:
            s = seen[i]
            s.ran = True
            attr = {"D": "depth", "U": "low", "E": "exc", "F": "local"}[tag]
            setattr(s, attr, (v, off))
    return seen, full


def preorder(root: H.RawCode) -> list[tuple[str, H.RawCode]]:
    """Functions in the order the loader reads them, named as verify_mpy names them."""
    out: list[tuple[str, H.RawCode]] = []

    def walk(rc: H.RawCode, path: str) -> None:
        out.append((path, rc))
        for i, c in enumerate(rc.children):
            walk(c, f"{path}/{i}")

    walk(root, "<module>")
    return out


@dataclass
class Report:
    ran: int = 0             # functions that executed at least one instruction
    at_depth_bound: int = 0  # of those, how many reached the verifier's max_depth exactly
    at_exc_bound: int = 0    # ... and its max_blocks (when > 0)
    violations: list[dict] = field(default_factory=list)


def check(log: str, root: H.RawCode, verdicts: dict[str, H.Verdict]) -> Report:
    """Compares the probe's log with the verifier's verdicts (path -> Verdict).
    Violations: a function ran that the verifier did not accept; the value stack went
    below empty or above the verifier's max_depth; the exception stack above its
    max_blocks; a local slot at or above its n_locals; or any of these above what the
    prelude makes the VM allocate (n_state - n_locals slots, n_exc_stack blocks)."""
    seen, full = parse_log(log)
    rep = Report()
    fns = preorder(root)
    if full:
        rep.violations.append({"kind": "probe table full"})
    for i, s in sorted(seen.items()):
        if i >= len(fns) or len(fns[i][1].code) != s.length:
            rep.violations.append({"kind": "load order does not match the .mpy", "index": i})
            continue
        if not s.ran:
            continue
        path, rc = fns[i]
        rep.ran += 1
        v = verdicts.get(path)
        sig = decode_sig(rc.code)

        def bad(kind: str, seen_v: tuple[int, int], bound: int, path: str = path,
                start: int = H.opcodes_start(rc.code)) -> None:
            rep.violations.append({"kind": kind, "function": path, "seen": seen_v[0],
                                   "bound": bound, "offset": seen_v[1] - start})

        if v is None or not v.ok:
            rep.violations.append({"kind": "ran but not accepted", "function": path})
            continue
        rep.at_depth_bound += s.depth[0] == v.max_depth
        rep.at_exc_bound += 0 < v.max_blocks == s.exc[0]
        if s.low[0] < 0:
            bad("value stack below empty", s.low, 0)
        if s.depth[0] > v.max_depth:
            bad("value stack above the verifier's max_depth", s.depth, v.max_depth)
        if s.depth[0] > sig.n_state - v.n_locals:
            bad("value stack into the locals (n_state - n_locals)", s.depth,
                sig.n_state - v.n_locals)
        if s.exc[0] > v.max_blocks:
            bad("exception stack above the verifier's max_blocks", s.exc, v.max_blocks)
        if s.exc[0] > sig.n_exc_stack:
            bad("exception stack above n_exc_stack", s.exc, sig.n_exc_stack)
        if s.local[0] >= v.n_locals:
            bad("local slot at or above the verifier's n_locals", s.local, v.n_locals)
    return rep
