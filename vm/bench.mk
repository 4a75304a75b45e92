# SPDX-License-Identifier: MIT
# The VM performance bar of issue 7 (tools/bench/bench_vm.py), outside `make test`.
# Included by the top-level Makefile:  include vm/bench.mk   (after tests/upstream/upstream.mk)
#
#   make bench-vm       perf_bench in LociOS under -icount, optimiser OFF vs ON in one boot,
#                       plus the unix port of the same tree and CPython 3.11 under callgrind
#                       -> build/bench/vm.md, build/bench/vm.json
#   make bench-vm-prof  the same, plus the OFF runs in an image built with LOCIOS_PROF=0
#                       (the profiler's overhead, second table)
# ON is the gated optimiser (opt.settle after the warm-up: record, verify, replay, A/B,
# swap); BENCH_VM_ON=opt-noinline does the same with twins that inline no callee;
# BENCH_VM_ON=aggressive instead rewrites every function at its first call with
# only the verifier's check (the test mode); BENCH_VM_ARGS adds options
# (e.g. --only bm_fft,misc_pystone -k 5).

BENCH_VM_N    ?= 1000
BENCH_VM_M    ?= 1000
BENCH_VM_K    ?= 3
BENCH_VM_ON   ?= opt
BENCH_VM_ARGS ?=
# CPython 3.11 for the ON/CPython column (Debian 12's own interpreter; elsewhere name one,
# or leave it empty for no column).
BENCH_VM_CPYTHON ?= $(firstword $(wildcard /usr/bin/python3.11))
BENCH_VM_DIR  := $(BUILD)/bench
BENCH_VM_UNIX := $(BENCH_VM_DIR)/unix/micropython
# The reference image without the profiler: the same tree with LOCIOS_PROF=0 (the guard in
# port/mpconfigport.h), built by a nested make in its own build folder. The define rides
# on CC because the port's Makefile takes no extra CFLAGS; it is harmless elsewhere.
BENCH_VM_NOPROF := $(BENCH_VM_DIR)/noprof
BENCH_VM_RUN  = $(PY) tools/bench/bench_vm.py --image $(IMAGE) --on $(BENCH_VM_ON) \
	-n $(BENCH_VM_N) -m $(BENCH_VM_M) -k $(BENCH_VM_K) --unix $(abspath $(BENCH_VM_UNIX)) \
	$(if $(BENCH_VM_CPYTHON),--cpython $(BENCH_VM_CPYTHON)) --out $(BENCH_VM_DIR) $(BENCH_VM_ARGS)

.PHONY: bench-vm bench-vm-prof bench-vm-noprof-image

# The unix port as upstream.mk's reference builds it (standard variant, no frozen code),
# unstripped: callgrind collects the timed run by the name of the exec builtin.
# FFI off: perf_bench does not use it, and it would need libffi-dev and pkg-config.
$(BENCH_VM_UNIX): $(SETUP_STAMP)
	@$(MAKE) --no-print-directory -C $(MICROPY_DIR)/ports/unix VARIANT=standard \
		BUILD=$(abspath $(BENCH_VM_DIR)/unix) FROZEN_MANIFEST= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0 STRIP=true

bench-vm: build $(BENCH_VM_UNIX) $(call setup_group,callgrind)
	@$(BENCH_VM_RUN)

bench-vm-noprof-image: $(SETUP_STAMP)
	@$(MAKE) --no-print-directory build BUILD=$(BENCH_VM_NOPROF) CC="$(CC) -DLOCIOS_PROF=0"

bench-vm-prof: build $(BENCH_VM_UNIX) $(call setup_group,callgrind) bench-vm-noprof-image
	@$(BENCH_VM_RUN) --prof-ref $(BENCH_VM_NOPROF)/lociOS.img
