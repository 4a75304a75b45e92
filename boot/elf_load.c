// SPDX-License-Identifier: MIT
// Places the checked PT_LOAD segments at their physical addresses: pages taken with
// AllocatePages(AllocateAddress, EfiLoaderCode), file bytes copied, the rest zeroed.
#include <string.h>

#include "loader.h"

// Prints which firmware allocations sit in [base, end), to explain a refused address.
static void describe_range(uint64_t base, uint64_t end)
{
    UINTN size = 0, key, dsize;
    UINT32 dver;
    EFI_MEMORY_DESCRIPTOR *map = NULL;
    if (g_bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver) != EFI_BUFFER_TOO_SMALL)
        return;
    size += LOADER_MAP_SPARE_DESC * dsize;
    if (g_bs->AllocatePool(EfiLoaderData, size, (void **)&map) != EFI_SUCCESS)
        return;
    if (g_bs->GetMemoryMap(&size, map, &key, &dsize, &dver) == EFI_SUCCESS) {
        for (UINTN off = 0; off + dsize <= size; off += dsize) {
            EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((uint8_t *)map + off);
            uint64_t b = d->PhysicalStart, e = b + d->NumberOfPages * ELF_CHECK_PAGE;
            if (e > base && b < end && d->Type != EfiConventionalMemory)
                con_printf("  firmware memory type %u at [0x%llx, 0x%llx)\n", d->Type,
                           (unsigned long long)b, (unsigned long long)e);
        }
    }
    g_bs->FreePool(map);
}

EFI_STATUS elf_load(const uint8_t *file, const struct elf_image *img)
{
    for (uint32_t i = 0; i < img->count; i++) {
        const struct elf_segment *s = &img->seg[i];
        EFI_PHYSICAL_ADDRESS at = s->page_base;
        EFI_STATUS st = g_bs->AllocatePages(AllocateAddress, EfiLoaderCode, s->page_count,
                                            &at);
        if (st != EFI_SUCCESS) {
            uint64_t end = s->page_base + s->page_count * ELF_CHECK_PAGE;
            st = fail(st, "cannot take [0x%llx, 0x%llx) for a kernel segment (%s); "
                      "the firmware uses part of it:", (unsigned long long)s->page_base,
                      (unsigned long long)end, efi_status_name(st));
            describe_range(s->page_base, end);
            for (uint32_t j = 0; j < i; j++)
                g_bs->FreePages(img->seg[j].page_base, img->seg[j].page_count);
            return st;
        }
        uint8_t *pages = (uint8_t *)(uintptr_t)s->page_base;
        memset(pages, 0, s->page_count * ELF_CHECK_PAGE);
        memcpy((uint8_t *)(uintptr_t)s->paddr, file + s->offset, s->filesz);
        con_printf("LociOS loader: segment %c%c%c [0x%llx, 0x%llx) file 0x%llx bytes\n",
                   (s->flags & 4) ? 'r' : '-', (s->flags & 2) ? 'w' : '-',
                   (s->flags & 1) ? 'x' : '-', (unsigned long long)s->paddr,
                   (unsigned long long)(s->paddr + s->memsz),
                   (unsigned long long)s->filesz);
    }
    return EFI_SUCCESS;
}
