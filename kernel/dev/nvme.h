// SPDX-License-Identifier: MIT
// NVMe over PCI (class 01, subclass 08, interface 02): namespace 1 of each controller
// found is registered as a block device "nvmeN" (blk.h), read-only until the user lifts
// the guard on purpose (blk_set_writable, Python's disk.Disk('nvme0').writable(True)).
#ifndef LOCIOS_KERNEL_DEV_NVME_H
#define LOCIOS_KERNEL_DEV_NVME_H

// Finds and starts every NVMe controller; kmain calls it once after pci_init and
// kmem_init. A controller that does not come up costs a line on the console.
void nvme_init(void);

#endif
