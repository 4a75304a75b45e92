# SPDX-License-Identifier: MIT
# Slow checks of the rewriter (vm/rewrite), outside `make test`.
# Included by the top-level Makefile:  include vm/rewrite.mk
#
#   make rewrite-oracle   the unix port from the patched tree (vm/patches.mk) with the
#                         rewritten opcodes and `_rw` (vm/rewrite/host/usermod)
#   make rewrite-suite    MicroPython's own tests (REWRITE_DIRS) on that oracle with the
#                         aggressive mode off, then forced on from the start (every
#                         default kind, the per-site caches included): the same tests
#                         must pass and fail -> $(BUILD)/host/rewrite/suite.json
# Both live under $(BUILD), so `BUILD=build/<name>` keeps a private oracle.

RW_ORACLE_BUILD := $(abspath $(BUILD)/host/rewrite/unix-build)
RW_ORACLE := $(RW_ORACLE_BUILD)/micropython
REWRITE_DIRS ?= basics,micropython,misc,float

.PHONY: rewrite-oracle rewrite-suite

rewrite-oracle: $(VM_PATCH_STAMP)
	$(MAKE) --no-print-directory -C $(VM_MICROPY_DIR)/ports/unix VARIANT=standard \
		BUILD=$(RW_ORACLE_BUILD) PROG=micropython STRIP= FROZEN_MANIFEST= \
		MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_MBEDTLS=0 MICROPY_PY_FFI=0 \
		USER_C_MODULES=$(abspath vm/rewrite/host/usermod) \
		CFLAGS_EXTRA="-I$(abspath vm) -I$(abspath vm/rewrite) -include $(abspath vm/rewrite/host/usermod/rw/rw_unix_config.h)"

rewrite-suite: rewrite-oracle
	$(PY) vm/rewrite/host/suite.py --oracle $(RW_ORACLE) --tree $(VM_MICROPY_DIR) \
		--dirs $(REWRITE_DIRS) --out $(BUILD)/host/rewrite/suite.json

# Native promotion's emitter changes (vm/patches/0008 back-edge polls, 0009 small-int
# fast paths) on the whole of MicroPython's suite: the unix port from the patched tree,
# built with both on and both off, runs REWRITE_DIRS with every function compiled by
# the native emitter (run-tests.py --emit native), and the `on` build runs them again
# with every function compiled as the optimiser's second tier (0021,
# LOCIOS_NATIVE_TIER=1), and once more also counting a budget's ops as a Locus step's
# twin does (0023, LOCIOS_NATIVE_COUNT=1); the same tests must pass and fail in all four.
#   make native-suite  -> $(BUILD)/host/native/suite.json
NATIVE_ON_BUILD := $(abspath $(BUILD)/host/native/unix-on)
NATIVE_OFF_BUILD := $(abspath $(BUILD)/host/native/unix-off)
NATIVE_UNIX_ARGS = VARIANT=standard PROG=micropython STRIP= FROZEN_MANIFEST= \
	MICROPY_PY_BTREE=0 MICROPY_PY_SSL=0 MICROPY_SSL_MBEDTLS=0 MICROPY_PY_FFI=0 \
	USER_C_MODULES=$(abspath vm/rewrite/host/usermod)

.PHONY: native-suite
native-suite: $(VM_PATCH_STAMP)
	$(MAKE) --no-print-directory -C $(VM_MICROPY_DIR)/ports/unix $(NATIVE_UNIX_ARGS) \
		BUILD=$(NATIVE_ON_BUILD) \
		CFLAGS_EXTRA="-I$(abspath vm) -I$(abspath vm/rewrite) -include $(abspath vm/rewrite/host/usermod/rw/rw_unix_config.h) -DMICROPY_EMIT_NATIVE_POLL=1 -DMICROPY_EMIT_X64_SMALL_INT_FAST=1"
	$(MAKE) --no-print-directory -C $(VM_MICROPY_DIR)/ports/unix $(NATIVE_UNIX_ARGS) \
		BUILD=$(NATIVE_OFF_BUILD) \
		CFLAGS_EXTRA="-I$(abspath vm) -I$(abspath vm/rewrite) -include $(abspath vm/rewrite/host/usermod/rw/rw_unix_config.h)"
	$(PY) vm/rewrite/host/native_suite.py --on $(NATIVE_ON_BUILD)/micropython \
		--off $(NATIVE_OFF_BUILD)/micropython --tree $(VM_MICROPY_DIR) \
		--dirs $(REWRITE_DIRS) --out $(BUILD)/host/native/suite.json
