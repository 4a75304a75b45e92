// SPDX-License-Identifier: MIT
// NVMe (nvme.h), from the NVMe base specification 2.0 and the NVM command set
// specification 1.0: the controller registers (§3.1), reset and enable bounded by
// CAP.TO (§3.5.1), one admin and one I/O queue pair (§3.3), IDENTIFY (§5.17), and the
// NVM READ, WRITE and FLUSH commands. Queues are polled with every interrupt masked;
// one command is in flight at a time, its data staged in a physically contiguous bounce
// buffer described by PRP entries (nvme_prp.h). Every wait is bounded by the TSC; a
// controller that misses one is given up, as its queues may still be in use.
#include "nvme.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "blk.h"
#include "nvme_prp.h"
#include "pci.h"

#define NVME_MAX_DISKS     4
#define BOUNCE_PAGES       16u  // 64 KiB: the most one command moves
#define QUEUE_ENTRIES      8u
#define COMMAND_TIMEOUT_MS 5000u
#define PCI_COMMAND        0x04
#define PCI_INTX_DISABLE   (1u << 10)

// Controller registers.
#define REG_CAP    0x00
#define REG_INTMS  0x0c
#define REG_CC     0x14
#define REG_CSTS   0x1c
#define REG_AQA    0x24
#define REG_ASQ    0x28
#define REG_ACQ    0x30
#define REG_DOORBS 0x1000

#define CC_EN        (1u << 0)
#define CC_IOSQES_64 (6u << 16)
#define CC_IOCQES_16 (4u << 20)
#define CSTS_RDY     (1u << 0)
#define CSTS_CFS     (1u << 1)
#define CAP_CSS_NVM  (1ull << 37)

// Admin and NVM opcodes.
#define OP_CREATE_SQ 0x01
#define OP_CREATE_CQ 0x05
#define OP_IDENTIFY  0x06
#define OP_FLUSH     0x00
#define OP_WRITE     0x01
#define OP_READ      0x02
#define CNS_NS       0x00
#define CNS_CTRL     0x01

struct sqe {
    uint32_t cdw0, nsid, rsvd[2];
    uint64_t mptr, prp1, prp2;
    uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};
_Static_assert(sizeof(struct sqe) == 64, "submission entry");

struct cqe {
    uint32_t dw0, dw1;
    uint16_t sq_head, sq_id, cid, status;  // status bit 0 is the phase tag
};
_Static_assert(sizeof(struct cqe) == 16, "completion entry");

struct queue {
    volatile struct sqe *sq;
    volatile struct cqe *cq;
    uint64_t sq_phys, cq_phys;
    volatile uint32_t *sq_bell, *cq_bell;
    uint16_t tail, head, size, cid;
    uint16_t phase;
};

struct nvme {
    struct blk_dev blk;
    volatile uint8_t *regs;
    struct queue admin, io;
    uint8_t *bounce;
    uint64_t bounce_phys;
    uint64_t *prp_list;
    uint64_t prp_list_phys;
    uint32_t max_blocks;  // per command
    uint64_t timeout_ms;  // CAP.TO: how long enable and disable may take
    bool dead;
};

static struct nvme ctrls[NVME_MAX_DISKS];
static unsigned nctrls;

static inline void fence(void) {
    __asm__ volatile("mfence" ::: "memory");
}

static uint64_t deadline_ms(uint64_t ms) {
    return arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
}

static uint32_t rd32(struct nvme *c, unsigned off) {
    return *(volatile uint32_t *)(c->regs + off);
}
static uint64_t rd64(struct nvme *c, unsigned off) {
    return rd32(c, off) | (uint64_t)rd32(c, off + 4) << 32;
}
static void wr32(struct nvme *c, unsigned off, uint32_t v) {
    *(volatile uint32_t *)(c->regs + off) = v;
}
static void wr64(struct nvme *c, unsigned off, uint64_t v) {
    wr32(c, off, (uint32_t)v);
    wr32(c, off + 4, (uint32_t)(v >> 32));
}

