# SPDX-License-Identifier: MIT
# test_opt_native.py: twins that inline small callees (vm/patches/0030), compared with the
# bytecode they replace while the functions, classes and instances the guards check
# change under them.
import opt


def sq(x):
    return x * x


def mul2(x):
    if x & 0x80:
        return (x << 1) ^ 0x11B
    else:
        return x << 1


def mul3(x):
    return x ^ mul2(x)


def pick(a, b):
    if a < b:
        return a
    return b


def inv(x):
    return 1 / x


def dflt(x, k=2):
    return x * k


class V:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def dot(self, o):
        return self.x * o.x + self.y * o.y

    def scaled(self, k):
        return V(self.x * k, self.y * k)


def make_w(x, y):
    # A subclass the optimiser cannot see (not in the globals): its dot fails the guard.
    class W(V):
        def dot(self, o):
            return -1

    return W(x, y)


def calls(n, a, b):
    s = 0
    t = 0.0
    for i in range(n):
        s += sq(i) + mul3(i & 0xFF) + mul2(sq(i) & 0xFF) + pick(i, 7) + dflt(i)
        t += a.dot(b) + a.scaled(2).dot(b.scaled(sq(2)))
    return s, t


def raises(xs):
    out = []
    for x in xs:
        try:
            out.append(inv(x))
        except ZeroDivisionError:
            out.append("zero")
    return out


def gen(n, a):
    for i in range(n):
        yield sq(i) + a.dot(a)


def outcome(f, args):
    try:
        r = f(*args)
        return list(r) if f is gen else r
    except Exception as e:  # noqa: BLE001 - the exception's type is the outcome
        return ("exc", type(e).__name__)


def agree_inline():
    """(outcomes compared, how many differed, each swap's journal detail)."""
    a, b, w = V(1.5, 2.0), V(0.5, -1.0), make_w(3, 4)
    cases = [
        (calls, [(30, a, b), (9, V(1, 2), V(3, 4)), (3, w, a)]),
        (raises, [([1, 0, 2.0, -0.0, 4],)]),
        (gen, [(5, a), (3, w)]),
    ]
    notes, swaps = [], []
    for f, inputs in cases:
        e = opt.consider(f, "trusted", inputs)
        notes.append((e["verdict"], e["detail"]))
        if e["verdict"] == "swapped":
            swaps.append((f, opt.live_swap(e["id"]), inputs, e["id"]))
    g = globals()
    keep = dict(sq=sq, mul2=mul2, pick=pick, dot=V.dot)

    def dot2(self, o):
        return self.x - o.y

    worlds = [
        lambda: None,
        lambda: setattr(V, "dot", dot2),  # another method: the guard fails
        lambda: setattr(a, "dot", lambda o: 99),  # an instance's attribute: no self
        lambda: g.__setitem__("sq", lambda x: x + 1),  # another function by that name
        lambda: g.__setitem__("mul2", pick),  # what an inlined body calls
        lambda: g.pop("pick"),  # gone: NameError either way
        lambda: (setattr(V, "dot", keep["dot"]), delattr(a, "dot"), g.update(keep)),
    ]
    n = bad = 0
    for world in worlds:
        world()
        for f, sw, inputs, _ in swaps:
            for args in inputs:
                sw.cand.undo()
                want = outcome(f, args)
                sw.cand.apply()
                got = outcome(f, args)
                n += 1
                if got != want:
                    bad += 1
                    print("differs:", f, args, want, got)
    for swap in swaps:
        opt.rollback(swap[3])
    return n, bad, notes
