# SPDX-License-Identifier: MIT
# LociOS top-level build. `make run` and `make test` are all a new user needs; both
# bring in what is missing first (tools/build/setup.sh), quietly when nothing is.
#
# Pieces and who builds them, in the order this file includes them. The order matters
# where a fragment uses another's variables in a rule's prerequisites (make expands those
# when it reads the line): boot.mk's $(BOOT_UNSEALED) is used by the test image below,
# patches.mk's $(VM_PATCH_STAMP) by rewrite.mk and by the port library, upstream.mk's
# reference builds by bench.mk and rewrite-check.mk.
#   kernel/kernel.mk            the ring-0 core's objects and its linker script
#   boot/boot.mk                BOOTX64.EFI, our UEFI loader (sealed here), test EFI apps
#   loci/field.mk               field-png, bench-field, bench-store
#   loci/mesh.mk                bench-loci, bench-repl, colony-NAME, colonies
#   vm/verifier.mk              verifier-fuzz, verifier-bench, verifier-soundness
#   vm/patches.mk               the patched MicroPython tree the port builds from
#   vm/rewrite.mk               rewrite-oracle, rewrite-suite, native-suite (host builds)
#   tests/upstream/upstream.mk  test-upstream, upstream-ref-unix/arm, soak
#   vm/bench.mk                 bench-vm, bench-vm-prof
#   vm/rewrite-check.mk         upstream-aggressive, rewrite-props-deep
#   port/Makefile               MicroPython 1.25.0 core + our port, as static libraries
#                               (run as a sub-make, not included)
#   this file                   set-up, the two-stage kernel links (symbol table), the
#                               shipped image and the test image, QEMU launch profiles,
#                               the test entry points

BUILD       := build
MICROPY_DIR ?= $(BUILD)/micropython-1.25.0
VENV        := .venv
PY          := $(VENV)/bin/python
CC          := gcc
LD          := ld
OBJCOPY     := objcopy

KERNEL_ELF  := $(BUILD)/kernel.elf
LOADER      := $(BUILD)/boot/BOOTX64.EFI
IMAGE       := $(BUILD)/lociOS.img
PORT_LIB    := $(BUILD)/port/libmicropython.a
SETUP_STAMP := $(BUILD)/.setup-ok

# Guest RAM for run/debug/test; the tests also boot other sizes on purpose.
MEM ?= 512M
# Extra QEMU arguments, e.g. QEMU_ARGS="-smp 2". ICOUNT=1: deterministic guest time.
QEMU_ARGS ?=
ICOUNT ?=
LAUNCH_OPTS := --mem $(MEM) $(if $(ICOUNT),--icount)

export MICROPY_DIR

.PHONY: all setup build image run debug flash test test-host test-qemu test-machines test-powercut sign lint \
	docs-check bench clean distclean

all: build

# Set-up runs on every invocation that needs it; it is cheap and silent when all is present.
setup:
	@tools/build/setup.sh

$(SETUP_STAMP): tools/build/setup.sh tools/build/fetch_micropython.sh tools/build/requirements.txt
	@tools/build/setup.sh
	@mkdir -p $(BUILD) && touch $@

# Packages only some targets need (tools/build/setup.sh's groups), installed on first use:
# a target lists $(call setup_group,NAME) among its prerequisites.
$(BUILD)/.setup-%: tools/build/setup.sh | $(SETUP_STAMP)
	@tools/build/setup.sh $*
	@touch $@
setup_group = $(BUILD)/.setup-$(1)

include kernel/kernel.mk
include boot/boot.mk
include loci/field.mk
include loci/mesh.mk
include vm/verifier.mk
include vm/patches.mk
include vm/rewrite.mk
include tests/upstream/upstream.mk
include vm/bench.mk
include vm/rewrite-check.mk

# ---- MicroPython port ----------------------------------------------------------------
# The port's own make knows its dependencies, so it always runs; asked for the archive
# itself, it rewrites it only when an object changed, and the kernel relinks only then.
# It builds from the patched VM tree (vm/patches.mk), not the pristine one.
.PHONY: FORCE
$(PORT_LIB): $(SETUP_STAMP) $(VM_PATCH_STAMP) FORCE
	@$(MAKE) --no-print-directory -C port \
		BUILD=$(abspath $(BUILD)/port) MICROPY_DIR=$(abspath $(VM_MICROPY_DIR)) \
		KERNEL_INC=$(abspath kernel) ROMFS_PYTHON=$(abspath $(PY)) $(abspath $(PORT_LIB))

# ---- Final kernel link, in two stages --------------------------------------------------
# Stage 1 links with an empty symbol table; tools/build/symtab.py turns its symbols into a
# blob that stage 2 links into .ksymtab, the last section of the image, so no other
# address moves (symtab.py --check proves it).
# Deferred (=): asked of the compiler only when the link runs, after set-up installed it.
LIBGCC = $(shell $(CC) -print-libgcc-file-name)
LINK_KERNEL = $(LD) -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack \
	-T $(KERNEL_LDSCRIPT)

