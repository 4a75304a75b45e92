// SPDX-License-Identifier: MIT
// virtio-blk (virtio_blk.h), from the virtio 1.2 specification: the PCI vendor
// capabilities that locate the common, notify and device configuration (§4.1.4), the
// status handshake (§3.1.1), one split virtqueue (§2.7) and the block requests (§5.2.6).
// The queue is polled with interrupts suppressed; one request is in flight at a time,
// its data staged in a physically contiguous bounce buffer. Every wait is bounded by
// the TSC; a device that misses one is given up, as its queue may still be in use.
#include "virtio_blk.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "blk.h"
#include "pci.h"

#define VIRTIO_VENDOR      0x1af4
#define VIRTIO_BLK_MODERN  0x1042
#define VIRTIO_BLK_LEGACY  0x1001  // transitional: driven through its modern capabilities
#define VIRTIO_MAX_DISKS   4
#define SECTOR             512u
#define BOUNCE_PAGES       16u  // 64 KiB: the most one request moves
#define CHUNK              ((uint32_t)(BOUNCE_PAGES * KPAGE_SIZE / SECTOR))
#define QUEUE_MAX          8u  // descriptors used; a request needs three
#define REQUEST_TIMEOUT_MS 5000u
#define RESET_TIMEOUT_MS   100u

// PCI capability list.
#define PCI_STATUS        0x06
#define PCI_STATUS_CAPS   (1u << 4)
#define PCI_CAP_PTR       0x34
#define PCI_CAP_VENDOR    0x09
#define VIRTIO_CAP_COMMON 1
#define VIRTIO_CAP_NOTIFY 2
#define VIRTIO_CAP_DEVICE 4

// Common configuration.
#define CC_DEV_FEATURE_SEL  0x00
#define CC_DEV_FEATURE      0x04
#define CC_DRV_FEATURE_SEL  0x08
#define CC_DRV_FEATURE      0x0c
#define CC_STATUS           0x14
#define CC_QUEUE_SEL        0x16
#define CC_QUEUE_SIZE       0x18
#define CC_QUEUE_ENABLE     0x1c
#define CC_QUEUE_NOTIFY_OFF 0x1e
#define CC_QUEUE_DESC       0x20
#define CC_QUEUE_DRIVER     0x28
#define CC_QUEUE_DEVICE     0x30

#define ST_ACKNOWLEDGE 1u
#define ST_DRIVER      2u
#define ST_DRIVER_OK   4u
#define ST_FEATURES_OK 8u
#define ST_FAILED      128u

// Feature bits (low word, then bit 32 in the high word).
#define F_BLK_RO       (1u << 5)
#define F_BLK_FLUSH    (1u << 9)
#define F_VERSION_1_HI (1u << 0)

// Device configuration.
#define DC_CAPACITY 0x00  // 512-byte sectors, 64 bits

#define REQ_IN    0u
#define REQ_OUT   1u
#define REQ_FLUSH 4u
#define REQ_OK    0u

#define DESC_NEXT          1u
#define DESC_WRITE         2u
#define AVAIL_NO_INTERRUPT 1u

struct vq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct req_header {
    uint32_t type, reserved;
    uint64_t sector;
};

// The queue page: descriptors, then the driver (avail) ring at 256, the device (used)
// ring at 512, the request header at 1024 and the status byte at 1040.
#define AVAIL_OFF  256u
#define USED_OFF   512u
#define HEADER_OFF 1024u
#define STATUS_OFF 1040u

struct vblk {
    struct blk_dev blk;
    volatile uint8_t *common, *device;
    volatile uint16_t *notify;
    uint8_t *page;
    uint64_t page_phys;
    uint8_t *bounce;
    uint64_t bounce_phys;
    uint16_t qsize, last_used;
    bool dead;
};

static struct vblk disks[VIRTIO_MAX_DISKS];
static unsigned ndisks;

static inline void fence(void) {
    __asm__ volatile("mfence" ::: "memory");
}

static uint64_t deadline_ms(unsigned ms) {
    return arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
}

static uint8_t rd8(volatile uint8_t *b, unsigned off) {
    return *(volatile uint8_t *)(b + off);
}
static uint16_t rd16(volatile uint8_t *b, unsigned off) {
    return *(volatile uint16_t *)(b + off);
}
static uint32_t rd32(volatile uint8_t *b, unsigned off) {
    return *(volatile uint32_t *)(b + off);
}
static void wr8(volatile uint8_t *b, unsigned off, uint8_t v) {
    *(volatile uint8_t *)(b + off) = v;
}
static void wr16(volatile uint8_t *b, unsigned off, uint16_t v) {
    *(volatile uint16_t *)(b + off) = v;
}
static void wr32(volatile uint8_t *b, unsigned off, uint32_t v) {
    *(volatile uint32_t *)(b + off) = v;
}
static void wr64(volatile uint8_t *b, unsigned off, uint64_t v) {
    wr32(b, off, (uint32_t)v);
    wr32(b, off + 4, (uint32_t)(v >> 32));
}

