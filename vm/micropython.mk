# SPDX-License-Identifier: MIT
# Builds vm/ into the image as MicroPython user C modules (port/Makefile names this folder
# and loci/ as the image's user C modules): the verifier and its module `vm`, budgeted
# calls `_budget`, the profiler `_prof`, the rewritten opcodes' tables, the rewriter's
# planner and aggressive mode, and the optimiser's C with its module `_rw`; the test-only
# `_rwops` goes into LOCIOS_TEST_SRC (the test image only). vm/README.md says what each
# part is.

# $(call vm_part,CORE,BINDING): one part's sources. CORE is C without qstrs (the same
# files build on the host), so it goes in as "lib" sources, compiled without the qstr
# pass; BINDING, which uses MicroPython's qstrs and root pointers, is scanned. Both are
# our own files: C11 and -Wextra, with MicroPython's headers as system headers so that
# -Wextra judges only our code.
define vm_part
SRC_USERMOD_C += $(2)
SRC_USERMOD_LIB_C += $(1)
$(addprefix $(BUILD)/,$(patsubst $(USER_C_MODULES)/%.c,%.o,$(1) $(2))): \
	CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)
endef

VM_DIR := $(USERMOD_DIR)

# The bytecode verifier (vm/verifier) and `vm` (vm/verifier/mod).
$(eval $(call vm_part,$(wildcard $(VM_DIR)/verifier/*.c),$(wildcard $(VM_DIR)/verifier/mod/*.c)))
# Budgeted calls (vm/budget) and `_budget` (vm/budget/mod).
$(eval $(call vm_part,$(wildcard $(VM_DIR)/budget/*.c),$(wildcard $(VM_DIR)/budget/mod/*.c)))
# The profiler (vm/profile) and `_prof` (vm/profile/mod).
$(eval $(call vm_part,$(wildcard $(VM_DIR)/profile/*.c),$(wildcard $(VM_DIR)/profile/mod/*.c)))
# The rewritten opcodes (vm/rewrite; py/vm.c includes their bodies, vm/vm_hooks.h): their
# guard-miss table and caches.
$(eval $(call vm_part,$(VM_DIR)/rewrite/rw_stats.c $(VM_DIR)/rewrite/rw_cache.c,))
# The test-only byte-poking module `_rwops`: in the test image only (port/Makefile).
LOCIOS_TEST_SRC += $(wildcard $(VM_DIR)/rewrite/opsmod/*.c)
# The rewriter's planner and its aggressive mode (called from the frame-enter hook), and
# the optimiser's C with `_rw` (vm/opt/mod).
$(eval $(call vm_part,$(VM_DIR)/rewrite/rw_plan.c $(VM_DIR)/rewrite/mod/rw_aggr.c,$(wildcard $(VM_DIR)/opt/mod/*.c)))

# Every file of the image includes vm/vm_hooks.h (port/mpconfigport.h), and through it
# the profiler's and the rewritten opcodes' headers.
CFLAGS_USERMOD += -I$(VM_DIR) $(addprefix -I$(VM_DIR)/,verifier verifier/mod budget profile rewrite rewrite/mod \
	opt/mod)

# The frozen Python (listed in port/manifest.py): the optimiser's package and the
# profiler's REPL helper. Refreeze when it changes.
$(BUILD)/frozen_content.c: $(wildcard $(VM_DIR)/opt/*.py $(VM_DIR)/profile/*.py)
