# SPDX-License-Identifier: MIT
# MicroPython user-C-module fragment for loci/: the trace field's C core (loci/field), the
# capability table's C core (loci/cap), and their MicroPython bindings `_field` and `_cap`
# (loci/mod), built into the image by port/Makefile; the benchmark module `_fieldbench`
# goes into LOCIOS_TEST_SRC (the test image only).

LOCI_FIELD_SRC := $(wildcard $(USERMOD_DIR)/field/*.c)
LOCI_CAP_SRC := $(wildcard $(USERMOD_DIR)/cap/*.c)
LOCI_TEST_SRC := $(USERMOD_DIR)/mod/modfieldbench.c
LOCI_MOD_SRC := $(filter-out $(LOCI_TEST_SRC),$(wildcard $(USERMOD_DIR)/mod/*.c))
LOCIOS_TEST_SRC += $(LOCI_TEST_SRC)

# The binding is scanned for qstrs; the core has none, so it goes in as "lib" sources,
# which MicroPython compiles without the qstr pass.
SRC_USERMOD_C += $(LOCI_MOD_SRC)
SRC_USERMOD_LIB_C += $(LOCI_FIELD_SRC) $(LOCI_CAP_SRC)

# sha256.h from MicroPython's tree: sha256.c itself is already in the image (hashlib).
CFLAGS_USERMOD += -I$(USERMOD_DIR)/field -I$(USERMOD_DIR)/cap -I$(TOP)/lib/crypto-algorithms

# Our files: C11, -Wextra, and no fused multiply-add, so tick() rounds exactly like the
# host build and tests/host/field_model.py (see field/README.md). -O2 rather than the
# port's -Os: these are the mesh's inner loops, and -Os makes every struct copy a
# `rep movs` (a sort of 10,000 records spent 70 instructions an entry a pass). MicroPython's
# headers are system headers here so that -Wextra judges only our code.
LOCI_OBJ := $(addprefix $(BUILD)/, $(patsubst $(USER_C_MODULES)/%.c,%.o,$(LOCI_FIELD_SRC) $(LOCI_CAP_SRC) $(LOCI_MOD_SRC) $(LOCI_TEST_SRC)))
$(LOCI_OBJ): CFLAGS += -std=gnu11 -O2 -Wextra -ffp-contract=off -isystem $(TOP) -isystem $(BUILD)

# The field's frozen Python API (loci/python, listed in port/manifest.py): refreeze it
# when it changes, as port/Makefile does for port/modules.
$(BUILD)/frozen_content.c: $(wildcard $(USERMOD_DIR)/python/*.py $(USERMOD_DIR)/python/*/*.py)
