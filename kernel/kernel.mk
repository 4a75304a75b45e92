# SPDX-License-Identifier: MIT
# The ring-0 core's objects, flags and linker script, included by the top Makefile
# (which does the final two-stage link with the port library and the symbol table).

KERNEL_LDSCRIPT := kernel/linker.ld

KERNEL_C_SRCS := \
	kernel/kmain.c kernel/cpu.c kernel/interrupt.c kernel/fault.c kernel/ksym.c \
	kernel/frame_alloc.c kernel/mm_init.c kernel/paging.c kernel/kmem.c \
	kernel/uart.c kernel/kprint.c kernel/acpi.c kernel/apic.c kernel/time.c \
	kernel/power.c kernel/kio.c kernel/klib.c kernel/probe.c \
	kernel/crash.c kernel/console.c kernel/dev/pci.c kernel/cpu_features.c kernel/tsc_calibrate.c kernel/efi_runtime.c \
	kernel/dev/keymap.c kernel/dev/i8042.c kernel/dev/xhci.c kernel/dev/usb.c kernel/dev/usb_hub.c \
	kernel/dev/usb_kbd.c kernel/dev/usb_msc.c kernel/dev/usb_msc_bot.c kernel/dev/blk.c kernel/dev/virtio_blk.c kernel/dev/nvme.c kernel/dev/nvme_prp.c \
	kernel/dev/fbcon.c kernel/dev/fbcon_term.c kernel/dev/fbcon_draw.c kernel/dev/fbcon_font.c
KERNEL_S_SRCS := kernel/entry.S kernel/isr.S kernel/probe_access.S

# The screen console's fonts: Spleen (Debian's fonts-spleen, BSD-2-Clause), converted to
# C by our own tools/build/psf2c.py at build time; a font that does not parse stops here.
KFONT_DIR   ?= /usr/share/consolefonts
KFONT_FILES := $(KFONT_DIR)/spleen-8x16.psfu.gz $(KFONT_DIR)/spleen-12x24.psfu.gz \
	$(KFONT_DIR)/spleen-16x32.psfu.gz
KFONT_C     := $(BUILD)/kernel/dev/fbcon_font_data.c
KFONT_OBJ   := $(BUILD)/kernel/dev/fbcon_font_data.o

KERNEL_OBJS := $(patsubst kernel/%.c,$(BUILD)/kernel/%.o,$(KERNEL_C_SRCS)) \
	$(patsubst kernel/%.S,$(BUILD)/kernel/%.o,$(KERNEL_S_SRCS)) $(KFONT_OBJ)

# Deferred and asked once: on a fresh machine gcc exists only after set-up has run.
GCC_INCLUDE = $(eval GCC_INCLUDE := $(shell $(CC) -print-file-name=include))$(GCC_INCLUDE)

KERNEL_CFLAGS = -std=c11 -Wall -Wextra -Werror -ffreestanding -nostdinc \
	-isystem $(GCC_INCLUDE) \
	-m64 -march=x86-64 -fno-pic -fno-pie -mcmodel=kernel -mno-red-zone \
	-fno-stack-protector -fno-stack-check -fno-asynchronous-unwind-tables \
	-fno-omit-frame-pointer -O2 -g -MMD -MP
KERNEL_ASFLAGS := -m64 -fno-pic -fno-pie -g -MMD -MP -Ikernel

# The five libc functions must not be compiled into calls to themselves.
$(BUILD)/kernel/klib.o: KERNEL_CFLAGS += -fno-builtin -fno-tree-loop-distribute-patterns

$(BUILD)/kernel/%.o: kernel/%.c
	@mkdir -p $(@D)
	@echo "CC      $@"
	@$(CC) $(KERNEL_CFLAGS) -c $< -o $@

# The font files come with set-up's base group (fonts-spleen); set-up runs first.
$(KFONT_FILES): | $(SETUP_STAMP)

$(KFONT_C): $(KFONT_FILES) tools/build/psf2c.py | $(SETUP_STAMP)
	@mkdir -p $(@D)
	@echo "PSF2C   $@"
	@$(PY) tools/build/psf2c.py -o $@ $(KFONT_FILES)

$(KFONT_OBJ): $(KFONT_C) kernel/dev/fbcon_font.h
	@echo "CC      $@"
	@$(CC) $(KERNEL_CFLAGS) -Ikernel -c $< -o $@

$(BUILD)/kernel/%.o: kernel/%.S
	@mkdir -p $(@D)
	@echo "AS      $@"
	@$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

-include $(KERNEL_OBJS:.o=.d) $(BUILD)/kernel/symtab_empty.d

# Screen console costs under -icount (the kernel/README.md figures).
.PHONY: bench-screen
bench-screen: build
	@$(PY) tools/bench/bench_screen.py

# Disk costs: guest cycles per 4 KiB under -icount and MB/s under TCG, sequential and random,
# through the disk module (kernel/README.md).
.PHONY: bench-disk
bench-disk: build
	@$(PY) tools/bench/bench_disk.py