// Waits for CSTS.RDY to read `ready`; false on timeout or a fatal controller status.
static bool wait_ready(struct nvme *c, bool ready) {
    uint64_t end = deadline_ms(c->timeout_ms);
    for (;;) {
        uint32_t s = rd32(c, REG_CSTS);
        if (s == 0xffffffffu || (ready && (s & CSTS_CFS))) {
            return false;
        }
        if (((s & CSTS_RDY) != 0) == ready) {
            return true;
        }
        if (arch_rdtsc() > end) {
            return false;
        }
        arch_pause();
    }
}

// Places one command on the queue, rings its doorbell and waits for its completion;
// 0, or BLK_EIO for an error status or a timeout (which gives the controller up).
static int run(struct nvme *c, struct queue *q, struct sqe *cmd) {
    if (c->dead) {
        return BLK_EIO;
    }
    uint16_t cid = q->cid++;
    cmd->cdw0 = (cmd->cdw0 & 0xffu) | (uint32_t)cid << 16;
    q->sq[q->tail] = *cmd;
    q->tail = (uint16_t)((q->tail + 1) % q->size);
    fence();
    *q->sq_bell = q->tail;
    uint64_t end = deadline_ms(COMMAND_TIMEOUT_MS);
    volatile struct cqe *e = &q->cq[q->head];
    while ((e->status & 1u) != q->phase) {
        if (arch_rdtsc() > end) {
            c->dead = true;
            kprintf("kernel: %s: command %02x timed out; controller given up\n", c->blk.name,
                    cmd->cdw0 & 0xffu);
            return BLK_EIO;
        }
        arch_pause();
    }
    fence();
    uint16_t status = e->status >> 1, got = e->cid;
    q->head = (uint16_t)((q->head + 1) % q->size);
    if (q->head == 0) {
        q->phase ^= 1u;
    }
    *q->cq_bell = q->head;
    if (got != cid) {
        c->dead = true;  // out of step with the controller: nothing after this is trusted
        kprintf("kernel: %s: completion for command %u, expected %u; controller given up\n",
                c->blk.name, got, cid);
        return BLK_EIO;
    }
    return status ? BLK_EIO : 0;
}

static bool queue_alloc(struct queue *q, uint16_t entries) {
    q->sq_phys = mm_alloc_frames(1);
    q->cq_phys = mm_alloc_frames(1);
    if (!q->sq_phys || !q->cq_phys) {
        return false;
    }
    q->sq = (volatile struct sqe *)(uintptr_t)q->sq_phys;
    q->cq = (volatile struct cqe *)(uintptr_t)q->cq_phys;
    memset((void *)(uintptr_t)q->sq_phys, 0, KPAGE_SIZE);
    memset((void *)(uintptr_t)q->cq_phys, 0, KPAGE_SIZE);
    q->size = entries;
    q->phase = 1;
    return true;
}

static void queue_bells(struct nvme *c, struct queue *q, unsigned qid, unsigned stride) {
    q->sq_bell = (volatile uint32_t *)(c->regs + REG_DOORBS + (2 * qid) * stride);
    q->cq_bell = (volatile uint32_t *)(c->regs + REG_DOORBS + (2 * qid + 1) * stride);
}

// One data command over the bounce buffer: `bytes` at its start.
static int data_cmd(struct nvme *c, struct queue *q, uint8_t op, uint32_t nsid, uint32_t cdw10,
                    uint32_t cdw11, uint32_t cdw12, uint32_t bytes) {
    struct sqe cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.cdw0 = op;
    cmd.nsid = nsid;
    cmd.cdw10 = cdw10, cmd.cdw11 = cdw11, cmd.cdw12 = cdw12;
    if (bytes && nvme_prp(c->bounce_phys, bytes, c->prp_list_phys, c->prp_list,
                          KPAGE_SIZE / sizeof(uint64_t), &cmd.prp1, &cmd.prp2) < 0) {
        return BLK_EIO;
    }
    return run(c, q, &cmd);
}

static int rw(struct nvme *c, uint8_t op, uint64_t block, uint32_t n) {
    return data_cmd(c, &c->io, op, 1, (uint32_t)block, (uint32_t)(block >> 32), n - 1,
                    n * c->blk.block_size);
}