// The BAR-relative window a virtio capability names, mapped; NULL if it is unusable.
static volatile uint8_t *cap_window(const struct pci_device *p, uint8_t cap) {
    uint8_t bar = pci_read8(p, cap + 4);
    uint32_t off = pci_read32(p, cap + 8), len = pci_read32(p, cap + 12);
    if (bar > 5 || !p->bar[bar].base || p->bar[bar].io || (uint64_t)off + len > p->bar[bar].size) {
        return 0;
    }
    return (volatile uint8_t *)kmem_map_device(p->bar[bar].base, p->bar[bar].size) + off;
}

static bool find_caps(struct vblk *v, const struct pci_device *p, uint32_t *notify_mult,
                      volatile uint8_t **notify_base) {
    if (!(pci_read16(p, PCI_STATUS) & PCI_STATUS_CAPS)) {
        return false;
    }
    uint8_t cap = pci_read8(p, PCI_CAP_PTR) & 0xfc;
    for (unsigned guard = 0; cap && guard < 48; guard++) {
        if (pci_read8(p, cap) == PCI_CAP_VENDOR) {
            uint8_t type = pci_read8(p, cap + 3);
            if (type == VIRTIO_CAP_COMMON && !v->common) {
                v->common = cap_window(p, cap);
            } else if (type == VIRTIO_CAP_NOTIFY && !*notify_base) {
                *notify_base = cap_window(p, cap);
                *notify_mult = pci_read32(p, cap + 16);
            } else if (type == VIRTIO_CAP_DEVICE && !v->device) {
                v->device = cap_window(p, cap);
            }
        }
        cap = pci_read8(p, cap + 1) & 0xfc;
    }
    return v->common && v->device && *notify_base;
}

static bool reset(struct vblk *v) {
    wr8(v->common, CC_STATUS, 0);
    uint64_t end = deadline_ms(RESET_TIMEOUT_MS);
    while (rd8(v->common, CC_STATUS) != 0) {
        if (arch_rdtsc() > end) {
            return false;
        }
        arch_pause();
    }
    return true;
}

// Queues a chain of `n` descriptors (already written from 0) and waits for the device
// to hand it back; 0 or BLK_EIO.
static int submit(struct vblk *v) {
    if (v->dead) {
        return BLK_EIO;
    }
    volatile uint16_t *avail = (volatile uint16_t *)(v->page + AVAIL_OFF);
    volatile uint16_t *used = (volatile uint16_t *)(v->page + USED_OFF);
    volatile uint8_t *status = v->page + STATUS_OFF;
    *status = 0xff;
    uint16_t idx = avail[1];
    avail[2 + idx % v->qsize] = 0;
    fence();
    avail[1] = (uint16_t)(idx + 1);
    fence();
    *v->notify = 0;
    uint64_t end = deadline_ms(REQUEST_TIMEOUT_MS);
    while (used[1] == v->last_used) {
        if (arch_rdtsc() > end) {
            v->dead = true;
            kprintf("kernel: %s: request timed out; device given up\n", v->blk.name);
            return BLK_EIO;
        }
        arch_pause();
    }
    v->last_used++;
    fence();
    return *status == REQ_OK ? 0 : BLK_EIO;
}

static void set_desc(struct vblk *v, unsigned i, uint64_t addr, uint32_t len, uint16_t flags) {
    struct vq_desc *d = (struct vq_desc *)v->page + i;
    d->addr = addr;
    d->len = len;
    d->flags = flags;
    d->next = (uint16_t)(i + 1);
}

static int transfer(struct vblk *v, uint32_t type, uint64_t sector, uint32_t bytes) {
    struct req_header *h = (struct req_header *)(v->page + HEADER_OFF);
    h->type = type;
    h->reserved = 0;
    h->sector = sector;
    set_desc(v, 0, v->page_phys + HEADER_OFF, sizeof *h, DESC_NEXT);
    unsigned n = 1;
    if (bytes) {
        set_desc(v, n++, v->bounce_phys, bytes, DESC_NEXT | (type == REQ_IN ? DESC_WRITE : 0));
    }
    set_desc(v, n, v->page_phys + STATUS_OFF, 1, DESC_WRITE);
    return submit(v);
}

static int vblk_read(struct blk_dev *d, uint64_t block, uint32_t count, void *buf) {
    struct vblk *v = d->priv;
    uint8_t *out = buf;
    while (count) {
        uint32_t n = count < CHUNK ? count : CHUNK;
        int r = transfer(v, REQ_IN, block, n * SECTOR);
        if (r) {
            return r;
        }
        memcpy(out, v->bounce, n * SECTOR);
        out += n * SECTOR, block += n, count -= n;
    }
    return 0;
}

static int vblk_write(struct blk_dev *d, uint64_t block, uint32_t count, const void *buf) {
    struct vblk *v = d->priv;
    const uint8_t *in = buf;
    while (count) {
        uint32_t n = count < CHUNK ? count : CHUNK;
        memcpy(v->bounce, in, n * SECTOR);
        int r = transfer(v, REQ_OUT, block, n * SECTOR);
        if (r) {
            return r;
        }
        in += n * SECTOR, block += n, count -= n;
    }
    return 0;
}

