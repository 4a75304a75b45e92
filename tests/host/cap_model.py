# SPDX-License-Identifier: MIT
"""A small pure-Python reference model of loci/cap: the same slots, derivation tree,
checks, rate, revocation order and audit records (byte for byte), for the property tests
to hold the C core against. Written from loci/cap/README.md, not from the C."""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass

SENSE, DEPOSIT, SPAWN, IO, MEM, REWRITE = 1, 2, 4, 8, 16, 32
ALL_RIGHTS = 63
NONE = 0xFFFFFFFF
REC = struct.Struct("<QQBBH8If32s")
REC_SIZE = REC.size
VERSION = 1
GRANT, DERIVE, REFUSED, REVOKE, EXPIRE, RETIRE, CHECKPOINT = range(1, 8)
KEY_MAX, MAX_KEYS = 15, 4

# Reason codes, in the order of enum cap_err.
REASONS = ["OK", "REVOKED", "EXPIRED", "OWNER", "OP", "FLAVOUR", "REGION", "KEY", "RATE",
           "FOREIGN", "IO", "MEM", "AMOUNT", "AUTHORITY", "AUDIT_FULL", "TABLE_FULL", "ARG",
           "W_RIGHTS", "W_FLAVOURS", "W_REGION", "W_KEYS", "W_RATE", "W_EXPIRES", "W_IO",
           "W_MEM"]
E = {name: i for i, name in enumerate(REASONS)}


@dataclass(frozen=True)
class Scope:
    rights: int = 0
    flavours: int = 0
    region: tuple[int, int, int, int] | None = None     # None: unrestricted
    keys: tuple[bytes, ...] | None = None               # None: unrestricted
    rate: float = -1.0                                  # < 0: unlimited
    expires: int = 0                                    # 0: never
    io: tuple[int, int] | None = None                   # None: no ports at all
    mem: tuple[int, int] | None = None                  # None: no memory at all

    def valid(self) -> bool:
        if self.rights & ~ALL_RIGHTS or self.rate != self.rate:
            return False
        if self.region is not None and (self.region[2] == 0 or self.region[3] == 0):
            return False
        if self.keys is not None and (len(self.keys) > MAX_KEYS
                                      or any(len(k) > KEY_MAX for k in self.keys)):
            return False
        return all(r is None or r[0] <= r[1] for r in (self.io, self.mem))


def narrows(p: Scope, c: Scope) -> str:
    """'OK' if c is a narrowing of p, else the W_* name of the first widened field."""
    if c.rights & ~p.rights:
        return "W_RIGHTS"
    if c.flavours & ~p.flavours:
        return "W_FLAVOURS"
    if p.region is not None:
        if c.region is None:
            return "W_REGION"
        (px, py, pw, ph), (cx, cy, cw, ch) = p.region, c.region
        if cx < px or cy < py or cx + cw > px + pw or cy + ch > py + ph:
            return "W_REGION"
    if p.keys is not None:
        if c.keys is None or not all(any(k.startswith(q) for q in p.keys) for k in c.keys):
            return "W_KEYS"
    if p.rate >= 0 and not (0 <= c.rate <= p.rate):
        return "W_RATE"
    if p.expires and (c.expires == 0 or c.expires > p.expires):
        return "W_EXPIRES"
    for name, cr, pr in (("W_IO", c.io, p.io), ("W_MEM", c.mem, p.mem)):
        if cr is not None and (pr is None or cr[0] < pr[0] or cr[1] > pr[1]):
            return name
    return "OK"


@dataclass
class Slot:
    gen: int = 1
    live: bool = False
    owner: int = 0
    parent: int = NONE
    parent_gen: int = NONE
    used: float = 0.0
    scope: Scope = Scope()


def f32(x: float) -> float:
    """What C's record stores: beyond float range is infinity (struct would raise)."""
    if x != x:
        return x
    return math.copysign(math.inf, x) if abs(x) > 3.4028234663852886e38 else x


def encode(seq, tick, kind, reason=0, actor=0, owner=0, slot=NONE, gen=0, parent=NONE,
           parent_gen=0, rights=0, aux=0, amount=0.0, data=bytes(32)) -> bytes:
    return REC.pack(seq, tick, kind, VERSION, reason, actor, owner, slot, gen, parent,
                    parent_gen, rights, aux, f32(amount), data)


def chain(records: bytes) -> bytes | None:
    """Chain head over exported bytes, or None when they are malformed."""
    if not records or len(records) % REC_SIZE:
        return None
    first = REC.unpack_from(records, 0)
    if first[2] == CHECKPOINT:
        head = first[-1]
    elif first[0] == 0:
        head = bytes(32)
    else:
        return None
    seq = first[0]
    for off in range(0, len(records), REC_SIZE):
        r = REC.unpack_from(records, off)
        if r[0] != seq or not GRANT <= r[2] <= CHECKPOINT or r[3] != VERSION:
            return None
        head = hashlib.sha256(head + records[off:off + REC_SIZE]).digest()
        seq += 1
    return head