static int nvme_read(struct blk_dev *d, uint64_t block, uint32_t count, void *buf) {
    struct nvme *c = d->priv;
    uint8_t *out = buf;
    while (count) {
        uint32_t n = count < c->max_blocks ? count : c->max_blocks;
        int r = rw(c, OP_READ, block, n);
        if (r) {
            return r;
        }
        memcpy(out, c->bounce, (size_t)n * d->block_size);
        out += (size_t)n * d->block_size, block += n, count -= n;
    }
    return 0;
}

static int nvme_write(struct blk_dev *d, uint64_t block, uint32_t count, const void *buf) {
    struct nvme *c = d->priv;
    const uint8_t *in = buf;
    while (count) {
        uint32_t n = count < c->max_blocks ? count : c->max_blocks;
        memcpy(c->bounce, in, (size_t)n * d->block_size);
        int r = rw(c, OP_WRITE, block, n);
        if (r) {
            return r;
        }
        in += (size_t)n * d->block_size, block += n, count -= n;
    }
    return 0;
}

static int nvme_flush(struct blk_dev *d) {
    struct nvme *c = d->priv;
    return data_cmd(c, &c->io, OP_FLUSH, 1, 0, 0, 0, 0);
}

static const char *identify(struct nvme *c, uint32_t nsid, uint32_t cns) {
    memset(c->bounce, 0, KPAGE_SIZE);
    return data_cmd(c, &c->admin, OP_IDENTIFY, nsid, cns, 0, 0, KPAGE_SIZE) ? "identify failed" : 0;
}

