// SPDX-License-Identifier: MIT
// Turns the raw UEFI memory map into bootinfo regions: kinds reduced, kernel pages
// carved out, sorted and coalesced. Pure C (no UEFI headers): it runs after
// ExitBootServices and is tested on the host.
#ifndef LOCIOS_BOOT_MEMMAP_H
#define LOCIOS_BOOT_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

#include "bootinfo.h"

// One 4 KiB-aligned range of kernel pages (from struct elf_segment).
struct memmap_range {
    uint64_t base;
    uint64_t pages;
};

// The bootinfo kind for an EFI memory type and attribute word.
uint32_t memmap_kind(uint32_t efi_type, uint64_t attribute);

// Walks `map_size` bytes of EFI_MEMORY_DESCRIPTORs, `desc_size` apart, into out[],
// which holds `cap` regions. `kernel` lists `nkernel` non-overlapping ranges, sorted
// by base, reported as BOOTINFO_MEM_KERNEL wherever they fall. Returns the number of regions
// written; *dropped counts regions that did not fit (0 when all fit).
uint32_t memmap_translate(const void *map, size_t map_size, size_t desc_size,
                          const struct memmap_range *kernel, uint32_t nkernel,
                          struct bootinfo_mem_region *out, uint32_t cap, uint32_t *dropped);

#endif
