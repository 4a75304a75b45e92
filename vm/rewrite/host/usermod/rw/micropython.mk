# SPDX-License-Identifier: MIT
# User-C-module fragment for the unix oracle of the rewriter (vm/rewrite.mk): `_rw`, its
# aggressive mode and native promotion, the planner, the opcodes' miss table and caches
# (vm/rewrite/*.c) and the verifier core it calls.
RW_ROOT := $(abspath $(USERMOD_DIR)/../../..)
VRF_ROOT := $(abspath $(RW_ROOT)/../verifier)
OPT_MOD := $(abspath $(RW_ROOT)/../opt/mod)
SRC_USERMOD_C += $(wildcard $(OPT_MOD)/*.c)
SRC_USERMOD_LIB_C += $(wildcard $(RW_ROOT)/*.c) $(RW_ROOT)/mod/rw_aggr.c \
	$(USERMOD_DIR)/rw_unix.c $(wildcard $(VRF_ROOT)/*.c)
CFLAGS_USERMOD += -I$(RW_ROOT) -I$(RW_ROOT)/mod -I$(OPT_MOD) -I$(VRF_ROOT) -I$(VRF_ROOT)/mod
