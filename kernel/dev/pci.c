// SPDX-License-Identifier: MIT
// PCI enumeration through configuration mechanism #1 (pci.h). Buses are walked from 0
// through the bridges found on them, so a device knows the bridge it sits behind.
#include "pci.h"

#include "../arch.h"
#include "../kernel.h"

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA    0xcfc
#define PCI_VENDOR     0x00
#define PCI_COMMAND    0x04
#define PCI_CLASS      0x08
#define PCI_HEADER     0x0e
#define PCI_BAR0       0x10
#define PCI_SECONDARY  0x19
#define PCI_IRQ_LINE   0x3c
#define CMD_IO         (1u << 0)
#define CMD_MEMORY     (1u << 1)
#define CMD_MASTER     (1u << 2)

static struct pci_device devices[PCI_MAX_DEVICES];
static unsigned n_devices;
static bool bus_seen[256];

static uint32_t address(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off) {
    return 0x80000000u | (uint32_t)bus << 16 | (uint32_t)dev << 11 | (uint32_t)fn << 8 |
           (off & 0xfc);
}

static uint32_t raw_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off) {
    arch_out32(CONFIG_ADDRESS, address(bus, dev, fn, off));
    return arch_in32(CONFIG_DATA);
}

static void raw_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v) {
    arch_out32(CONFIG_ADDRESS, address(bus, dev, fn, off));
    arch_out32(CONFIG_DATA, v);
}

uint32_t pci_read32(const struct pci_device *d, uint8_t off) {
    return raw_read32(d->bus, d->dev, d->fn, off);
}

uint16_t pci_read16(const struct pci_device *d, uint8_t off) {
    return (uint16_t)(pci_read32(d, off) >> (8 * (off & 2)));
}

uint8_t pci_read8(const struct pci_device *d, uint8_t off) {
    return (uint8_t)(pci_read32(d, off) >> (8 * (off & 3)));
}

void pci_write32(const struct pci_device *d, uint8_t off, uint32_t v) {
    raw_write32(d->bus, d->dev, d->fn, off, v);
}

void pci_write16(const struct pci_device *d, uint8_t off, uint16_t v) {
    uint32_t old = pci_read32(d, off);
    unsigned shift = 8 * (off & 2);
    pci_write32(d, off, (old & ~(0xffffu << shift)) | (uint32_t)v << shift);
}

// Sizes a BAR by writing all ones with decoding off, as the PCI spec describes.
static unsigned read_bar(struct pci_device *d, unsigned i) {
    uint8_t off = (uint8_t)(PCI_BAR0 + 4 * i);
    uint32_t lo = pci_read32(d, off);
    struct pci_bar *b = &d->bar[i];
    if (lo & 1) {
        pci_write32(d, off, 0xffffffffu);
        uint32_t mask = pci_read32(d, off) & ~3u;
        pci_write32(d, off, lo);
        b->io = true;
        b->base = lo & ~3u;
        b->size = mask ? (~mask + 1) & 0xffff : 0;
        return 1;
    }
    b->is64 = ((lo >> 1) & 3) == 2;
    uint32_t hi = b->is64 && i < 5 ? pci_read32(d, off + 4) : 0;
    pci_write32(d, off, 0xffffffffu);
    uint64_t mask = pci_read32(d, off) & ~0xfu;
    pci_write32(d, off, lo);
    if (b->is64 && i < 5) {
        pci_write32(d, off + 4, 0xffffffffu);
        mask |= (uint64_t)pci_read32(d, off + 4) << 32;
        pci_write32(d, off + 4, hi);
    } else {
        mask |= 0xffffffff00000000ull;
    }
    b->base = ((uint64_t)hi << 32 | lo) & ~0xfull;
    b->size = (lo & ~0xfu) || hi ? ~mask + 1 : 0;
    return b->is64 ? 2 : 1;
}

static void scan_bus(uint8_t bus, uint16_t parent);

static void add_function(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t parent) {
    if (n_devices == PCI_MAX_DEVICES) {
        return;
    }
    uint32_t id = raw_read32(bus, dev, fn, PCI_VENDOR);
    struct pci_device *d = &devices[n_devices];
    *d = (struct pci_device){ .bus = bus, .dev = dev, .fn = fn, .parent = parent };
    d->vendor = id & 0xffff;
    d->device = id >> 16;
    uint32_t cls = raw_read32(bus, dev, fn, PCI_CLASS);
    d->class_code = cls >> 24;
    d->subclass = cls >> 16 & 0xff;
    d->prog_if = cls >> 8 & 0xff;
    d->header_type = pci_read8(d, PCI_HEADER) & 0x7f;
    d->irq_line = pci_read8(d, PCI_IRQ_LINE);
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd & ~(CMD_IO | CMD_MEMORY));  // no decoding while sizing
    unsigned bars = d->header_type == 0 ? 6 : d->header_type == 1 ? 2 : 0;
    for (unsigned i = 0; i < bars;) {
        i += read_bar(d, i);
    }
    pci_write16(d, PCI_COMMAND, cmd);
    uint16_t me = (uint16_t)n_devices++;
    if (d->header_type == 1) {
        uint8_t secondary = pci_read8(d, PCI_SECONDARY);
        if (secondary && !bus_seen[secondary]) {
            scan_bus(secondary, me);
        }
    }
}

static void scan_bus(uint8_t bus, uint16_t parent) {
    bus_seen[bus] = true;
    for (uint8_t dev = 0; dev < 32; dev++) {
        if ((raw_read32(bus, dev, 0, PCI_VENDOR) & 0xffff) == 0xffff) {
            continue;
        }
        bool multi = raw_read32(bus, dev, 0, PCI_HEADER & ~3) >> 16 & 0x80;
        for (uint8_t fn = 0; fn < (multi ? 8 : 1); fn++) {
            if ((raw_read32(bus, dev, fn, PCI_VENDOR) & 0xffff) != 0xffff) {
                add_function(bus, dev, fn, parent);
            }
        }
    }
}

void pci_init(void) {
    scan_bus(0, PCI_NO_PARENT);
}

unsigned pci_count(void) {
    return n_devices;
}

const struct pci_device *pci_get(unsigned i) {
    return i < n_devices ? &devices[i] : NULL;
}

int pci_find(int class_code, int subclass, int prog_if, int from) {
    for (unsigned i = (unsigned)(from + 1); i < n_devices; i++) {
        const struct pci_device *d = &devices[i];
        if ((class_code < 0 || d->class_code == class_code) &&
            (subclass < 0 || d->subclass == subclass) && (prog_if < 0 || d->prog_if == prog_if)) {
            return (int)i;
        }
    }
    return -1;
}

void pci_enable(const struct pci_device *d) {
    for (const struct pci_device *p = d; p;
         p = p->parent == PCI_NO_PARENT ? NULL : &devices[p->parent]) {
        pci_write16(p, PCI_COMMAND, pci_read16(p, PCI_COMMAND) | CMD_IO | CMD_MEMORY | CMD_MASTER);
    }
}
