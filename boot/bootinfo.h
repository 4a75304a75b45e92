// SPDX-License-Identifier: MIT
// The boot hand-off: what BOOTX64.EFI gives the kernel after ExitBootServices.
// This header is the whole ABI between boot/ and kernel/; boot/PROTOCOL.md explains it.
// Any change to a field's meaning or offset bumps BOOTINFO_VERSION.
#ifndef LOCIOS_BOOT_BOOTINFO_H
#define LOCIOS_BOOT_BOOTINFO_H

#include <stdint.h>

#define BOOTINFO_MAGIC   0x4f464e4953434f4cULL  // "LOCSINFO" read as little-endian bytes
#define BOOTINFO_VERSION 3

// Memory region kinds, reduced from the UEFI memory types to what the kernel acts on.
enum bootinfo_mem_kind {
    BOOTINFO_MEM_USABLE = 1,        // EfiConventionalMemory: free for the kernel
    BOOTINFO_MEM_RECLAIMABLE = 2,   // Boot services code/data, loader data: free once
                                    // the kernel has its own GDT/IDT/page tables
    BOOTINFO_MEM_KERNEL = 3,        // the loaded kernel image (PT_LOAD segments)
    BOOTINFO_MEM_ACPI_RECLAIM = 4,  // ACPI tables: keep until parsed
    BOOTINFO_MEM_ACPI_NVS = 5,      // keep forever
    BOOTINFO_MEM_RUNTIME = 6,       // UEFI runtime services: keep forever
    BOOTINFO_MEM_MMIO = 7,          // memory-mapped I/O
    BOOTINFO_MEM_RESERVED = 8,      // anything else: never touch
};

struct bootinfo_mem_region {
    uint64_t base;      // physical address, 4 KiB aligned
    uint64_t pages;     // number of 4 KiB pages
    uint32_t kind;      // enum bootinfo_mem_kind
    uint32_t efi_type;  // the original EFI_MEMORY_TYPE, for diagnostics
};

struct bootinfo_framebuffer {
    uint64_t base;           // physical address; 0 when the firmware has no usable GOP
    uint64_t size;           // bytes, from the GOP (at least stride * height * 4)
    uint32_t width, height;  // pixels
    uint32_t stride;         // pixels per scan line (not bytes, not width)
    uint32_t format;         // 0 = RGBX 8 bit, 1 = BGRX 8 bit
};

// bootinfo.loader_flags: what the loader did to the machine on request of a boot option.
#define BOOTINFO_FLAG_X2APIC_SET (1u << 0)  // loader_x2apic=1 switched the LAPIC to x2APIC

#define BOOTINFO_MAX_REGIONS 512
#define BOOTINFO_OPTIONS_MAX 256

struct bootinfo {
    uint64_t magic;      // BOOTINFO_MAGIC
    uint32_t version;    // BOOTINFO_VERSION
    uint32_t size;       // sizeof(struct bootinfo) as the loader built it
    uint64_t acpi_rsdp;  // physical address of the ACPI 2.0+ RSDP (1.0 if no 2.0), or 0
    struct bootinfo_framebuffer fb;
    uint8_t kernel_sha256[32];  // the digest the loader measured and checked the kernel ELF with
    // The kernel's pages: the physical block [kernel_phys_start, kernel_phys_end) holds
    // the virtual range starting at kernel_virt_start, page for page.
    uint64_t kernel_phys_start, kernel_phys_end;
    uint64_t kernel_virt_start;
    uint64_t efi_system_table;  // physical address of the EFI system table (runtime services)
    uint64_t loader_tsc_start;  // TSC when BOOTX64.EFI started
    uint64_t loader_tsc_exit;   // TSC just before jumping to the kernel
    uint32_t loader_flags;      // BOOTINFO_FLAG_*
    uint32_t region_count;      // valid entries in regions[]
    struct bootinfo_mem_region regions[BOOTINFO_MAX_REGIONS];  // sorted by base, coalesced
    // Since version 2: the boot options from \LOCIOS\OPTIONS.TXT, printable ASCII words
    // separated by single spaces, NUL-terminated; "" when the file is absent. Not covered
    // by the seal: only tunables that cannot weaken a check may be read from here.
    char options[BOOTINFO_OPTIONS_MAX];
};

// The kernel entry point: SysV ABI, interrupts off, called on the loader's stack with
// the loader's page tables (identity map plus the kernel's virtual window) active.
typedef void (*bootinfo_kernel_entry)(struct bootinfo *info);

#endif
