// SPDX-License-Identifier: MIT
// The page tables the kernel starts on (boot/PROTOCOL.md, "CPU state at kernel entry"):
// an identity map of all memory the firmware reports, at least the low 4 GiB, and the
// framebuffer, in 2 MiB pages; and the kernel's virtual window mapped onto the block
// elf_load placed it in, in 4 KiB pages, writable only where a segment is. Built in
// loader data before ExitBootServices, loaded into CR3 just before the jump.
#include <string.h>

#include "loader.h"

#define PAGE         ELF_CHECK_PAGE
#define P            (1ULL << 0)
#define W            (1ULL << 1)
#define PS           (1ULL << 7)
#define ADDR_MASK    0x000ffffffffff000ULL
#define GIB          (1ULL << 30)
#define IDENTITY_MIN (4ULL << 30)

struct pool {
    uint64_t *next, *end;
};

// A zeroed table from the pool, or NULL when it is used up (the count is exact, so
// that would be a bug here, reported rather than written past).
static uint64_t *take(struct pool *p) {
    if (p->end - p->next < 512) {
        return NULL;
    }
    uint64_t *t = p->next;
    p->next += 512;
    return t;
}

static uint64_t *child(struct pool *p, uint64_t *table, unsigned idx) {
    if (!table) {
        return NULL;
    }
    if (!(table[idx] & P)) {
        uint64_t *t = take(p);
        if (!t) {
            return NULL;
        }
        table[idx] = (uint64_t)(uintptr_t)t | P | W;
    }
    return (uint64_t *)(uintptr_t)(table[idx] & ADDR_MASK);
}

// The end of everything the identity map must cover: the memory map, 4 GiB, the
// framebuffer (which may lie above all RAM and outside the map).
static EFI_STATUS identity_top(const struct bootinfo_framebuffer *fb, uint64_t *top) {
    UINTN size = 0, key, dsize;
    UINT32 dver;
    uint8_t *map = NULL;
    if (g_bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver) != EFI_BUFFER_TOO_SMALL) {
        return fail(EFI_LOAD_ERROR, "GetMemoryMap did not report its size");
    }
    size += LOADER_MAP_SPARE_DESC * dsize;
    EFI_STATUS s = g_bs->AllocatePool(EfiLoaderData, size, (void **)&map);
    if (s != EFI_SUCCESS) {
        return fail(s, "no memory for the memory map");
    }
    s = g_bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map, &key, &dsize, &dver);
    *top = IDENTITY_MIN;
    for (UINTN off = 0; s == EFI_SUCCESS && off + dsize <= size; off += dsize) {
        const EFI_MEMORY_DESCRIPTOR *d = (const EFI_MEMORY_DESCRIPTOR *)(map + off);
        uint64_t e = d->PhysicalStart + d->NumberOfPages * PAGE;
        if (e > *top && e <= LOADER_IDENTITY_MAX) {
            *top = e;
        }
    }
    g_bs->FreePool(map);
    if (s != EFI_SUCCESS) {
        return fail(s, "GetMemoryMap failed (%s)", efi_status_name(s));
    }
    uint64_t fb_end = fb->base + fb->size;
    if (fb->base && fb_end > *top && fb_end <= LOADER_IDENTITY_MAX) {
        *top = fb_end;
    }
    *top = (*top + GIB - 1) & ~(GIB - 1);
    return EFI_SUCCESS;
}

EFI_STATUS boot_page_tables(const struct elf_image *img, uint64_t phys_base,
                            const struct bootinfo_framebuffer *fb, uint64_t *cr3) {
    uint64_t top;
    EFI_STATUS s = identity_top(fb, &top);
    if (s != EFI_SUCCESS) {
        return s;
    }
    // One PML4, a PDPT per 512 GiB and a PD per GiB of identity map, one PDPT and one
    // PD for the kernel window, one PT per 2 MiB of kernel.
    uint64_t gibs = top / GIB;
    uint64_t kpts = ((img->virt_end - 1) >> 21) - (img->virt_start >> 21) + 1;
    uint64_t tables = 1 + (gibs + 511) / 512 + gibs + 2 + kpts;
    EFI_PHYSICAL_ADDRESS at = 0xffffffffULL;
    s = g_bs->AllocatePages(AllocateMaxAddress, EfiLoaderData, tables, &at);
    if (s != EFI_SUCCESS) {
        return fail(s, "no memory for %llu page-table pages (%s)", (unsigned long long)tables,
                    efi_status_name(s));
    }
    memset((void *)(uintptr_t)at, 0, tables * PAGE);
    struct pool pool = { (uint64_t *)(uintptr_t)at, (uint64_t *)(uintptr_t)at + tables * 512 };
    uint64_t *pml4 = take(&pool);

    for (uint64_t a = 0; a < top; a += 2ULL << 20) {
        uint64_t *pdpt = child(&pool, pml4, a >> 39 & 511);
        uint64_t *pd = child(&pool, pdpt, a >> 30 & 511);
        if (!pd) {
            return fail(EFI_BUFFER_TOO_SMALL, "page tables: pool of %llu pages too small",
                        (unsigned long long)tables);
        }
        pd[a >> 21 & 511] = a | P | W | PS;
    }
    for (uint32_t i = 0; i < img->count; i++) {
        const struct elf_segment *sg = &img->seg[i];
        for (uint64_t k = 0; k < sg->page_count; k++) {
            uint64_t va = sg->page_base + k * PAGE;
            uint64_t pa = phys_base + (va - img->virt_start);
            uint64_t *pdpt = child(&pool, pml4, va >> 39 & 511);
            uint64_t *pd = child(&pool, pdpt, va >> 30 & 511);
            uint64_t *pt = child(&pool, pd, va >> 21 & 511);
            if (!pt) {
                return fail(EFI_BUFFER_TOO_SMALL,
                            "page tables: pool of %llu pages too "
                            "small",
                            (unsigned long long)tables);
            }
            pt[va >> 12 & 511] = pa | P | ((sg->flags & 2) ? W : 0);
        }
    }
    con_printf("LociOS loader: page tables: identity [0, %llu GiB), kernel window at "
               "0x%llx\n",
               (unsigned long long)gibs, (unsigned long long)img->virt_start);
    *cr3 = (uint64_t)(uintptr_t)pml4;
    return EFI_SUCCESS;
}
