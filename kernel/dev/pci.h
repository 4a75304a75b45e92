// SPDX-License-Identifier: MIT
// PCI: the devices of every bus, found once at boot through the legacy configuration
// mechanism (ports 0xcf8/0xcfc, on every PC), their BARs decoded, and what a driver needs
// to start one: memory decoding and bus mastering on, on the device and on every bridge
// above it (the loader stopped bus mastering on bridges before the hand-off).
#ifndef LOCIOS_KERNEL_DEV_PCI_H
#define LOCIOS_KERNEL_DEV_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_MAX_DEVICES 128
#define PCI_NO_PARENT   0xffff

struct pci_bar {
    uint64_t base;  // physical (memory) or port (I/O); 0 when the BAR is unused
    uint64_t size;
    bool io;
    bool is64;
};

struct pci_device {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint8_t class_code, subclass, prog_if;
    uint8_t header_type;  // 0 device, 1 PCI-to-PCI bridge
    uint8_t irq_line;
    uint16_t parent;  // index of the bridge above it, or PCI_NO_PARENT
    struct pci_bar bar[6];
};

void pci_init(void);  // enumerate; kmain calls it once
unsigned pci_count(void);
const struct pci_device *pci_get(unsigned i);
// The first device of this class/subclass/prog_if after index `from` (-1 for any field
// matches anything); returns its index or -1.
int pci_find(int class_code, int subclass, int prog_if, int from);

uint32_t pci_read32(const struct pci_device *d, uint8_t off);
uint16_t pci_read16(const struct pci_device *d, uint8_t off);
uint8_t pci_read8(const struct pci_device *d, uint8_t off);
void pci_write32(const struct pci_device *d, uint8_t off, uint32_t v);
void pci_write16(const struct pci_device *d, uint8_t off, uint16_t v);

// Memory and I/O decoding and bus mastering on for the device and each bridge above it.
void pci_enable(const struct pci_device *d);

#endif
