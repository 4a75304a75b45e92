# SPDX-License-Identifier: MIT
# Slow checks and benchmarks of the bytecode verifier (vm/verifier), outside `make test`.
# Included by the top-level Makefile:  include vm/verifier.mk
#
#   make verifier-fuzz        AddressSanitizer fuzz: 2 000 000 mutants of tests/basics code
#   make verifier-bench       host cost by callgrind: instructions per byte, largest
#                             function, ratio to mpy-cross parse+compile (bench.json)
#   make verifier-bench-guest guest cycles per byte under -icount (bench_guest.json)
#   make verifier-soundness   accepted mutants run on an ASan/UBSan/assert unix-port oracle
#                             with the exact stack-bound probe, then the probe's negative
#                             control (also alone: make verifier-stack-control)

VRF_OUT := build/host/verifier
VRF_SRC := $(wildcard vm/verifier/*.c) $(wildcard vm/verifier/*.h)
VRF_FUZZ_N ?= 2000000
VRF_FUZZ_SEED ?= 1

.PHONY: verifier-fuzz verifier-bench verifier-bench-guest

$(VRF_OUT)/vrf_fuzz: $(VRF_SRC) vm/verifier/host/vrf_fuzz.c
	@mkdir -p $(VRF_OUT)
	gcc -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
		-Wall -Wextra -Werror -Ivm/verifier $(filter %.c,$^) -o $@

$(VRF_OUT)/corpus.bin: vm/verifier/host/vrf_host.py | $(SETUP_STAMP)
	@mkdir -p $(VRF_OUT)
	$(PY) -c "import sys; sys.path.insert(0, 'vm/verifier/host'); import vrf_host as H; \
		open('$@', 'wb').write(b''.join(H.corpus_records(H.parse_mpy(H.mpy_cross(f, f.name))) \
		for f in sorted((H.MPY_DIR / 'tests' / 'basics').glob('*.py'))))"

verifier-fuzz: $(VRF_OUT)/vrf_fuzz $(VRF_OUT)/corpus.bin
	$(VRF_OUT)/vrf_fuzz $(VRF_OUT)/corpus.bin $(VRF_FUZZ_N) $(VRF_FUZZ_SEED)

verifier-bench: $(SETUP_STAMP) $(call setup_group,callgrind)
	$(PY) vm/verifier/host/bench.py

verifier-bench-guest: build
	$(PY) vm/verifier/host/bench_guest.py

# Mutation soundness against the unix port built with ASan/UBSan and DEBUG=1 asserts:
# mutants the verifier accepts must run without a sanitizer report, assert or signal,
# and every function must stay within the value-stack depth, exception nesting and
# locals the verifier computed for it (vm/verifier/host/oracle, stackcheck.py).
# The control lowers n_state / n_exc_stack of functions that fill them, checks that the
# verifier refuses each and that the probe catches each when it runs anyway.
VRF_SOUND_N ?= 2000
VRF_SOUND_SEED ?= 1
VRF_CONTROL_N ?= 20
.PHONY: verifier-soundness verifier-stack-control
verifier-soundness: $(SETUP_STAMP)
	$(PY) vm/verifier/host/soundness.py $(VRF_SOUND_N) $(VRF_SOUND_SEED)
	$(PY) vm/verifier/host/stack_control.py $(VRF_CONTROL_N) $(VRF_SOUND_SEED)

verifier-stack-control: $(SETUP_STAMP)
	$(PY) vm/verifier/host/stack_control.py $(VRF_CONTROL_N) $(VRF_SOUND_SEED)
