// SPDX-License-Identifier: MIT
// Memory map translation (see memmap.h). The descriptor layout is the one fixed by
// the UEFI specification: Type (u32), pad, PhysicalStart, VirtualStart, NumberOfPages,
// Attribute (u64 each); entries are DescriptorSize bytes apart, which may exceed it.
#include "memmap.h"

#define PAGE          4096ULL
#define DESC_MIN_SIZE 40
#define ATTR_RUNTIME  0x8000000000000000ULL

enum efi_type {
    EFI_RESERVED,
    EFI_LOADER_CODE,
    EFI_LOADER_DATA,
    EFI_BS_CODE,
    EFI_BS_DATA,
    EFI_RT_CODE,
    EFI_RT_DATA,
    EFI_CONVENTIONAL,
    EFI_UNUSABLE,
    EFI_ACPI_RECLAIM,
    EFI_ACPI_NVS,
    EFI_MMIO,
    EFI_MMIO_PORT,
    EFI_PAL_CODE,
    EFI_PERSISTENT,
};

static uint32_t kind_of_type(uint32_t efi_type) {
    switch (efi_type) {
        case EFI_CONVENTIONAL:
            return BOOTINFO_MEM_USABLE;
        case EFI_LOADER_CODE:
        case EFI_LOADER_DATA:
        case EFI_BS_CODE:
        case EFI_BS_DATA:
            return BOOTINFO_MEM_RECLAIMABLE;
        case EFI_RT_CODE:
        case EFI_RT_DATA:
            return BOOTINFO_MEM_RUNTIME;
        case EFI_ACPI_RECLAIM:
            return BOOTINFO_MEM_ACPI_RECLAIM;
        case EFI_ACPI_NVS:
            return BOOTINFO_MEM_ACPI_NVS;
        case EFI_MMIO:
        case EFI_MMIO_PORT:
            return BOOTINFO_MEM_MMIO;
        default:
            return BOOTINFO_MEM_RESERVED;
    }
}

// Memory the firmware flags for runtime use is never handed out, whatever its type.
uint32_t memmap_kind(uint32_t efi_type, uint64_t attribute) {
    uint32_t kind = kind_of_type(efi_type);
    if ((attribute & ATTR_RUNTIME) &&
        (kind == BOOTINFO_MEM_USABLE || kind == BOOTINFO_MEM_RECLAIMABLE)) {
        return BOOTINFO_MEM_RUNTIME;
    }
    return kind;
}

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

struct sink {
    struct bootinfo_mem_region *out;
    uint32_t cap, count, dropped;
};

static void emit(struct sink *s, uint64_t base, uint64_t end, uint32_t kind, uint32_t type) {
    if (end <= base) {
        return;
    }
    if (s->count == s->cap) {
        s->dropped++;
        return;
    }
    struct bootinfo_mem_region *r = &s->out[s->count++];
    r->base = base;
    r->pages = (end - base) / PAGE;
    r->kind = kind;
    r->efi_type = type;
}

// Emits [base, end) of one descriptor, with kernel ranges cut out as KERNEL.
static void emit_split(struct sink *s, uint64_t base, uint64_t end, uint32_t kind, uint32_t type,
                       const struct memmap_range *k, uint32_t nk) {
    uint64_t cur = base;
    for (uint32_t i = 0; i < nk; i++) {
        uint64_t kb = k[i].base, ke = k[i].base + k[i].pages * PAGE;
        if (ke <= cur || kb >= end) {
            continue;
        }
        uint64_t lo = kb > cur ? kb : cur, hi = ke < end ? ke : end;
        emit(s, cur, lo, kind, type);
        emit(s, lo, hi, BOOTINFO_MEM_KERNEL, type);
        cur = hi;
    }
    emit(s, cur, end, kind, type);
}

static void sort_and_coalesce(struct sink *s) {
    struct bootinfo_mem_region *r = s->out;
    for (uint32_t i = 1; i < s->count; i++) {
        struct bootinfo_mem_region v = r[i];
        uint32_t j = i;
        while (j > 0 && r[j - 1].base > v.base) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = v;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (n > 0 && r[n - 1].kind == r[i].kind &&
            r[n - 1].base + r[n - 1].pages * PAGE == r[i].base) {
            r[n - 1].pages += r[i].pages;
            continue;
        }
        r[n++] = r[i];
    }
    s->count = n;
}

uint32_t memmap_translate(const void *map, size_t map_size, size_t desc_size,
                          const struct memmap_range *kernel, uint32_t nkernel,
                          struct bootinfo_mem_region *out, uint32_t cap, uint32_t *dropped) {
    struct sink s = { out, cap, 0, 0 };
    const uint8_t *p = map;
    if (desc_size >= DESC_MIN_SIZE) {
        for (size_t off = 0; map_size - off >= desc_size; off += desc_size) {
            const uint8_t *d = p + off;
            uint32_t type = (uint32_t)rd64(d) & 0xffffffffu;
            uint64_t base = rd64(d + 8), pages = rd64(d + 24), attr = rd64(d + 32);
            if (pages == 0 || base % PAGE != 0 || pages > (UINT64_MAX - base) / PAGE) {
                continue;
            }
            emit_split(&s, base, base + pages * PAGE, memmap_kind(type, attr), type, kernel,
                       nkernel);
            // Coalesce as we go so a long sorted map never overflows out[] early.
            if (s.count == s.cap) {
                sort_and_coalesce(&s);
            }
        }
    }
    sort_and_coalesce(&s);
    *dropped = s.dropped;
    return s.count;
}
