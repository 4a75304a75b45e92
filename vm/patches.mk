# SPDX-License-Identifier: MIT
# The VM as LociOS runs it: a copy of the pristine MicroPython tree with vm/patches/*.patch
# applied in order. Included by the top-level Makefile:  include vm/patches.mk
#
#   $(VM_MICROPY_DIR)   the patched tree the port (and the verifier's soundness oracle)
#                       build from; boot/ and tests/upstream keep the pristine one
#   $(VM_PATCH_STAMP)   holds the SHA-256 of the patch set (names and contents, and the
#                       pristine tree's path); a prerequisite of whatever builds from
#                       the patched tree. It is remade, with the whole copy, only when
#                       that digest changes: a touched but unchanged patch rebuilds
#                       nothing, and an added, removed or reordered one is noticed even
#                       when its file is older than the copy.

VM_MICROPY_DIR := $(BUILD)/micropython-1.25.0-lociOS
VM_PATCHES := $(sort $(wildcard vm/patches/*.patch))
VM_PATCH_STAMP := $(VM_MICROPY_DIR)/.lociOS-patches.sha256
VM_PATCH_SUM := $(firstword $(shell { echo $(abspath $(MICROPY_DIR)); \
	sha256sum /dev/null $(VM_PATCHES); } | sha256sum))

# A fresh copy each time: every file gets a new mtime, so objects built from an older
# copy are all rebuilt (a file that a removed patch no longer changes included). -H:
# when MICROPY_DIR is a symbolic link, copy the tree it names, not the link (patching
# through a copied link would patch the pristine tree itself).
$(VM_PATCH_STAMP): $(if $(filter-out $(VM_PATCH_SUM),$(file <$(VM_PATCH_STAMP))),FORCE) \
		| $(SETUP_STAMP)
	@echo "PATCH   $(VM_MICROPY_DIR) ($(words $(VM_PATCHES)) patches)"
	@rm -rf $(VM_MICROPY_DIR) $(VM_MICROPY_DIR).tmp
	@mkdir -p $(dir $(VM_MICROPY_DIR))
	@cp -rH $(MICROPY_DIR) $(VM_MICROPY_DIR).tmp
	@for p in $(VM_PATCHES); do \
		head -n 1 $$p | grep -q '^Reason: .' || { \
			echo "vm/patches: $$p: the first line must be 'Reason: <why>'" >&2; exit 1; }; \
		patch -d $(VM_MICROPY_DIR).tmp -p1 --batch --forward --fuzz=0 --quiet \
			--no-backup-if-mismatch -r - -i $(CURDIR)/$$p >$(VM_MICROPY_DIR).tmp.log 2>&1 || { \
			cat $(VM_MICROPY_DIR).tmp.log >&2; \
			echo "vm/patches: $$p does not apply to $(MICROPY_DIR)" >&2; exit 1; }; \
	done
	@rm -f $(VM_MICROPY_DIR).tmp.log
	@echo $(VM_PATCH_SUM) >$(VM_MICROPY_DIR).tmp/$(notdir $(VM_PATCH_STAMP))
	@mv $(VM_MICROPY_DIR).tmp $(VM_MICROPY_DIR)

.PHONY: vm-patches
vm-patches: $(VM_PATCH_STAMP)
	@:
