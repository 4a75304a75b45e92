// SPDX-License-Identifier: MIT
// Address -> function name lookups in the .ksymtab blob, for symbolised fault dumps.
#include "kernel.h"
#include "ksymtab.h"

bool ksym_lookup(uintptr_t addr, const char **name, uintptr_t *offset) {
    const struct ksymtab_header *h = (const void *)__ksymtab_start;
    size_t avail = (size_t)(__ksymtab_end - __ksymtab_start);
    if (avail < sizeof(*h) || h->magic != KSYMTAB_MAGIC || h->version != KSYMTAB_VERSION ||
        h->count == 0 || sizeof(*h) + (size_t)h->count * sizeof(struct ksymtab_entry) > avail ||
        h->strtab_off >= avail) {
        return false;
    }
    const struct ksymtab_entry *e = (const void *)(h + 1);
    if (addr < e[0].addr) {
        return false;
    }
    // Last entry with e.addr <= addr.
    uint32_t lo = 0, hi = h->count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e[mid].addr <= addr) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    uint64_t off = addr - e[lo].addr;
    if (e[lo].size ? off >= e[lo].size : (lo + 1 < h->count && addr >= e[lo + 1].addr)) {
        return false;
    }
    if (h->strtab_off + e[lo].name_off >= avail) {
        return false;
    }
    *name = __ksymtab_start + h->strtab_off + e[lo].name_off;
    *offset = off;
    return true;
}