static const char *start(struct nvme *c, const struct pci_device *p) {
    const struct pci_bar *bar = &p->bar[0];
    if (!bar->base || bar->io || bar->size < 0x2000) {
        return "BAR0 is not a memory window of 8 KiB or more";
    }
    pci_enable(p);
    pci_write16(p, PCI_COMMAND, pci_read16(p, PCI_COMMAND) | PCI_INTX_DISABLE);
    c->regs = kmem_map_device(bar->base, bar->size);
    uint64_t cap = rd64(c, REG_CAP);
    if (cap == ~0ull) {
        return "registers read all ones";
    }
    if (!(cap & CAP_CSS_NVM)) {
        return "no NVM command set";
    }
    if ((cap >> 48 & 0xf) != 0) {
        return "4 KiB memory pages unsupported";  // MPSMIN above 4 KiB
    }
    unsigned stride = 4u << (cap >> 32 & 0xf);
    if (REG_DOORBS + 4 * stride > bar->size) {
        return "doorbells outside BAR0";
    }
    c->timeout_ms = ((cap >> 24 & 0xff) + 1) * 500;  // CAP.TO, in 500 ms units
    uint16_t entries = (uint16_t)((cap & 0xffff) + 1);
    entries = entries < QUEUE_ENTRIES ? entries : QUEUE_ENTRIES;
    if (entries < 2) {
        return "queues too small";
    }

    // Disable: a controller left running by the firmware is reset before its queues move.
    uint32_t cc = rd32(c, REG_CC);
    if (cc & CC_EN) {
        wait_ready(c, true);  // EN to 0 while RDY is still rising is undefined
        wr32(c, REG_CC, cc & ~CC_EN);
    }
    if (!wait_ready(c, false)) {
        return "reset timed out";
    }
    if (!queue_alloc(&c->admin, entries) || !queue_alloc(&c->io, entries)) {
        return "out of memory";
    }
    c->bounce_phys = mm_alloc_frames(BOUNCE_PAGES);
    c->prp_list_phys = mm_alloc_frames(1);
    if (!c->bounce_phys || !c->prp_list_phys) {
        return "out of memory";
    }
    c->bounce = (uint8_t *)(uintptr_t)c->bounce_phys;
    c->prp_list = (uint64_t *)(uintptr_t)c->prp_list_phys;
    queue_bells(c, &c->admin, 0, stride);
    queue_bells(c, &c->io, 1, stride);
    wr32(c, REG_INTMS, 0xffffffffu);  // polled: no interrupt vector is ever wanted
    wr32(c, REG_AQA, (uint32_t)(entries - 1) << 16 | (uint32_t)(entries - 1));
    wr64(c, REG_ASQ, c->admin.sq_phys);
    wr64(c, REG_ACQ, c->admin.cq_phys);
    wr32(c, REG_CC, CC_IOSQES_64 | CC_IOCQES_16 | CC_EN);  // NVM set, 4 KiB pages
    if (!wait_ready(c, true)) {
        return "enable timed out or controller fatal status";
    }

    const char *why = identify(c, 0, CNS_CTRL);
    if (why) {
        return why;
    }
    uint8_t mdts = c->bounce[77];
    uint32_t nn = *(uint32_t *)(c->bounce + 516);
    bool vwc = c->bounce[525] & 1;
    if (nn < 1) {
        return "no namespaces";
    }

    // The I/O completion queue first: the submission queue names it.
    uint32_t qsize = (uint32_t)(entries - 1) << 16 | 1u;
    struct sqe cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.cdw0 = OP_CREATE_CQ, cmd.prp1 = c->io.cq_phys, cmd.cdw10 = qsize, cmd.cdw11 = 1;
    if (run(c, &c->admin, &cmd)) {
        return "creating the I/O completion queue failed";
    }
    memset(&cmd, 0, sizeof cmd);
    cmd.cdw0 = OP_CREATE_SQ, cmd.prp1 = c->io.sq_phys, cmd.cdw10 = qsize;
    cmd.cdw11 = 1u << 16 | 1u;  // completions to queue 1, physically contiguous
    if (run(c, &c->admin, &cmd)) {
        return "creating the I/O submission queue failed";
    }

    if ((why = identify(c, 1, CNS_NS))) {
        return why;
    }
    uint64_t nsze = *(uint64_t *)c->bounce;
    uint8_t flbas = c->bounce[26] & 0xf, nlbaf = c->bounce[25];
    if (flbas > nlbaf) {
        return "namespace 1 names a format it does not list";
    }
    uint32_t lbaf = *(uint32_t *)(c->bounce + 128 + 4 * flbas);
    unsigned lbads = lbaf >> 16 & 0xff;
    if (!nsze) {
        return "namespace 1 is empty or inactive";
    }
    if ((lbaf & 0xffff) != 0) {
        return "namespace 1 has per-block metadata";  // would need a metadata pointer
    }
    if (lbads < 9 || lbads > 12) {
        return "namespace 1 block size outside 512..4096";
    }
    bool protect = c->bounce[99] & 1;  // NSATTR: the namespace is write protected
    c->blk.block_size = 1u << lbads;
    c->blk.block_count = nsze;
    c->max_blocks = nvme_max_blocks(c->blk.block_size, BOUNCE_PAGES * KPAGE_SIZE, mdts);
    // The internal disk is not written unless the user asks: a guard, not the medium.
    c->blk.read_only = true;
    c->blk.guarded = !protect;
    c->blk.kind = "nvme";
    c->blk.priv = c;
    c->blk.read = nvme_read;
    c->blk.write = nvme_write;
    c->blk.flush = vwc ? nvme_flush : 0;
    return 0;
}

void nvme_init(void) {
    for (int i = pci_find(0x01, 0x08, 0x02, -1); i >= 0 && nctrls < NVME_MAX_DISKS;
         i = pci_find(0x01, 0x08, 0x02, i)) {
        const struct pci_device *p = pci_get((unsigned)i);
        struct nvme *c = &ctrls[nctrls];
        memset(c, 0, sizeof *c);
        c->blk.name[0] = 'n', c->blk.name[1] = 'v', c->blk.name[2] = 'm', c->blk.name[3] = 'e';
        c->blk.name[4] = (char)('0' + nctrls);
        const char *why = start(c, p);
        if (why) {
            if (c->regs && !c->dead) {
                wr32(c, REG_CC, rd32(c, REG_CC) & ~CC_EN);  // stop it using our queues
            }
            kprintf("kernel: nvme %02x:%02x.%u: %s; skipped\n", p->bus, p->dev, p->fn, why);
            continue;
        }
        nctrls++;
        blk_register(&c->blk);
        kprintf("kernel: %s: nvme %02x:%02x.%u, %lu blocks of %u bytes, %s%s\n", c->blk.name,
                p->bus, p->dev, p->fn, c->blk.block_count, c->blk.block_size,
                c->blk.guarded ? "read-only until made writable" : "write protected",
                c->blk.flush ? ", flush" : "");
    }
}
