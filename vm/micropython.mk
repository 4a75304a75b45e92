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

CFLAGS_USERMOD += -I$(USERMOD_DIR)/verifier

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
