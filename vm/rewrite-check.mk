# SPDX-License-Identifier: MIT
# Issue 7's correctness bar, the long runs (outside `make test`). Included by the top
# Makefile after tests/upstream/upstream.mk and vm/rewrite.mk:  include vm/rewrite-check.mk
#
#   make upstream-aggressive  MicroPython's own suite in the guest (tools/test/upstream_run.py)
#                             twice: as it is, then with `_rw.aggressive(True)` before every
#                             test; every test must get the same verdict in both
#                             -> build/upstream-aggressive/{off,on}.json
#   make rewrite-props-deep   the hypothesis property tests on the unix oracle
#                             (tests/host/test_rewrite_props.py) with RW_PROPS_EXAMPLES
#                             random programs per property instead of the CI profile's
# RW_UPSTREAM_CONFIGS picks configurations (native code has no bytecode to rewrite),
# RW_UPSTREAM_DIRS directories.

RW_UPSTREAM_CONFIGS ?= bytecode,via-mpy
RW_UPSTREAM_DIRS    ?= basics,float,micropython,misc,stress,extmod
RW_UPSTREAM_OUT     := $(BUILD)/upstream-aggressive
RW_PROPS_EXAMPLES   ?= 1000
RW_UPSTREAM_RUN      = $(PY) tools/test/upstream_run.py --image $(IMAGE) \
	--mpy-cross $(BUILD)/port/mpy-cross/mpy-cross \
	--configs $(RW_UPSTREAM_CONFIGS) --dirs $(RW_UPSTREAM_DIRS)

.PHONY: upstream-aggressive rewrite-props-deep

# Both runs always complete (a test failing in both is test-upstream's business); the
# comparison decides.
upstream-aggressive: build
	@mkdir -p $(RW_UPSTREAM_OUT)
	-@$(RW_UPSTREAM_RUN) --json $(RW_UPSTREAM_OUT)/off.json --results-dir $(RW_UPSTREAM_OUT)/off
	-@$(RW_UPSTREAM_RUN) --aggressive --json $(RW_UPSTREAM_OUT)/on.json \
		--results-dir $(RW_UPSTREAM_OUT)/on
	@$(PY) tools/test/upstream_run.py --compare $(RW_UPSTREAM_OUT)/off.json $(RW_UPSTREAM_OUT)/on.json

rewrite-props-deep: rewrite-oracle
	@LOCIOS_RW_ORACLE=$(RW_ORACLE) RW_PROPS_EXAMPLES=$(RW_PROPS_EXAMPLES) \
		$(PY) -m pytest -q -p no:cacheprovider tests/host/test_rewrite_props.py
