# SPDX-License-Identifier: MIT
"""tools/bench/bench_vm.py's host side without QEMU: reading bm_params keys, benchrun.py's
parameter rule, the result check and the statistics."""

import pytest

from tools.bench import bench_vm

SRC = """
class Done:
    FIRST = 0
bm_params = {
    (32, 10): (1, Done.FIRST),
    (100, 25): (2, Done.FIRST),
    (1000, 1000): (3, Done.FIRST),
}
"""


def test_param_keys_read_without_running_values():
    assert bench_vm.param_keys(SRC) == [(32, 10), (100, 25), (1000, 1000)]
    with pytest.raises(ValueError):
        bench_vm.param_keys("x = 1\n")


@pytest.mark.parametrize("n,m,want", [
    (100, 100, (100, 25)),      # 10*100 <= 12*100
    (84, 100, (100, 25)),       # 1000 <= 1008: benchrun's 20 % slack
    (83, 100, (32, 10)),        # 1000 > 996
    (1000, 100, (100, 25)),     # M=100 excludes (1000, 1000)
    (1000, 1000, (1000, 1000)),
    (20, 100, None),
])
def test_choose_key_is_benchruns_rule(n, m, want):
    assert bench_vm.choose_key(bench_vm.param_keys(SRC), n, m) == want


def test_every_perf_bench_file_has_keys():
    names = bench_vm.bench_names(None)
    assert names, "no perf_bench files: the MicroPython tree is fetched by make setup"
    for name in names:
        src = (bench_vm.BENCH_DIR / f"{name}.py").read_text()
        assert bench_vm.param_keys(src), name


def test_results_ok_needs_agreement_and_truth():
    rows = [(0, 5, "42"), (100, 5, "42"), (110, 5, "42")]
    assert bench_vm.results_ok(rows, "42")
    assert bench_vm.results_ok(rows, None)
    assert not bench_vm.results_ok(rows, "41")
    assert not bench_vm.results_ok([*rows, (105, 5, "43")], None)
    assert not bench_vm.results_ok(None, "42")


def test_summary_excludes_warmup():
    s = bench_vm.summary([(0, 1, "x"), (100, 1, "x"), (104, 1, "x"), (102, 1, "x")])
    assert s["median"] == 102
    assert s["spread"] == pytest.approx(4 / 102)
    assert bench_vm.geomean([2.0, 0.5, 1.0]) == pytest.approx(1.0)
