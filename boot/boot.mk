# SPDX-License-Identifier: MIT
# BOOTX64.EFI, our UEFI loader, on gnu-efi. Included by the top Makefile; also usable
# alone: `make -f boot/boot.mk boot-loader` builds the unsealed loader.
#
#   $(BOOT_UNSEALED)  the loader with an all-zero seal record (needs no kernel)
#   $(LOADER)         the same file with the kernel ELF's SHA-256 written in by
#                     tools/build/seal.py; the firmware-facing artefact

BUILD       ?= build
MICROPY_DIR ?= $(BUILD)/micropython-1.25.0
PY          ?= .venv/bin/python
LOADER      ?= $(BUILD)/boot/BOOTX64.EFI
KERNEL_ELF  ?= $(BUILD)/kernel.elf

BOOT_CC      ?= gcc
BOOT_LD      ?= ld
BOOT_OBJCOPY ?= objcopy

# gnu-efi lives in different places on different distributions.
EFI_INC  ?= /usr/include/efi
EFI_CRT0 ?= $(firstword $(wildcard /usr/lib/crt0-efi-x86_64.o \
                /usr/lib64/crt0-efi-x86_64.o /usr/lib/gnuefi/crt0-efi-x86_64.o) \
                /usr/lib/crt0-efi-x86_64.o)
EFI_LDS  ?= $(dir $(EFI_CRT0))elf_x86_64_efi.lds
EFI_LIBDIR ?= $(dir $(EFI_CRT0))

BOOT_OBJDIR   := $(BUILD)/boot/obj
BOOT_SO       := $(BUILD)/boot/loader.so
BOOT_UNSEALED := $(BUILD)/boot/BOOTX64.unsealed.efi
BOOT_SHA_DIR  := $(MICROPY_DIR)/lib/crypto-algorithms

BOOT_SRCS := main.c console.c uart.c kernel_file.c seal.c elf_check.c elf_load.c \
             sysinfo.c memmap.c handoff.c fmt.c mem.c options.c pagetables.c \
             cpu_prep.c pci_quiesce.c gop_mode.c
BOOT_OBJS := $(addprefix $(BOOT_OBJDIR)/,$(BOOT_SRCS:.c=.o)) $(BOOT_OBJDIR)/sha256.o

# The firmware calls with the Microsoft x64 ABI; gnu-efi's crt0 converts, and
# GNU_EFI_USE_MS_ABI lets us call protocol functions directly (they are ms_abi).
# No -fdata-sections: gnu-efi's linker script only gathers plain .bss into .data.
BOOT_BASE_CFLAGS := -O2 -ffreestanding -fno-stack-protector -fno-stack-check -fpic \
    -fshort-wchar -mno-red-zone -maccumulate-outgoing-args -fno-strict-aliasing \
    -fno-tree-loop-distribute-patterns -DGNU_EFI_USE_MS_ABI \
    -I$(EFI_INC) -I$(EFI_INC)/x86_64 -Iboot -I$(BOOT_SHA_DIR) -MMD -MP
BOOT_CFLAGS := -std=c11 -Wall -Wextra -Werror $(BOOT_BASE_CFLAGS)

.PHONY: boot-loader
boot-loader: $(BOOT_UNSEALED)

$(BOOT_OBJDIR)/%.o: boot/%.c
	@mkdir -p $(@D)
	@echo "CC      $@"
	@$(BOOT_CC) $(BOOT_CFLAGS) -c $< -o $@

# Vendored (MicroPython's copy of Brad Conte's public-domain SHA-256): built from
# the unpacked source, never copied into our tree, and not held to our warning flags.
# It uses uint32_t and memset without including <stdint.h> and <string.h> (MicroPython
# includes them first); GCC 14 (Debian 13) makes the implicit declaration an error.
$(BOOT_OBJDIR)/sha256.o: $(BOOT_SHA_DIR)/sha256.c | $(SETUP_STAMP)
	@mkdir -p $(@D)
	@echo "CC      $@"
	@$(BOOT_CC) -std=c11 $(BOOT_BASE_CFLAGS) -include stdint.h -include string.h -w -c $< -o $@

$(BOOT_SO): $(BOOT_OBJS)
	@echo "LD      $@"
	@$(BOOT_LD) -nostdlib -znocombreloc -shared -Bsymbolic --no-undefined \
		-T $(EFI_LDS) $(EFI_CRT0) $(BOOT_OBJS) -L$(EFI_LIBDIR) -lgnuefi -o $@

# The ELF sections that become the PE image. gnu-efi 3.0.18's linker script (Debian 13)
# puts .rodata in a section of its own where older ones fold it into .data; naming it
# is harmless where it does not exist.
BOOT_PE_SECTIONS := -j .text -j .sdata -j .data -j .rodata -j .dynamic -j .dynsym -j .rel \
                    -j .rela -j '.rel.*' -j '.rela.*' -j .reloc

$(BOOT_UNSEALED): $(BOOT_SO)
	@echo "EFI     $@"
	@$(BOOT_OBJCOPY) $(BOOT_PE_SECTIONS) --target efi-app-x86_64 --subsystem=10 $< $@

$(LOADER): $(BOOT_UNSEALED) $(KERNEL_ELF) tools/build/seal.py
	@echo "SEAL    $@"
	@$(PY) tools/build/seal.py --loader $(BOOT_UNSEALED) --kernel $(KERNEL_ELF) -o $@

-include $(BOOT_OBJS:.o=.d)

# A test-only UEFI application (tests/qemu/efi/squatter.c) built with the loader's
# toolchain: it occupies low memory, then starts the real loader. Never on the image
# `make run` boots; tests/qemu/test_placement.py puts it on an image of its own.
BOOT_TEST_DIR := $(BUILD)/boot/test
BOOT_SQUATTER := $(BOOT_TEST_DIR)/squatter.efi

$(BOOT_TEST_DIR)/squatter.o: tests/qemu/efi/squatter.c
	@mkdir -p $(@D)
	@echo "CC      $@"
	@$(BOOT_CC) $(BOOT_CFLAGS) -c $< -o $@

$(BOOT_TEST_DIR)/squatter.so: $(BOOT_TEST_DIR)/squatter.o
	@$(BOOT_LD) -nostdlib -znocombreloc -shared -Bsymbolic --no-undefined \
		-T $(EFI_LDS) $(EFI_CRT0) $< -L$(EFI_LIBDIR) -lefi -lgnuefi -o $@

$(BOOT_SQUATTER): $(BOOT_TEST_DIR)/squatter.so
	@echo "EFI     $@"
	@$(BOOT_OBJCOPY) $(BOOT_PE_SECTIONS) --target efi-app-x86_64 --subsystem=10 $< $@

.PHONY: boot-test-apps
boot-test-apps: $(BOOT_SQUATTER)
