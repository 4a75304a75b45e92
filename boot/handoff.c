// SPDX-License-Identifier: MIT
// The point of no return: bus mastering stopped on bridges, final memory map,
// ExitBootServices (retrying when the map changed under us), map translation into
// bootinfo, our page tables, and the jump to the kernel.
#include "loader.h"
#include "memmap.h"

static void halt_forever(void) {
    for (;;) {
        __asm__ volatile("cli; hlt");
    }
}

EFI_STATUS handoff(struct bootinfo *bi, const struct elf_image *img, uint64_t cr3, int x2apic) {
    struct memmap_range kernel[1] = {
        { bi->kernel_phys_start, (bi->kernel_phys_end - bi->kernel_phys_start) / ELF_CHECK_PAGE },
    };

    UINTN size = 0, key, dsize;
    UINT32 dver;
    EFI_STATUS s = g_bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver);
    if (s != EFI_BUFFER_TOO_SMALL) {
        return fail(s, "GetMemoryMap did not report its size (%s)", efi_status_name(s));
    }
    // The allocation below can itself add descriptors, hence the padding.
    UINTN cap = size + LOADER_MAP_SPARE_DESC * dsize;
    uint8_t *map;
    s = g_bs->AllocatePool(EfiLoaderData, cap, (void **)&map);
    if (s != EFI_SUCCESS) {
        return fail(s, "no memory for the memory map (%llu bytes)", (unsigned long long)cap);
    }

    // Dry run, while we can still refuse: does the translated map fit in bootinfo?
    size = cap;
    s = g_bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map, &key, &dsize, &dver);
    if (s != EFI_SUCCESS) {
        return fail(s, "GetMemoryMap failed (%s)", efi_status_name(s));
    }
    uint32_t dropped;
    uint32_t n =
        memmap_translate(map, size, dsize, kernel, 1, bi->regions, BOOTINFO_MAX_REGIONS, &dropped);
    if (dropped != 0 || n > BOOTINFO_MAX_REGIONS - LOADER_REGION_MARGIN) {
        return fail(EFI_OUT_OF_RESOURCES,
                    "the memory map has %u regions (+%u dropped); "
                    "bootinfo holds %u with a margin of %u",
                    n, dropped, BOOTINFO_MAX_REGIONS, LOADER_REGION_MARGIN);
    }
    unsigned bridges = pci_quiesce_bridges();
    con_printf("LociOS loader: bus mastering stopped on %u PCI bridge%s\n", bridges,
               bridges == 1 ? "" : "s");
    con_printf("LociOS loader: %u memory regions; exiting boot services\n", n);

    // From here to a successful exit: no printing, no allocation.
    for (unsigned tries = 0; tries < LOADER_EXIT_TRIES; tries++) {
        size = cap;
        s = g_bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map, &key, &dsize, &dver);
        if (s != EFI_SUCCESS) {
            break;
        }
        s = g_bs->ExitBootServices(g_image, key);
        if (s != EFI_INVALID_PARAMETER) {
            break;
        }
    }
    if (s != EFI_SUCCESS) {
        return fail(s, "ExitBootServices failed (%s) after %u tries", efi_status_name(s),
                    LOADER_EXIT_TRIES);
    }

    // Boot services are gone: only our own memory and the raw UART from here on.
    bi->region_count =
        memmap_translate(map, size, dsize, kernel, 1, bi->regions, BOOTINFO_MAX_REGIONS, &dropped);
    bootinfo_kernel_entry entry = (bootinfo_kernel_entry)(uintptr_t)img->entry;
    if (x2apic) {
        cpu_x2apic_on();
        bi->loader_flags |= BOOTINFO_FLAG_X2APIC_SET;
    }
    bi->loader_tsc_exit = rdtsc();
    // Everything the loader still touches (its code, stack, bootinfo, the UART ports)
    // is identity mapped in the new tables too.
    __asm__ volatile("cli\n\tmov %0, %%cr3" : : "r"(cr3) : "memory");
    entry(bi);

    static const char returned[] = "LociOS loader: the kernel returned; halting\r\n";
    uart_write(returned, sizeof returned - 1);
    halt_forever();
    return EFI_ABORTED;
}
