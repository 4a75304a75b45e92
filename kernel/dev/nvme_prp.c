// SPDX-License-Identifier: MIT
// NVMe PRP entries and transfer sizes (nvme_prp.h).
#include "nvme_prp.h"

int nvme_prp(uint64_t phys, uint32_t bytes, uint64_t list_phys, uint64_t *list, unsigned list_max,
             uint64_t *prp1, uint64_t *prp2) {
    // PRP1 may start inside a page; every later entry names a whole page.
    uint64_t first = phys & ~(uint64_t)(NVME_PAGE - 1);
    uint64_t end = phys + bytes;
    uint64_t pages = (end - first + NVME_PAGE - 1) / NVME_PAGE;
    *prp1 = phys;
    *prp2 = 0;
    if (pages <= 1) {
        return 0;
    }
    if (pages == 2) {
        *prp2 = first + NVME_PAGE;
        return 0;
    }
    if (pages - 1 > list_max) {
        return -1;
    }
    for (uint64_t i = 1; i < pages; i++) {
        list[i - 1] = first + i * NVME_PAGE;
    }
    *prp2 = list_phys;
    return (int)(pages - 1);
}

uint32_t nvme_max_blocks(uint32_t block_size, uint32_t buffer_bytes, uint8_t mdts) {
    if (!block_size) {
        return 0;
    }
    uint64_t bytes = buffer_bytes;
    // MDTS counts in units of the minimum memory page size; the driver uses 4 KiB pages
    // only on controllers whose minimum is 4 KiB, so that is the unit.
    if (mdts && mdts < 32) {
        uint64_t limit = (uint64_t)NVME_PAGE << mdts;
        bytes = limit < bytes ? limit : bytes;
    }
    uint64_t n = bytes / block_size;
    return n > 65536 ? 65536 : (uint32_t)n;
}