class Model:
    def __init__(self, capacity: int, audit: int, ident: int):
        self.capacity, self.audit_cap, self.id = capacity, audit, ident
        self.slots = [Slot() for _ in range(capacity)]
        self.children: list[list[int]] = [[] for _ in range(capacity)]
        self.free = list(range(capacity - 1, -1, -1))
        self.log: list[bytes] = []
        self.seq = 0
        self.head = bytes(32)
        self.now = 0

    # ---- audit ----------------------------------------------------------------------
    def room(self, n: int) -> bool:
        return self.audit_cap - len(self.log) >= n

    def append(self, tick=None, **fields) -> None:
        rec = encode(self.seq, self.now if tick is None else tick, **fields)
        self.seq += 1
        self.log.append(rec)
        self.head = hashlib.sha256(self.head + rec).digest()

    def slot_record(self, i: int, kind: int, actor: int) -> None:
        s = self.slots[i]
        self.append(kind=kind, actor=actor, owner=s.owner, slot=i, gen=s.gen, parent=s.parent,
                    parent_gen=s.parent_gen, rights=s.scope.rights, aux=s.scope.flavours)

    def export(self) -> bytes:
        out = b"".join(self.log)
        n = len(self.log)
        self.log = []
        self.append(kind=CHECKPOINT, aux=n, data=self.head)
        return out

    # ---- handles --------------------------------------------------------------------
    def lookup(self, ref) -> tuple[str, int | None]:
        table, slot, gen = ref
        if table != self.id:
            return "FOREIGN", None
        if slot >= self.capacity or not self.slots[slot].live or self.slots[slot].gen != gen:
            return "REVOKED", None
        return "OK", slot

    def take(self, owner: int, scope: Scope) -> int:
        i = self.free.pop()
        s = self.slots[i]
        s.live, s.owner, s.parent, s.parent_gen = True, owner, NONE, NONE
        s.used, s.scope = 0.0, scope
        return i

    def grant(self, owner: int, scope: Scope, by: int = 0):
        if not scope.valid():
            return "ARG", None
        if not self.room(1):
            return "AUDIT_FULL", None
        err = "OK"
        if by != 0 and (scope.rights & (IO | MEM) or scope.io is not None or scope.mem is not None):
            err = "AUTHORITY"
        elif not self.free:
            err = "TABLE_FULL"
        if err != "OK":
            self.append(kind=REFUSED, reason=E[err], actor=by, owner=owner,
                        rights=scope.rights, aux=scope.flavours)
            return err, None
        i = self.take(owner, scope)
        self.slot_record(i, GRANT, by)
        return "OK", (self.id, i, self.slots[i].gen)

    def derive(self, ref, owner: int, scope: Scope, by: int):
        if not scope.valid():
            return "ARG", None
        if not self.room(1):
            return "AUDIT_FULL", None
        err, p = self.lookup(ref)
        if p is not None:
            ps = self.slots[p]
            if by != 0 and by != ps.owner:
                err = "OWNER"
            elif self.expired(ps, self.now):
                err = "EXPIRED"
            else:
                err = narrows(ps.scope, scope)
                if err == "OK" and not self.free:
                    err = "TABLE_FULL"
        if err != "OK":
            self.append(kind=REFUSED, reason=E[err], actor=by, owner=owner, slot=ref[1],
                        gen=ref[2], rights=scope.rights, aux=scope.flavours)
            return err, None
        i = self.take(owner, scope)
        self.slots[i].parent, self.slots[i].parent_gen = p, self.slots[p].gen
        self.children[p].append(i)
        self.slot_record(i, DERIVE, by)
        return "OK", (self.id, i, self.slots[i].gen)

    @staticmethod
    def expired(s: Slot, now: int) -> bool:
        return s.scope.expires != 0 and now >= s.scope.expires

    # ---- checks ---------------------------------------------------------------------
    def ancestors(self, i: int):
        while True:
            yield self.slots[i]
            if self.slots[i].parent == NONE:
                return
            i = self.slots[i].parent

    def judge(self, i, owner, op, flavour, x, y, w, h, key, amount, now) -> str:
        s = self.slots[i]
        sc = s.scope
        if s.owner != owner:
            return "OWNER"
        if self.expired(s, now):
            return "EXPIRED"
        if not sc.rights & op:
            return "OP"
        if op in (SENSE, DEPOSIT):
            if flavour >= 32 or not sc.flavours >> flavour & 1:
                return "FLAVOUR"
            if x >= 0:
                if sc.region is not None:
                    rx, ry, rw, rh = sc.region
                    if (y < 0 or x < rx or y < ry or x + max(w, 1) > rx + rw
                            or y + max(h, 1) > ry + rh):
                        return "REGION"
            elif key is not None:
                if sc.keys is not None and not any(key.startswith(k) for k in sc.keys):
                    return "KEY"
            elif sc.region is not None:
                return "REGION"
            elif sc.keys is not None:
                return "KEY"
        elif op in (IO, MEM):
            rng = sc.io if op == IO else sc.mem
            n = max(w, 1)
            if rng is None or x < 0 or not (rng[0] <= x <= rng[1] and n - 1 <= rng[1] - x):
                return "IO" if op == IO else "MEM"
        if op == DEPOSIT:
            if not (amount >= 0) or not math.isfinite(amount):
                return "AMOUNT"
            for a in self.ancestors(i):
                if a.scope.rate >= 0 and a.used + amount > a.scope.rate:
                    return "RATE"
        return "OK"

    def check(self, ref, owner, op, flavour=0, x=-1, y=-1, w=1, h=1, key=None, amount=0.0,
              now=0) -> str:
        if op == 0 or op & (op - 1) or op & ~ALL_RIGHTS:
            return "ARG"
        now = now or self.now
        err, i = self.lookup(ref)
        if i is not None:
            err = self.judge(i, owner, op, flavour, x, y, w, h, key, amount, now)
        if err != "OK":
            if not self.room(1):
                return "AUDIT_FULL"
            self.append(tick=now, kind=REFUSED, reason=E[err], actor=owner,
                        owner=self.slots[i].owner if i is not None else owner,
                        slot=ref[1], gen=ref[2], rights=op, aux=flavour, amount=amount)
            return err
        if op == DEPOSIT:
            for a in self.ancestors(i):
                a.used += amount
        return "OK"

    def epoch(self) -> None:
        for s in self.slots:
            s.used = 0.0

    # ---- removal ----------------------------------------------------------------------
    def subtree(self, root: int) -> list[int]:
        out, todo = [], [root]
        while todo:
            i = todo.pop()
            out.append(i)
            todo.extend(self.children[i])
        return out

    def remove_subtree(self, root: int, kind: int, actor: int) -> int:
        # Leaves first, always down the newest child: the order the C walk takes.
        n, i = 0, root
        while True:
            while self.children[i]:
                i = self.children[i][-1]
            up = self.slots[i].parent
            self.slot_record(i, kind, actor)
            if up != NONE:
                self.children[up].remove(i)
            s = self.slots[i]
            s.live = False
            s.gen = (s.gen + 1) & 0xFFFFFFFF
            if s.gen != 0:
                self.free.append(i)
            n += 1
            if i == root:
                return n
            i = up

    def revoke(self, ref, by: int = 0):
        err, i = self.lookup(ref)
        if err == "REVOKED":
            return "OK", 0
        if i is None:
            return err, 0
        if not self.room(len(self.subtree(i))):
            return "AUDIT_FULL", 0
        return "OK", self.remove_subtree(i, REVOKE, by)

    def owner_root(self, i: int, owner: int) -> bool:
        s = self.slots[i]
        if not s.live or s.owner != owner:
            return False
        p = s.parent
        while p != NONE:
            if self.slots[p].owner == owner:
                return False
            p = self.slots[p].parent
        return True

    def retire(self, owner: int, by: int = 0):
        need = sum(len(self.subtree(i)) for i in range(self.capacity) if self.owner_root(i, owner))
        if not self.room(need):
            return "AUDIT_FULL", 0
        n = 0
        for i in range(self.capacity):
            if self.owner_root(i, owner):
                n += self.remove_subtree(i, RETIRE, by)
        return "OK", n

    def expired_root(self, i: int, now: int) -> bool:
        s = self.slots[i]
        return s.live and self.expired(s, now) and (
            s.parent == NONE or not self.expired(self.slots[s.parent], now))

    def expire(self, now: int):
        saved, self.now = self.now, now
        need = sum(len(self.subtree(i)) for i in range(self.capacity) if self.expired_root(i, now))
        if not self.room(need):
            self.now = saved
            return "AUDIT_FULL", 0
        n = 0
        for i in range(self.capacity):
            if self.expired_root(i, now):
                n += self.remove_subtree(i, EXPIRE, 0)
        return "OK", n

    # ---- views ----------------------------------------------------------------------
    def live(self) -> dict[int, tuple]:
        return {i: (s.gen, s.owner, s.parent, s.parent_gen, s.used, s.scope)
                for i, s in enumerate(self.slots) if s.live}

