# SPDX-License-Identifier: MIT
# LociOS top-level build. `make run` and `make test` are all a new user needs; both
# bring in what is missing first (tools/build/setup.sh), quietly when nothing is.
#
# Pieces and who builds them:
#   boot/boot.mk      BOOTX64.EFI, our UEFI loader, sealed with the kernel's SHA-256
#   kernel/kernel.mk  the ring-0 core's objects and its linker script
#   port/Makefile     MicroPython 1.25.0 core + our port, as one static library
#   this file         setup, the final two-stage kernel link (symbol table), the disk
#                     image, QEMU launch profiles and the test entry points

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

.PHONY: all setup build image run debug test test-host test-qemu lint docs-check bench clean distclean

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
		KERNEL_INC=$(abspath kernel) $(abspath $(PORT_LIB))

# ---- Final kernel link, in two stages --------------------------------------------------
# Stage 1 links with an empty symbol table; tools/build/symtab.py turns its symbols into a
# blob that stage 2 links into .ksymtab, the last section of the image, so no other
# address moves (symtab.py --check proves it).
KERNEL_LINK_INPUTS = $(KERNEL_OBJS) --whole-archive $(PORT_LIB) --no-whole-archive $(LIBGCC)
# Deferred (=): asked of the compiler only when the link runs, after set-up installed it.
LIBGCC = $(shell $(CC) -print-libgcc-file-name)

$(BUILD)/kernel.stage1.elf: $(KERNEL_OBJS) $(KERNEL_LDSCRIPT) $(PORT_LIB) $(BUILD)/kernel/symtab_empty.o
	@echo "LD      $@"
	@$(LD) -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack -T $(KERNEL_LDSCRIPT) \
		-o $@ $(KERNEL_LINK_INPUTS) $(BUILD)/kernel/symtab_empty.o

$(BUILD)/kernel/symtab.o: $(BUILD)/kernel.stage1.elf tools/build/symtab.py
	@echo "SYMTAB  $@"
	@$(PY) tools/build/symtab.py build $< $(BUILD)/kernel/symtab.bin
	@$(OBJCOPY) -I binary -O elf64-x86-64 -B i386:x86-64 \
		--rename-section .data=.ksymtab,alloc,load,readonly,data,contents \
		$(BUILD)/kernel/symtab.bin $@

$(KERNEL_ELF): $(BUILD)/kernel.stage1.elf $(BUILD)/kernel/symtab.o
	@echo "LD      $@"
	@$(LD) -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack -T $(KERNEL_LDSCRIPT) \
		-o $@ $(KERNEL_LINK_INPUTS) $(BUILD)/kernel/symtab.o
	@$(PY) tools/build/symtab.py check $(BUILD)/kernel.stage1.elf $@

# ---- Disk image ------------------------------------------------------------------------
$(IMAGE): $(LOADER) $(KERNEL_ELF) tools/build/mkimage.py
	@echo "IMAGE   $@"
	@$(PY) tools/build/mkimage.py --loader $(LOADER) --kernel $(KERNEL_ELF) -o $@

build: $(SETUP_STAMP) $(IMAGE)
image: build

# ---- QEMU ------------------------------------------------------------------------------
run: build
	@$(PY) qemu/launch.py run --image $(IMAGE) $(LAUNCH_OPTS) -- $(QEMU_ARGS)

debug: build
	@$(PY) qemu/launch.py debug --image $(IMAGE) $(LAUNCH_OPTS) --elf $(KERNEL_ELF) -- $(QEMU_ARGS)

# ---- Tests -----------------------------------------------------------------------------
test: build lint docs-check
	@$(PY) -m pytest -q tests/host tests/qemu

test-host: build
	@$(PY) -m pytest -q tests/host

test-qemu: build
	@$(PY) -m pytest -q tests/qemu

bench: build
	@$(PY) tools/bench/bench_boot.py -n 5 --mem $(MEM)

lint: $(SETUP_STAMP)
	@$(VENV)/bin/ruff check --quiet tools tests qemu vm loci

# Every `make TARGET` and repository path the tracked *.md files name must exist.
docs-check: $(SETUP_STAMP)
	@$(PY) tools/build/docs_check.py

clean:
	rm -rf $(BUILD)/boot $(BUILD)/kernel $(BUILD)/port $(BUILD)/*.elf $(IMAGE)

distclean:
	rm -rf $(BUILD) $(VENV)
