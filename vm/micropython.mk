# SPDX-License-Identifier: MIT
# MicroPython user-C-module fragment for vm/: the bytecode verifier's core
# (vm/verifier/*.c) and its binding, the `vm` module (vm/verifier/mod), and the budgeted
# step runner `_budget` (vm/budget), built into the image by port/Makefile.

VRF_CORE_SRC := $(wildcard $(USERMOD_DIR)/verifier/*.c)
VRF_MOD_SRC := $(wildcard $(USERMOD_DIR)/verifier/mod/*.c)

# The binding is scanned for qstrs; the core has none (it is also built on the host),
# so it goes in as "lib" sources, compiled without the qstr pass.
SRC_USERMOD_C += $(VRF_MOD_SRC)
SRC_USERMOD_LIB_C += $(VRF_CORE_SRC)

CFLAGS_USERMOD += -I$(USERMOD_DIR) -I$(USERMOD_DIR)/verifier

# Our files: C11 and -Wextra; MicroPython's headers are system headers here so that
# -Wextra judges only our code.
VRF_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(VRF_CORE_SRC) $(VRF_MOD_SRC)))
$(VRF_OBJ): CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)

# The budgeted step runner (vm/budget, README there) and its binding `_budget`
# (vm/budget/mod); the hooks it serves are declared in port/mpconfigport.h. The core
# has no qstrs and goes in as "lib" sources, like the verifier's.
BUDGET_CORE_SRC := $(wildcard $(USERMOD_DIR)/budget/*.c)
BUDGET_MOD_SRC := $(wildcard $(USERMOD_DIR)/budget/mod/*.c)
SRC_USERMOD_C += $(BUDGET_MOD_SRC)
SRC_USERMOD_LIB_C += $(BUDGET_CORE_SRC)
CFLAGS_USERMOD += -I$(USERMOD_DIR)/budget

BUDGET_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(BUDGET_CORE_SRC) $(BUDGET_MOD_SRC)))
$(BUDGET_OBJ): CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)

# The profiler (vm/profile, README there; issue 7) and its binding `_prof` (vm/profile/mod).
PROF_CORE_SRC := $(wildcard $(USERMOD_DIR)/profile/*.c)
PROF_MOD_SRC := $(wildcard $(USERMOD_DIR)/profile/mod/*.c)
SRC_USERMOD_C += $(PROF_MOD_SRC)
SRC_USERMOD_LIB_C += $(PROF_CORE_SRC)
CFLAGS_USERMOD += -I$(USERMOD_DIR)/profile

PROF_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(PROF_CORE_SRC) $(PROF_MOD_SRC)))
$(PROF_OBJ): CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)

# The frozen Python (listed in port/manifest.py): the optimiser's package and the
# profiler's REPL helper. Refreeze when it changes.
$(BUILD)/frozen_content.c: $(wildcard $(USERMOD_DIR)/opt/*.py $(USERMOD_DIR)/profile/*.py)

# The rewritten opcodes (vm/rewrite, issue 7): py/vm.c includes their bodies
# (vm/patches/0007, port/mpconfigport.h); their guard-miss table, and the test-only
# byte-poking module `_rwops` (vm/rewrite/opsmod).
RW_OPS_CORE_SRC := $(USERMOD_DIR)/rewrite/rw_stats.c $(USERMOD_DIR)/rewrite/rw_cache.c
RW_OPS_MOD_SRC := $(wildcard $(USERMOD_DIR)/rewrite/opsmod/*.c)
SRC_USERMOD_C += $(RW_OPS_MOD_SRC)
SRC_USERMOD_LIB_C += $(RW_OPS_CORE_SRC)
CFLAGS_USERMOD += -I$(USERMOD_DIR)/rewrite

RW_OPS_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(RW_OPS_CORE_SRC) $(RW_OPS_MOD_SRC)))
$(RW_OPS_OBJ): CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)

# The rewriter's planner (vm/rewrite/rw_plan.c, pure C, no qstrs), its aggressive mode
# (vm/rewrite/mod/rw_aggr.c, called from MICROPY_VM_HOOK_FRAME_ENTER) and `_rw`.
RW_CORE_SRC := $(USERMOD_DIR)/rewrite/rw_plan.c $(USERMOD_DIR)/rewrite/mod/rw_aggr.c
RW_MOD_SRC := $(wildcard $(USERMOD_DIR)/opt/mod/*.c)
SRC_USERMOD_C += $(RW_MOD_SRC)
SRC_USERMOD_LIB_C += $(RW_CORE_SRC)
CFLAGS_USERMOD += -I$(USERMOD_DIR)/rewrite/mod -I$(USERMOD_DIR)/opt/mod
RW_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(RW_CORE_SRC) $(RW_MOD_SRC)))
$(RW_OBJ): CFLAGS += -std=gnu11 -Wextra -isystem $(TOP) -isystem $(BUILD)
