# SPDX-License-Identifier: MIT
"""kernel/frame_alloc.c on the host (cffi), against a Python model, with hypothesis:
random add/alloc/take/free sequences never double-allocate, never hand out frames the
allocator was not given, and keep the counts consistent."""
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.build import cffihost

KERNEL = pathlib.Path(__file__).resolve().parents[2] / "kernel"
NFRAMES = 300   # several bitmap words plus a partial one


@pytest.fixture(scope="module")
def lib():
    m = cffihost.build("frame_alloc", [KERNEL / "frame_alloc.c"], [KERNEL / "frame_alloc.h"])
    return m.ffi, m.lib


class Harness:
    def __init__(self, lib):
        self.ffi, self.c = lib
        words = self.c.frame_alloc_words(NFRAMES)
        self.words = self.ffi.new("uint64_t[]", 2 * words)
        self.fa = self.ffi.new("struct frame_alloc *")
        self.c.frame_alloc_init(self.fa, self.words, NFRAMES)
        self.managed = set()
        self.allocated = {}   # first -> count
        self.out = self.ffi.new("uint64_t *")

    def used(self):
        return {f for first, n in self.allocated.items() for f in range(first, first + n)}

    def free_set(self):
        return self.managed - self.used()

    def lowest_fit(self, count):
        free, run = self.free_set(), 0
        for f in range(NFRAMES):
            run = run + 1 if f in free else 0
            if run == count:
                return f - count + 1
        return None

    def check(self):
        free = self.free_set()
        assert self.fa.total == len(self.managed)
        assert self.fa.free == len(free)
        for f in range(NFRAMES):
            assert bool(self.c.frame_alloc_is_free(self.fa, f)) == (f in free), f
        best = run = 0
        for f in range(NFRAMES):
            run = run + 1 if f in free else 0
            best = max(best, run)
        assert self.c.frame_alloc_largest_run(self.fa, self.out) == best
        if best:
            start = self.out[0]
            assert all(f in free for f in range(start, start + best))


ops = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, NFRAMES + 20), st.integers(0, 80)),
    st.tuples(st.just("alloc"), st.integers(0, 40), st.just(0)),
    st.tuples(st.just("take"), st.integers(0, NFRAMES + 5), st.integers(0, 10)),
    st.tuples(st.just("free_mine"), st.integers(0, 1000), st.just(0)),
    st.tuples(st.just("free_any"), st.integers(0, NFRAMES + 5), st.integers(0, 10)),
), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_random_sequences_match_model(lib, seq):
    h = Harness(lib)
    c, fa = h.c, h.fa
    for op, a, b in seq:
        if op == "add":
            new = {f for f in range(a, min(a + b, NFRAMES))} - h.managed
            assert c.frame_alloc_add(fa, a, b) == len(new)
            h.managed |= new
        elif op == "alloc":
            expect = h.lowest_fit(a) if a else None
            ok = c.frame_alloc_alloc(fa, a, h.out)
            assert bool(ok) == (expect is not None)
            if ok:
                first = h.out[0]
                assert first == expect
                got = set(range(first, first + a))
                assert got <= h.managed, "handed out frames it was never given"
                assert not got & h.used(), "double allocation"
                h.allocated[first] = a
        elif op == "take":
            want = set(range(a, a + b))
            expect = b > 0 and a + b <= NFRAMES and want <= h.free_set()
            assert bool(c.frame_alloc_take(fa, a, b)) == expect
            if expect:
                h.allocated[a] = b
        elif op == "free_mine":
            if h.allocated:
                first = sorted(h.allocated)[a % len(h.allocated)]
                assert c.frame_alloc_free(fa, first, h.allocated.pop(first))
        else:
            want = set(range(a, a + b))
            expect = b > 0 and a + b <= NFRAMES and want <= h.used()
            ok = c.frame_alloc_free(fa, a, b)
            assert bool(ok) == expect
            if ok:   # split the model's runs around the freed range
                for first, n in list(h.allocated.items()):
                    frames = set(range(first, first + n))
                    if frames & want:
                        del h.allocated[first]
                        for f in sorted(frames - want):
                            h.allocated[f] = 1
        h.check()


def test_double_free_and_unmanaged_free_refused(lib):
    h = Harness(lib)
    c, fa = h.c, h.fa
    c.frame_alloc_add(fa, 10, 20)
    assert c.frame_alloc_alloc(fa, 5, h.out) and h.out[0] == 10
    assert c.frame_alloc_free(fa, 10, 5)
    assert not c.frame_alloc_free(fa, 10, 5), "double free accepted"
    assert not c.frame_alloc_free(fa, 0, 1), "free of a frame never added accepted"
    assert fa.free == fa.total == 20


def test_reserved_frames_never_handed_out(lib):
    h = Harness(lib)
    c, fa = h.c, h.fa
    c.frame_alloc_add(fa, 0, 100)
    c.frame_alloc_add(fa, 200, 50)     # 100..199 is never given (e.g. the kernel)
    got = []
    while c.frame_alloc_alloc(fa, 1, h.out):
        got.append(h.out[0])
    assert len(got) == 150 and not [f for f in got if 100 <= f < 200 or f >= 250]
    assert fa.free == 0
    assert not c.frame_alloc_alloc(fa, 1, h.out)
