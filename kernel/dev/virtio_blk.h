// SPDX-License-Identifier: MIT
// virtio-blk over PCI (virtio 1.x, modern interface only): each disk found is
// registered as a block device "virtioN" (blk.h).
#ifndef LOCIOS_KERNEL_DEV_VIRTIO_BLK_H
#define LOCIOS_KERNEL_DEV_VIRTIO_BLK_H

// Finds and starts every virtio-blk function; kmain calls it once after pci_init and
// kmem_init. A device that does not come up costs a line on the console.
void virtio_blk_init(void);

#endif