# $(call kernel_elf,ELF,ARCHIVES): ELF linked from the kernel's objects and ARCHIVES, each
# taken whole (the port's library; the test build adds its test-only modules).
define kernel_elf
$(1:.elf=.stage1.elf): $(KERNEL_OBJS) $(KERNEL_LDSCRIPT) $(2) $(BUILD)/kernel/symtab_empty.o
	@mkdir -p $$(@D)
	@echo "LD      $$@"
	@$(LINK_KERNEL) -o $$@ $(KERNEL_OBJS) --whole-archive $(2) --no-whole-archive \
		$$(LIBGCC) $(BUILD)/kernel/symtab_empty.o

$(1:.elf=.symtab.o): $(1:.elf=.stage1.elf) tools/build/symtab.py
	@echo "SYMTAB  $$@"
	@$(PY) tools/build/symtab.py build $$< $(1:.elf=.symtab.bin)
	@$(OBJCOPY) -I binary -O elf64-x86-64 -B i386:x86-64 \
		--rename-section .data=.ksymtab,alloc,load,readonly,data,contents \
		$(1:.elf=.symtab.bin) $$@

$(1): $(1:.elf=.stage1.elf) $(1:.elf=.symtab.o)
	@echo "LD      $$@"
	@$(LINK_KERNEL) -o $$@ $(KERNEL_OBJS) --whole-archive $(2) --no-whole-archive \
		$$(LIBGCC) $(1:.elf=.symtab.o)
	@$(PY) tools/build/symtab.py check $(1:.elf=.stage1.elf) $$@
endef

$(eval $(call kernel_elf,$(KERNEL_ELF),$(PORT_LIB)))

# ---- Disk image ------------------------------------------------------------------------
$(IMAGE): $(LOADER) $(KERNEL_ELF) tools/build/mkimage.py
	@echo "IMAGE   $@"
	@$(PY) tools/build/mkimage.py --loader $(LOADER) --kernel $(KERNEL_ELF) -o $@

# ---- The test image ----------------------------------------------------------------------
# The same kernel plus the test-only modules (`_rwops`, `_fieldbench`; port/test_modules.c),
# with a loader sealed to it: what the tests that need those modules and `make bench-field`
# boot. build/lociOS.img, which `make run` boots and a USB stick gets, has neither.
TEST_BUILD   := $(BUILD)/test
TEST_KERNEL  := $(TEST_BUILD)/kernel.elf
TEST_LOADER  := $(TEST_BUILD)/BOOTX64.EFI
TEST_IMAGE   := $(TEST_BUILD)/lociOS.img
TEST_MODS    := $(BUILD)/port/libtestmods.a

$(TEST_MODS): $(PORT_LIB)
	@$(MAKE) --no-print-directory -C port \
		BUILD=$(abspath $(BUILD)/port) MICROPY_DIR=$(abspath $(VM_MICROPY_DIR)) \
		KERNEL_INC=$(abspath kernel) $(abspath $(TEST_MODS))

$(eval $(call kernel_elf,$(TEST_KERNEL),$(PORT_LIB) $(TEST_MODS)))

$(TEST_LOADER): $(BOOT_UNSEALED) $(TEST_KERNEL) tools/build/seal.py
	@echo "SEAL    $@"
	@$(PY) tools/build/seal.py --loader $(BOOT_UNSEALED) --kernel $(TEST_KERNEL) -o $@

$(TEST_IMAGE): $(TEST_LOADER) $(TEST_KERNEL) tools/build/mkimage.py
	@echo "IMAGE   $@"
	@$(PY) tools/build/mkimage.py --loader $(TEST_LOADER) --kernel $(TEST_KERNEL) -o $@

.PHONY: test-image
test-image: $(SETUP_STAMP) $(TEST_IMAGE)

build: $(SETUP_STAMP) $(IMAGE)
image: build

# ---- QEMU ------------------------------------------------------------------------------
run: build
	@$(PY) qemu/launch.py run --image $(IMAGE) $(LAUNCH_OPTS) -- $(QEMU_ARGS)

debug: build
	@$(PY) qemu/launch.py debug --image $(IMAGE) $(LAUNCH_OPTS) --elf $(KERNEL_ELF) -- $(QEMU_ARGS)

# ---- USB stick -------------------------------------------------------------------------
# `make flash DEV=/dev/sdX` builds, then writes the image to the stick and reads it back
# (tools/flash.py: it refuses mounted, fixed and system disks, and asks first); without DEV
# it lists the candidate disks. FLASH_OPTS passes more options (--yes, --force). The write
# needs root or write access to DEV; without either, sudo asks for it, for the write alone.
FLASH_OPTS ?=
flash:
	@if [ -z "$(DEV)" ]; then $(PY) tools/flash.py --list; \
		echo "make flash: give the stick as DEV=/dev/sdX (one of the disks above)" >&2; exit 2; fi
	@$(MAKE) --no-print-directory build
	@as=; if [ "$$(id -u)" != 0 ] && [ -e "$(DEV)" ] && [ ! -w "$(DEV)" ] && \
		command -v sudo >/dev/null; then \
		echo "make flash: writing $(DEV) needs root; asking sudo" >&2; as=sudo; fi; \
		$$as $(PY) tools/flash.py --image $(IMAGE) $(FLASH_OPTS) $(DEV)

