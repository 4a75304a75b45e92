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
	kernel/dev/usb_kbd.c
KERNEL_S_SRCS := kernel/entry.S kernel/isr.S kernel/probe_access.S

KERNEL_OBJS := $(patsubst kernel/%.c,$(BUILD)/kernel/%.o,$(KERNEL_C_SRCS)) \
	$(patsubst kernel/%.S,$(BUILD)/kernel/%.o,$(KERNEL_S_SRCS))

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

$(BUILD)/kernel/%.o: kernel/%.S
	@mkdir -p $(@D)
	@echo "AS      $@"
	@$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

-include $(KERNEL_OBJS:.o=.d) $(BUILD)/kernel/symtab_empty.d
