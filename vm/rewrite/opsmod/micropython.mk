# SPDX-License-Identifier: MIT
# Host (unix-port) oracle with the rewritten opcodes: `USER_C_MODULES=vm/rewrite` finds this
# file (the image's port/Makefile scans only the repo root's folders and uses
# vm/micropython.mk instead). It does what port/mpconfigport.h and vm/micropython.mk do
# for the image: the opcode headers for py/vm.c (patch 0007), rw_stats.c and `_rwops`.
RWOPS_TOP := $(USERMOD_DIR)/..
SRC_USERMOD_C += $(USERMOD_DIR)/modrwops.c
SRC_USERMOD_LIB_C += $(RWOPS_TOP)/rw_stats.c $(RWOPS_TOP)/rw_cache.c
CFLAGS_USERMOD += -I$(RWOPS_TOP) -include $(RWOPS_TOP)/rw_opcodes.h \
	-DMICROPY_VM_EXTRA_OPCODES_H='"rw_ops.h"' -DMICROPY_VM_EXTRA_ENTRIES_H='"rw_entries.h"'
