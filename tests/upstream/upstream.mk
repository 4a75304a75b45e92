# SPDX-License-Identifier: MIT
# MicroPython's own test suite against LociOS, the reference builds it is compared with,
# and the long soak. Included by the top Makefile:   include tests/upstream/upstream.mk
#
#   make test-upstream      LociOS in QEMU: bytecode, --via-mpy, --via-mpy --emit native
#                           -> build/upstream-results.json (+ table on the terminal)
#   make upstream-ref-unix  the unix port (standard variant) built from the fetched tree
#                           -> build/ref/unix-results.json
#   make upstream-ref-arm   the official ports/qemu ARM build (MPS2_AN385); installs
#                           gcc-arm-none-eabi, libnewlib-arm-none-eabi, qemu-system-arm
#                           -> build/ref/arm-qemu-results.json
#   make soak               SOAK_MINUTES (default 10) of allocation, GC, float math and
#                           timer interrupts, checked for leaks and clock drift
# UPSTREAM_CONFIGS=bytecode picks configurations; UPSTREAM_DIRS=basics,float picks
# directories (defaults: all of tools/test/upstream_run.py's).

UPSTREAM_CONFIGS ?= bytecode,via-mpy,native
UPSTREAM_DIRS    ?= basics,float,micropython,misc,stress,import,extmod
SOAK_MINUTES     ?= 10
UPSTREAM_MPYCROSS := $(BUILD)/port/mpy-cross/mpy-cross
REF_DIR          := $(BUILD)/ref
REF_UNIX         := $(REF_DIR)/unix-standard/micropython
REF_ARM          := $(REF_DIR)/qemu-arm/firmware.elf
UPSTREAM_RUN     := $(PY) tools/test/upstream_run.py --configs $(UPSTREAM_CONFIGS) --dirs $(UPSTREAM_DIRS)

.PHONY: test-upstream upstream-ref-unix upstream-ref-arm upstream-arm-setup soak

test-upstream: build
	@$(UPSTREAM_RUN) --image $(IMAGE) --mpy-cross $(UPSTREAM_MPYCROSS)

# The unix port as MicroPython's CI builds it, minus what the Debian tree lacks
# (btree, ssl: their lib/ sources are stripped; frozen mip/ssl: micropython-lib is
# empty; asyncio is imported from extmod/ by run-tests.py instead), and without FFI,
# which would need libffi-dev and pkg-config for tests LociOS cannot run anyway.
$(REF_UNIX): $(PORT_LIB)
	@$(MAKE) --no-print-directory -C $(MICROPY_DIR)/ports/unix VARIANT=standard \
		BUILD=$(abspath $(REF_DIR)/unix-standard) \
		MICROPY_MPYCROSS=$(abspath $(UPSTREAM_MPYCROSS)) FROZEN_MANIFEST= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_PY_FFI=0

upstream-ref-unix: $(REF_UNIX)
	@MICROPY_MICROPYTHON=$(abspath $(REF_UNIX)) $(UPSTREAM_RUN) --instance unix \
		--target unix --mpy-cross $(UPSTREAM_MPYCROSS) --runner-arg=-j1 \
		--json $(REF_DIR)/unix-results.json --results-dir $(REF_DIR)/upstream

upstream-arm-setup: $(call setup_group,arm)

# The official bare-metal port, as its own `make test` runs it, with the frozen
# unittest dropped (micropython-lib is empty in the Debian tree). py/mkrules.mk refuses
# any frozen manifest without micropython-lib's README.md, even one that uses nothing
# from it: point it at an empty stand-in folder that says so.
$(REF_ARM): $(PORT_LIB) $(call setup_group,arm)
	@mkdir -p $(REF_DIR)/no-micropython-lib
	@echo "Empty stand-in: the Debian tree ships no micropython-lib." \
		> $(REF_DIR)/no-micropython-lib/README.md
	@$(MAKE) --no-print-directory -C $(MICROPY_DIR)/ports/qemu BOARD=MPS2_AN385 \
		BUILD=$(abspath $(REF_DIR)/qemu-arm) \
		MPY_LIB_DIR=$(abspath $(REF_DIR)/no-micropython-lib) \
		MICROPY_MPYCROSS=$(abspath $(UPSTREAM_MPYCROSS)) \
		FROZEN_MANIFEST=$(abspath tests/upstream/arm-qemu-manifest.py)

upstream-ref-arm: $(REF_ARM)
	@$(UPSTREAM_RUN) --target arm-qemu --mpy-cross $(UPSTREAM_MPYCROSS) \
		--instance "execpty:qemu-system-arm -machine mps2-an385 -nographic -monitor null -semihosting -serial pty -kernel $(abspath $(REF_ARM))" \
		--json $(REF_DIR)/arm-qemu-results.json --results-dir $(REF_DIR)/upstream

soak: build
	@$(PY) tools/test/soak.py --image $(IMAGE) --minutes $(SOAK_MINUTES)
