# SPDX-License-Identifier: MIT
# The stack-bound probe, linked only into the verifier's soundness oracle (unix port,
# USER_C_MODULES=vm/verifier/host by soundness.py); never part of the LociOS image.
ORACLE_MOD_DIR := $(USERMOD_DIR)
SRC_USERMOD_C += $(ORACLE_MOD_DIR)/oracle_stack.c
CFLAGS_USERMOD += -I$(ORACLE_MOD_DIR)
