# SPDX-License-Identifier: MIT
# Slow trace-field targets (issue 4), kept out of `make test`. Included by the top Makefile:
#   make field-png    boot, run the seeded ants demo, write build/field/*.png and *.gif
#   make bench-field  field costs in guest cycles under QEMU -icount (README table)

.PHONY: field-png bench-field

field-png: build
	@$(PY) tools/field/fielddemo.py -o $(BUILD)/field

bench-field: build test-image
	@$(PY) tools/bench/fieldbench.py
