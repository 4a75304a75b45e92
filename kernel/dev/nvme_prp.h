// SPDX-License-Identifier: MIT
// NVMe data pointers (NVMe base specification 2.0, §4.1.1, PRP entries and lists): how
// one transfer of a physically contiguous buffer is described to the controller, and
// how a request is cut into transfers that fit. Pure arithmetic, so the host tests it.
#ifndef LOCIOS_KERNEL_DEV_NVME_PRP_H
#define LOCIOS_KERNEL_DEV_NVME_PRP_H

#include <stdint.h>

#define NVME_PAGE 4096u  // the controller memory page size the driver selects (CC.MPS 0)

// PRP1 and PRP2 for `bytes` (> 0) at physical address `phys` (contiguous). Up to two
// pages need no list: PRP2 is 0 or the second page's address. More pages put the
// address of every page after the first into `list` (a page of up to `list_max` entries
// at physical `list_phys`) and PRP2 points at it. Returns the number of list entries
// written, or -1 when they would not fit in `list_max`.
int nvme_prp(uint64_t phys, uint32_t bytes, uint64_t list_phys, uint64_t *list, unsigned list_max,
             uint64_t *prp1, uint64_t *prp2);

// The most blocks one command moves: what fits in `buffer_bytes`, in the controller's
// MDTS (a power of two of memory pages, 0 for no limit) and in the 16-bit block count.
// 0 when not even one block fits.
uint32_t nvme_max_blocks(uint32_t block_size, uint32_t buffer_bytes, uint8_t mdts);

#endif