# ---- Tests -----------------------------------------------------------------------------
test: build test-image boot-test-apps lint docs-check
	@$(PY) -m pytest -q tests/host tests/qemu

# The machine matrix of tests/qemu/test_machines.py, all rows (make test runs a subset);
# the table lands in build/machines/report.json and report.md.
test-machines: build boot-test-apps $(call setup_group,sign)
	@rm -f $(BUILD)/machines/report.json
	@$(PY) -m pytest -q --machines tests/qemu/test_machines.py
	@$(PY) tools/test/machines_report.py $(BUILD)/machines/report.json

# The power-cut loop of tests/qemu/test_powercut.py at CUTS SIGKILLs of QEMU (make test
# makes 3), its delays drawn from SEED; the summary lands in build/powercut/report.txt
# (every cut's record in report.json). 10-16 s a cut under TCG.
CUTS ?= 50
SEED ?= 1
.PHONY: test-powercut
test-powercut: build
	@rm -f $(BUILD)/powercut/report.txt $(BUILD)/powercut/report.json
	@LOCIOS_POWERCUT_CUTS=$(CUTS) LOCIOS_POWERCUT_SEED=$(SEED) \
		LOCIOS_POWERCUT_REPORT=$(BUILD)/powercut/report.txt \
		$(PY) -m pytest -q tests/qemu/test_powercut.py
	@cat $(BUILD)/powercut/report.txt

# Secure Boot with your own key: signs the sealed loader (the seal stays, so the signed
# loader still boots only the kernel it was sealed with) and writes an image with it.
sign: build $(call setup_group,sign)
	@test -n "$(KEY)" -a -n "$(CERT)" || { echo "make sign: give KEY=file.key CERT=file.crt (PEM), see README.md" >&2; exit 2; }
	@sbsign --key $(KEY) --cert $(CERT) --output $(BUILD)/boot/BOOTX64.signed.efi $(LOADER)
	@$(PY) tools/build/mkimage.py --loader $(BUILD)/boot/BOOTX64.signed.efi --kernel $(KERNEL_ELF) \
		-o $(BUILD)/lociOS-signed.img
	@echo "make sign: wrote $(BUILD)/lociOS-signed.img (loader signed with $(CERT))"

test-host: build test-image
	@$(PY) -m pytest -q tests/host

test-qemu: build test-image boot-test-apps
	@$(PY) -m pytest -q tests/qemu

bench: build
	@$(PY) tools/bench/bench_boot.py -n 5 --mem $(MEM)

# Our C, in the one style of .clang-format (the formatter is pinned in the .venv, so every
# machine formats alike); `make format` rewrites the files to it.
OWN_C = $(shell find boot kernel port vm loci tests -name '*.[ch]' -not -path '*/progs/*')

lint: $(SETUP_STAMP)
	@$(VENV)/bin/ruff check --quiet tools tests qemu vm loci
	@$(VENV)/bin/clang-format --dry-run --Werror $(OWN_C) 2>&1 | head -40; \
		$(VENV)/bin/clang-format --dry-run --Werror $(OWN_C) >/dev/null 2>&1 || { \
		echo "lint: C files differ from .clang-format; run make format" >&2; exit 1; }

.PHONY: format
format: $(SETUP_STAMP)
	@$(VENV)/bin/clang-format -i $(OWN_C)

# Every `make TARGET` and repository path the tracked *.md files name must exist.
docs-check: $(SETUP_STAMP)
	@$(PY) tools/build/docs_check.py

# /data (the image's LOCIDATA partition) is the user's: clean saves it, if it holds files,
# to $(DATA_KEEP), which mkimage.py puts into the next image; if it cannot, the image stays.
DATA_KEEP := $(BUILD)/lociOS-data.keep

clean:
	@if [ -f $(IMAGE) ]; then \
		$(PY) tools/datafs.py $(IMAGE) keep $(DATA_KEEP) || { \
		echo "make clean: could not save /data of $(IMAGE); left it in place" >&2; exit 1; }; fi
	rm -rf $(BUILD)/boot $(BUILD)/kernel $(BUILD)/port $(BUILD)/*.elf $(IMAGE)

distclean:
	@if [ -f $(IMAGE) ]; then \
		echo "make distclean: deletes /data of $(IMAGE) ($$($(PY) tools/datafs.py $(IMAGE) summary 2>/dev/null || echo unreadable))"; fi
	@if [ -f $(DATA_KEEP) ]; then echo "make distclean: deletes the saved /data $(DATA_KEEP)"; fi
	rm -rf $(BUILD) $(VENV)
