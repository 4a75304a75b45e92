// SPDX-License-Identifier: MIT
// Places the checked kernel in physical memory: one block for all its pages, taken
// wherever the firmware has room (2 MiB aligned), or where the boot option
// loader_place= asks (a test aid: "random", or an address); file bytes copied, the rest
// zeroed. The kernel runs at its linked virtual addresses through the page tables of
// boot/pagetables.c, so the physical address is free.
#include <string.h>

#include "loader.h"
#include "options.h"

#define PLACE_ALIGN       (2ULL << 20)
#define PLACE_ALIGN_PAGES (PLACE_ALIGN / ELF_CHECK_PAGE)
#define RANDOM_TRIES      8

// Prints which firmware allocations sit in [base, end), to explain a refused address.
static void describe_range(uint64_t base, uint64_t end) {
    UINTN size = 0, key, dsize;
    UINT32 dver;
    EFI_MEMORY_DESCRIPTOR *map = NULL;
    if (g_bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver) != EFI_BUFFER_TOO_SMALL) {
        return;
    }
    size += LOADER_MAP_SPARE_DESC * dsize;
    if (g_bs->AllocatePool(EfiLoaderData, size, (void **)&map) != EFI_SUCCESS) {
        return;
    }
    if (g_bs->GetMemoryMap(&size, map, &key, &dsize, &dver) == EFI_SUCCESS) {
        for (UINTN off = 0; off + dsize <= size; off += dsize) {
            EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((uint8_t *)map + off);
            uint64_t b = d->PhysicalStart, e = b + d->NumberOfPages * ELF_CHECK_PAGE;
            if (e > base && b < end && d->Type != EfiConventionalMemory) {
                con_printf("  firmware memory type %u at [0x%llx, 0x%llx)\n", d->Type,
                           (unsigned long long)b, (unsigned long long)e);
            }
        }
    }
    g_bs->FreePool(map);
}

static uint64_t align_up(uint64_t v) {
    return (v + PLACE_ALIGN - 1) & ~(PLACE_ALIGN - 1);
}

// Anywhere: over-allocate by one alignment unit, keep the aligned middle, and give
// the ends back (a firmware that will not free part of a block only wastes them).
static EFI_STATUS place_anywhere(uint64_t pages, uint64_t *base) {
    EFI_PHYSICAL_ADDRESS at = 0;
    uint64_t total = pages + PLACE_ALIGN_PAGES - 1;
    EFI_STATUS s = g_bs->AllocatePages(AllocateAnyPages, EfiLoaderCode, total, &at);
    if (s != EFI_SUCCESS) {
        return fail(s, "no %llu KiB block of free memory for the kernel (%s)",
                    (unsigned long long)(pages * 4), efi_status_name(s));
    }
    *base = align_up(at);
    uint64_t head = (*base - at) / ELF_CHECK_PAGE, tail = total - head - pages;
    if (head) {
        g_bs->FreePages(at, head);
    }
    if (tail) {
        g_bs->FreePages(*base + pages * ELF_CHECK_PAGE, tail);
    }
    return EFI_SUCCESS;
}

static EFI_STATUS place_at(uint64_t at, uint64_t pages) {
    EFI_PHYSICAL_ADDRESS a = at;
    EFI_STATUS s = g_bs->AllocatePages(AllocateAddress, EfiLoaderCode, pages, &a);
    if (s != EFI_SUCCESS) {
        uint64_t end = at + pages * ELF_CHECK_PAGE;
        s = fail(s,
                 "loader_place: cannot take [0x%llx, 0x%llx) for the kernel (%s); the "
                 "firmware uses part of it:",
                 (unsigned long long)at, (unsigned long long)end, efi_status_name(s));
        describe_range(at, end);
    }
    return s;
}

