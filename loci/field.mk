# SPDX-License-Identifier: MIT
# Slow trace-field targets (issue 4), kept out of `make test`. Included by the top Makefile:
#   make field-png    boot, run the seeded ants demo, write build/field/*.png and *.gif
#   make bench-field  field costs in guest cycles under QEMU -icount (README table)
#   make bench-store  lo.save / lo.load of a 256x256x4 field on /data, guest cycles

.PHONY: field-png bench-field bench-store

field-png: build
	@$(PY) tools/field/fielddemo.py -o $(BUILD)/field

bench-field: build test-image
	@$(PY) tools/bench/fieldbench.py

bench-store: build
	@$(PY) tools/bench/bench_store.py
