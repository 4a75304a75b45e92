# SPDX-License-Identifier: MIT
# MicroPython user-C-module fragment for vm/: the bytecode verifier's core
# (vm/verifier/*.c) and its binding, the `vm` module (vm/verifier/mod), built into the
# image by port/Makefile.

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