static int vblk_flush(struct blk_dev *d) {
    return transfer(d->priv, REQ_FLUSH, 0, 0);
}

static const char *start(struct vblk *v, const struct pci_device *p) {
    uint32_t mult = 0;
    volatile uint8_t *notify_base = 0;
    pci_enable(p);
    if (!find_caps(v, p, &mult, &notify_base)) {
        return "no modern virtio capabilities";
    }
    if (!reset(v)) {
        return "reset timed out";
    }
    wr8(v->common, CC_STATUS, ST_ACKNOWLEDGE | ST_DRIVER);
    wr32(v->common, CC_DEV_FEATURE_SEL, 0);
    uint32_t lo = rd32(v->common, CC_DEV_FEATURE);
    wr32(v->common, CC_DEV_FEATURE_SEL, 1);
    uint32_t hi = rd32(v->common, CC_DEV_FEATURE);
    if (!(hi & F_VERSION_1_HI)) {
        return "no VIRTIO_F_VERSION_1";
    }
    wr32(v->common, CC_DRV_FEATURE_SEL, 0);
    wr32(v->common, CC_DRV_FEATURE, lo & (F_BLK_RO | F_BLK_FLUSH));
    wr32(v->common, CC_DRV_FEATURE_SEL, 1);
    wr32(v->common, CC_DRV_FEATURE, F_VERSION_1_HI);
    wr8(v->common, CC_STATUS, ST_ACKNOWLEDGE | ST_DRIVER | ST_FEATURES_OK);
    if (!(rd8(v->common, CC_STATUS) & ST_FEATURES_OK)) {
        return "features refused";
    }

    wr16(v->common, CC_QUEUE_SEL, 0);
    uint16_t max = rd16(v->common, CC_QUEUE_SIZE);
    if (max < 3) {
        return "queue 0 too small";
    }
    v->qsize = max < QUEUE_MAX ? max : QUEUE_MAX;
    v->page_phys = mm_alloc_frames(1);
    v->bounce_phys = mm_alloc_frames(BOUNCE_PAGES);
    if (!v->page_phys || !v->bounce_phys) {
        return "out of memory";
    }
    v->page = (uint8_t *)(uintptr_t)v->page_phys;
    v->bounce = (uint8_t *)(uintptr_t)v->bounce_phys;
    memset(v->page, 0, KPAGE_SIZE);
    ((volatile uint16_t *)(v->page + AVAIL_OFF))[0] = AVAIL_NO_INTERRUPT;
    wr16(v->common, CC_QUEUE_SIZE, v->qsize);
    wr64(v->common, CC_QUEUE_DESC, v->page_phys);
    wr64(v->common, CC_QUEUE_DRIVER, v->page_phys + AVAIL_OFF);
    wr64(v->common, CC_QUEUE_DEVICE, v->page_phys + USED_OFF);
    v->notify =
        (volatile uint16_t *)(notify_base + (uint32_t)rd16(v->common, CC_QUEUE_NOTIFY_OFF) * mult);
    wr16(v->common, CC_QUEUE_ENABLE, 1);
    wr8(v->common, CC_STATUS, ST_ACKNOWLEDGE | ST_DRIVER | ST_FEATURES_OK | ST_DRIVER_OK);

    v->blk.block_size = SECTOR;
    v->blk.block_count = rd32(v->device, DC_CAPACITY) | (uint64_t)rd32(v->device, DC_CAPACITY + 4)
                                                            << 32;
    v->blk.read_only = (lo & F_BLK_RO) != 0;
    v->blk.kind = "virtio-blk";
    v->blk.priv = v;
    v->blk.read = vblk_read;
    v->blk.write = vblk_write;
    v->blk.flush = (lo & F_BLK_FLUSH) ? vblk_flush : 0;
    return 0;
}

void virtio_blk_init(void) {
    for (unsigned i = 0; i < pci_count() && ndisks < VIRTIO_MAX_DISKS; i++) {
        const struct pci_device *p = pci_get(i);
        if (p->vendor != VIRTIO_VENDOR ||
            (p->device != VIRTIO_BLK_MODERN && p->device != VIRTIO_BLK_LEGACY)) {
            continue;
        }
        struct vblk *v = &disks[ndisks];
        memset(v, 0, sizeof *v);
        const char *why = start(v, p);
        if (why) {
            if (v->common) {
                wr8(v->common, CC_STATUS, ST_FAILED);
            }
            kprintf("kernel: virtio-blk %02x:%02x.%u: %s; skipped\n", p->bus, p->dev, p->fn, why);
            continue;
        }
        v->blk.name[0] = 'v', v->blk.name[1] = 'i', v->blk.name[2] = 'r', v->blk.name[3] = 't';
        v->blk.name[4] = 'i', v->blk.name[5] = 'o', v->blk.name[6] = (char)('0' + ndisks);
        ndisks++;
        blk_register(&v->blk);
        kprintf("kernel: %s: virtio-blk %02x:%02x.%u, %lu sectors%s%s\n", v->blk.name, p->bus,
                p->dev, p->fn, v->blk.block_count, v->blk.read_only ? ", read-only" : "",
                v->blk.flush ? ", flush" : "");
    }
}