static uint64_t xorshift64(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

// Counts the 2 MiB-aligned slots of `pages` in free memory, and returns slot `pick`.
static uint64_t free_slots(const uint8_t *map, UINTN size, UINTN dsize, uint64_t pages,
                           uint64_t pick, uint64_t *at) {
    uint64_t n = 0, need = pages * ELF_CHECK_PAGE;
    for (UINTN off = 0; off + dsize <= size; off += dsize) {
        const EFI_MEMORY_DESCRIPTOR *d = (const EFI_MEMORY_DESCRIPTOR *)(map + off);
        if (d->Type != EfiConventionalMemory) {
            continue;
        }
        uint64_t b = align_up(d->PhysicalStart);
        uint64_t e = d->PhysicalStart + d->NumberOfPages * ELF_CHECK_PAGE;
        if (b < LOADER_PLACE_MIN || e < b || e - b < need) {
            continue;
        }
        uint64_t slots = (e - b - need) / PLACE_ALIGN + 1;
        if (pick >= n && pick < n + slots) {
            *at = b + (pick - n) * PLACE_ALIGN;
        }
        n += slots;
    }
    return n;
}

static EFI_STATUS place_random(uint64_t pages, uint64_t *base) {
    UINTN size = 0, key, dsize;
    UINT32 dver;
    uint8_t *map = NULL;
    if (g_bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver) != EFI_BUFFER_TOO_SMALL) {
        return fail(EFI_LOAD_ERROR, "loader_place=random: no memory map");
    }
    size += LOADER_MAP_SPARE_DESC * dsize;
    EFI_STATUS s = g_bs->AllocatePool(EfiLoaderData, size, (void **)&map);
    if (s != EFI_SUCCESS) {
        return fail(s, "loader_place=random: no memory for the memory map");
    }
    s = g_bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map, &key, &dsize, &dver);
    uint64_t seed = rdtsc() | 1, at = 0;
    for (unsigned t = 0; s == EFI_SUCCESS && t < RANDOM_TRIES; t++) {
        uint64_t n = free_slots(map, size, dsize, pages, UINT64_MAX, &at);
        if (n == 0) {
            break;
        }
        free_slots(map, size, dsize, pages, xorshift64(&seed) % n, &at);
        EFI_PHYSICAL_ADDRESS a = at;
        if (g_bs->AllocatePages(AllocateAddress, EfiLoaderCode, pages, &a) == EFI_SUCCESS) {
            g_bs->FreePool(map);
            *base = at;
            return EFI_SUCCESS;
        }
    }
    g_bs->FreePool(map);
    return fail(EFI_OUT_OF_RESOURCES,
                "loader_place=random: found no free 2 MiB-aligned "
                "block of %llu KiB in %u tries",
                (unsigned long long)(pages * 4), RANDOM_TRIES);
}

// Parses "0x..." into *v; 0 on anything else.
static int parse_hex(const char *s, size_t len, uint64_t *v) {
    if (len < 3 || len > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
        return 0;
    }
    uint64_t r = 0;
    for (size_t i = 2; i < len; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16) {
            return 0;
        }
        r = r << 4 | d;
    }
    *v = r;
    return 1;
}

static EFI_STATUS place(uint64_t pages, const char *options, uint64_t *base, const char **how) {
    size_t len;
    const char *v = options_value(options, "loader_place", &len);
    if (!v) {
        *how = "anywhere";
        return place_anywhere(pages, base);
    }
    if (len == 6 && memcmp(v, "random", 6) == 0) {
        *how = "random";
        return place_random(pages, base);
    }
    uint64_t at;
    if (!parse_hex(v, len, &at) || at % ELF_CHECK_PAGE != 0 || at < LOADER_PLACE_MIN) {
        return fail(EFI_INVALID_PARAMETER,
                    "%s: loader_place=%.*s is not 'random' or a "
                    "4 KiB-aligned address above 0x%llx such as 0x40000000",
                    LOADER_OPTIONS_PATH_STR, (int)len, v, (unsigned long long)LOADER_PLACE_MIN);
    }
    *how = "fixed";
    *base = at;
    return place_at(at, pages);
}

EFI_STATUS elf_load(const uint8_t *file, const struct elf_image *img, const char *options,
                    uint64_t *phys_base) {
    uint64_t pages = (img->virt_end - img->virt_start) / ELF_CHECK_PAGE;
    const char *how = "";
    EFI_STATUS s = place(pages, options, phys_base, &how);
    if (s != EFI_SUCCESS) {
        return s;
    }
    uint8_t *block = (uint8_t *)(uintptr_t)*phys_base;
    memset(block, 0, pages * ELF_CHECK_PAGE);
    con_printf("LociOS loader: kernel placed at 0x%llx (%s), %llu KiB\n",
               (unsigned long long)*phys_base, how, (unsigned long long)(pages * 4));
    for (uint32_t i = 0; i < img->count; i++) {
        const struct elf_segment *sg = &img->seg[i];
        uint64_t at = *phys_base + (sg->vaddr - img->virt_start);
        memcpy((uint8_t *)(uintptr_t)at, file + sg->offset, sg->filesz);
        con_printf("LociOS loader: segment %c%c%c [0x%llx, 0x%llx) at 0x%llx, file 0x%llx "
                   "bytes\n",
                   (sg->flags & 4) ? 'r' : '-', (sg->flags & 2) ? 'w' : '-',
                   (sg->flags & 1) ? 'x' : '-', (unsigned long long)sg->vaddr,
                   (unsigned long long)(sg->vaddr + sg->memsz), (unsigned long long)at,
                   (unsigned long long)sg->filesz);
    }
    return EFI_SUCCESS;
}
