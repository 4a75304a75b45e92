// SPDX-License-Identifier: MIT
// The xHCI host controller (xhci.h), from the xHCI 1.2 specification: ownership through
// USBLEGSUP (§4.22.1), halt and reset (§4.2), the device context base address array
// with its scratchpad buffers, one command ring and one event ring (§4.9), then per
// device slot an output context, an input context, a ring per endpoint and a page for
// the data the transfers move. Every wait is bounded by the TSC.
#include "xhci.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "pci.h"

// Capability registers.
#define CAP_LENGTH     0x00
#define CAP_HCSPARAMS1 0x04
#define CAP_HCSPARAMS2 0x08
#define CAP_HCCPARAMS1 0x10
#define CAP_DBOFF      0x14
#define CAP_RTSOFF     0x18
#define HCC_AC64       (1u << 0)
#define HCC_CSZ        (1u << 2)
#define HCC_PPC        (1u << 3)

// Operational registers.
#define OP_USBCMD 0x00
#define OP_USBSTS 0x04
#define OP_CRCR   0x18
#define OP_DCBAAP 0x30
#define OP_CONFIG 0x38
#define OP_PORTSC 0x400  // + 0x10 * (port - 1)
#define CMD_RUN   (1u << 0)
#define CMD_HCRST (1u << 1)
#define STS_HCH   (1u << 0)
#define STS_HSE   (1u << 2)
#define STS_CNR   (1u << 11)

#define PORT_CCS      (1u << 0)
#define PORT_PED      (1u << 1)
#define PORT_PR       (1u << 4)
#define PORT_PP       (1u << 9)
#define PORT_SPEED(v) ((v) >> 10 & 0xf)
#define PORT_CHANGES  (0x7fu << 17)  // CSC PEC WRC OCC PRC PLC CEC, write 1 to clear
#define PORT_CSC      (1u << 17)
#define PORT_KEEP     (PORT_PP | (3u << 14) | (7u << 25))  // PP, PIC, wake enables

// Runtime registers: interrupter 0.
#define RT_IR0_ERSTSZ 0x28
#define RT_IR0_ERSTBA 0x30
#define RT_IR0_ERDP   0x38
#define ERDP_EHB      (1u << 3)

// Extended capabilities.
#define XCAP_LEGACY    1
#define XCAP_PROTOCOL  2
#define LEGSUP_BIOS    (1u << 16)
#define LEGSUP_OS      (1u << 24)
#define LEGCTL_SMI_ENS 0x0000e011u  // SMI on USB, host error, OS ownership, PCI, BAR
#define LEGCTL_SMI_STS 0xe0000000u  // write 1 to clear

// TRBs (§6.4).
#define TRB_NORMAL       1
#define TRB_SETUP        2
#define TRB_DATA         3
#define TRB_STATUS       4
#define TRB_LINK         6
#define TRB_ENABLE_SLOT  9
#define TRB_DISABLE_SLOT 10
#define TRB_ADDRESS      11
#define TRB_CONFIGURE    12
#define TRB_EVALUATE     13
#define TRB_RESET_EP     14
#define TRB_STOP_EP      15
#define TRB_SET_DEQUEUE  16
#define TRB_EV_TRANSFER  32
#define TRB_EV_COMMAND   33
#define TRB_EV_PORT      34
#define TRB_TYPE(t)      ((uint32_t)(t) << 10)
#define TRB_CYCLE        (1u << 0)
#define TRB_TC           (1u << 1)
#define TRB_ISP          (1u << 2)
#define TRB_CH           (1u << 4)
#define TRB_IOC          (1u << 5)
#define TRB_IDT          (1u << 6)
#define TRB_DIR_IN       (1u << 16)
#define TRB_SLOT(s)      ((uint32_t)(s) << 24)
#define TRB_EP(e)        ((uint32_t)(e) << 16)
#define TRB_TD_SIZE(n)   ((uint32_t)((n) > 31 ? 31 : (n)) << 17)
#define CC_SUCCESS       1
#define CC_BABBLE        3
#define CC_TRANSACTION   4
#define CC_STALL         6
#define CC_SHORT         13

// Endpoint context (§6.2.3): states in dword 0, types in dword 1.
#define EP_STATE(dw0)    ((dw0) & 7)
#define EP_STATE_HALTED  2
#define EP_STATE_RUNNING 1
#define EP_TYPE_BULK_OUT 2
#define EP_TYPE_BULK_IN  6
#define BULK_AVG_TRB     3072  // §4.14.1.1: the suggested Average TRB Length for bulk
#define BULK_MAX_TRBS    20    // one transfer: up to 1 MiB cut at 64 KiB boundaries

#define RING_TRBS 256  // one page
#define MAX_PORTS 32   // root ports served per controller
#define MAX_DCI   31

struct trb {
    uint64_t param;
    uint32_t status;
    uint32_t control;
};

struct ring {
    volatile struct trb *trb;
    uint64_t phys;
    unsigned enq;
    uint32_t cycle;
};

struct pipe {
    usb_intr_done done;
    uint8_t *buf;
    uint64_t buf_phys;
    uint16_t len;
    unsigned errors;
};

struct slot {
    bool have_pages;
    uint8_t *out, *in, *data;  // output context, input context, transfer data page
    uint64_t out_phys, in_phys, data_phys;
    struct ring ring[MAX_DCI + 1];
    struct pipe pipe[MAX_DCI + 1];
    struct usb_device *dev;
};

struct xhci {
    const struct pci_device *pci;
    volatile uint8_t *cap, *op, *rt;
    volatile uint32_t *db;
    unsigned csz, max_slots, nports;
    bool usb3[MAX_PORTS + 1];
    uint64_t *dcbaa;
    struct ring cmd;
    volatile struct trb *ev;
    uint64_t ev_phys;
    unsigned ev_deq;
    uint32_t ev_cycle;
    // The one synchronous wait in progress (a command or a control transfer).
    uint64_t wait_trb;
    uint8_t wait_slot;
    bool wait_done;
    uint8_t wait_code, wait_slot_out;
    uint32_t wait_residual;
    // The one bulk transfer in progress: the TRBs of its TD, and how it ended.
    struct {
        bool active, done;
        uint8_t slot, dci, code;
        unsigned ntrbs, at;  // TRBs queued; the one the completion event names
        uint32_t residual;
        uint64_t trb[BULK_MAX_TRBS];
        uint32_t len[BULK_MAX_TRBS];
    } bulk;
    bool dead;
    struct slot slots[KUSB_MAX_SLOTS + 1];
    struct usb_port port_state[MAX_PORTS];
    struct usb_portset ports;
};

static struct xhci hcs[KUSB_MAX_HC];
static unsigned n_hcs;

static uint32_t rd32(volatile uint8_t *base, unsigned off) {
    return *(volatile uint32_t *)(base + off);
}
static void wr32(volatile uint8_t *base, unsigned off, uint32_t v) {
    *(volatile uint32_t *)(base + off) = v;
}
static void wr64(volatile uint8_t *base, unsigned off, uint64_t v) {
    *(volatile uint32_t *)(base + off) = (uint32_t)v;
    *(volatile uint32_t *)(base + off + 4) = (uint32_t)(v >> 32);
}

static uint64_t deadline_ms(unsigned ms) {
    return arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
}

static bool wait_reg(volatile uint8_t *base, unsigned off, uint32_t mask, uint32_t want,
                     unsigned ms) {
    uint64_t end = deadline_ms(ms);
    do {
        uint32_t v = rd32(base, off);
        if (v != 0xffffffffu && (v & mask) == want) {
            return true;
        }
        arch_pause();
    } while (arch_rdtsc() < end);
    return false;
}

static void *page(uint64_t *phys) {
    uint64_t p = mm_alloc_frames(1);
    *phys = p;
    if (p) {
        memset((void *)(uintptr_t)p, 0, KPAGE_SIZE);
    }
    return (void *)(uintptr_t)p;
}

static bool ring_init(struct ring *r) {
    if (!r->trb) {
        r->trb = page(&r->phys);
        if (!r->trb) {
            return false;
        }
    }
    memset((void *)r->trb, 0, KPAGE_SIZE);
    r->enq = 0;
    r->cycle = 1;
    return true;
}

static uint64_t ring_put(struct ring *r, uint64_t param, uint32_t status, uint32_t control) {
    volatile struct trb *t = &r->trb[r->enq];
    uint64_t at = r->phys + r->enq * sizeof(struct trb);
    t->param = param;
    t->status = status;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    t->control = control | r->cycle;
    if (++r->enq == RING_TRBS - 1) {
        volatile struct trb *link = &r->trb[r->enq];
        link->param = r->phys;
        link->status = 0;
        __atomic_thread_fence(__ATOMIC_RELEASE);
        // A TD that goes on past the link TRB has it in its chain (§4.11.5.1).
        link->control = TRB_TYPE(TRB_LINK) | TRB_TC | (control & TRB_CH) | r->cycle;
        r->enq = 0;
        r->cycle ^= 1;
    }
    return at;
}

static void doorbell(struct xhci *hc, unsigned slot, unsigned target) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    hc->db[slot] = target;
}

// ---- Events ---------------------------------------------------------------------------

static void transfer_event(struct xhci *hc, uint64_t trb, uint32_t status, uint32_t control) {
    unsigned slot = control >> 24, dci = control >> 16 & 0x1f;
    uint8_t code = status >> 24;
    if (hc->bulk.active && slot == hc->bulk.slot && dci == hc->bulk.dci) {
        unsigned i = 0;
        while (i < hc->bulk.ntrbs && hc->bulk.trb[i] != trb) {
            i++;
        }
        // Another TD's event (one stopped earlier), or a success of a TRB before the
        // last (none has IOC; a controller may report one anyway): not the end.
        if (i == hc->bulk.ntrbs || (code == CC_SUCCESS && i + 1 != hc->bulk.ntrbs)) {
            return;
        }
        hc->bulk.done = true;
        hc->bulk.code = code;
        hc->bulk.at = i;
        hc->bulk.residual = status & 0xffffff;
        return;
    }
    if (hc->wait_trb && slot == hc->wait_slot && dci == 1) {
        if (trb == hc->wait_trb || (code != CC_SUCCESS && code != CC_SHORT)) {
            hc->wait_done = true;
            hc->wait_code = code;
        } else if (code == CC_SHORT) {
            hc->wait_residual = status & 0xffffff;  // the data stage ended short
        }
        return;
    }
    if (slot > KUSB_MAX_SLOTS || !hc->slots[slot].dev) {
        return;
    }
    struct slot *s = &hc->slots[slot];
    struct pipe *p = &s->pipe[dci];
    if (!p->done) {
        return;
    }
    if (code == CC_SUCCESS || code == CC_SHORT) {
        p->errors = 0;
        unsigned got = p->len - (status & 0xffffff);
        p->done(s->dev, p->buf, got > p->len ? 0 : got);
    } else if (++p->errors > 8) {
        kprintf("kernel: usb: slot %u endpoint %u keeps failing (code %u); stopped\n", slot, dci,
                code);
        p->done = NULL;
        return;
    } else if (code == CC_STALL) {
        return;  // halted: left alone rather than reset from here
    }
    ring_put(&s->ring[dci], p->buf_phys, p->len, TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    doorbell(hc, slot, dci);
}

static void poll_events(struct xhci *hc) {
    for (unsigned n = 0; n < RING_TRBS; n++) {
        volatile struct trb *t = &hc->ev[hc->ev_deq];
        uint32_t control = t->control;
        if ((control & TRB_CYCLE) != hc->ev_cycle) {
            break;
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t param = t->param;
        uint32_t status = t->status;
        if (++hc->ev_deq == RING_TRBS) {
            hc->ev_deq = 0;
            hc->ev_cycle ^= 1;
        }
        switch (control >> 10 & 0x3f) {
            case TRB_EV_TRANSFER:
                transfer_event(hc, param, status, control);
                break;
            case TRB_EV_COMMAND:
                if (param == hc->wait_trb) {
                    hc->wait_done = true;
                    hc->wait_code = status >> 24;
                    hc->wait_slot_out = control >> 24;
                }
                break;
            case TRB_EV_PORT: {
                unsigned port = (unsigned)(param >> 24 & 0xff);
                if (port >= 1 && port <= hc->nports) {
                    usb_port_attention(&hc->ports, port);
                }
                break;
            }
            default:
                break;
        }
        wr64(hc->rt, RT_IR0_ERDP, (hc->ev_phys + hc->ev_deq * sizeof(struct trb)) | ERDP_EHB);
    }
}

void xhci_poll_all(void) {
    for (unsigned i = 0; i < n_hcs; i++) {
        if (!hcs[i].dead) {
            poll_events(&hcs[i]);
        }
    }
}

// Waits for the event of the TRB at `trb` (slot: 0 for a command). Other events are
// handled meanwhile. False on timeout: that controller is then given up.
static bool wait_for(struct xhci *hc, uint64_t trb, unsigned slot, unsigned ms) {
    hc->wait_trb = trb;
    hc->wait_slot = (uint8_t)slot;
    hc->wait_done = false;
    hc->wait_residual = 0;
    uint64_t end = deadline_ms(ms);
    while (!hc->wait_done) {
        poll_events(hc);
        if (!hc->wait_done && arch_rdtsc() > end) {
            hc->wait_trb = 0;
            uint32_t sts = rd32(hc->op, OP_USBSTS);
            kprintf("kernel: usb: xhci %02x:%02x.%u did not answer in %u ms (status 0x%x)%s\n",
                    hc->pci->bus, hc->pci->dev, hc->pci->fn, ms, sts,
                    (sts & (STS_HSE | STS_HCH)) ? "; controller given up" : "");
            if (sts & (STS_HSE | STS_HCH)) {
                hc->dead = true;
            }
            return false;
        }
        arch_pause();
    }
    hc->wait_trb = 0;
    return true;
}

static int command(struct xhci *hc, uint64_t param, uint32_t control) {
    if (hc->dead) {
        return -1;
    }
    uint64_t at = ring_put(&hc->cmd, param, 0, control);
    doorbell(hc, 0, 0);
    if (!wait_for(hc, at, 0, KUSB_CMD_MS)) {
        return -1;
    }
    return hc->wait_code;
}

// ---- Contexts -------------------------------------------------------------------------

static uint32_t *in_ctx(struct xhci *hc, struct slot *s, unsigned i) {  // 0 control, 1 slot
    return (uint32_t *)(s->in + i * hc->csz);
}
static uint32_t *out_ctx(struct xhci *hc, struct slot *s, unsigned i) {  // 0 slot, 1 EP0
    return (uint32_t *)(s->out + i * hc->csz);
}

static void in_clear(struct slot *s) {
    memset(s->in, 0, KPAGE_SIZE);
}

static struct slot *slot_of(struct usb_device *d) {
    return &d->hc->slots[d->slot];
}

bool xhci_enable_slot(struct usb_device *d) {
    struct xhci *hc = d->hc;
    int cc = command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT));
    if (cc != CC_SUCCESS) {
        kprintf("kernel: usb: no device slot (completion code %d)\n", cc);
        return false;
    }
    unsigned id = hc->wait_slot_out;
    if (id == 0 || id > KUSB_MAX_SLOTS) {
        command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(id));
        return false;
    }
    struct slot *s = &hc->slots[id];
    if (!s->have_pages) {
        s->out = page(&s->out_phys);
        s->in = page(&s->in_phys);
        s->data = page(&s->data_phys);
        if (!s->out || !s->in || !s->data) {
            kprintf("kernel: usb: out of memory for a device slot\n");
            return false;
        }
        s->have_pages = true;
    }
    memset(s->out, 0, KPAGE_SIZE);
    memset(s->pipe, 0, sizeof(s->pipe));
    hc->dcbaa[id] = s->out_phys;
    s->dev = d;
    d->slot = (uint8_t)id;
    return true;
}

bool xhci_address_device(struct usb_device *d) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    if (!ring_init(&s->ring[1])) {
        return false;
    }
    in_clear(s);
    in_ctx(hc, s, 0)[1] = 0x3;  // add the slot context and EP0
    uint32_t *sc = in_ctx(hc, s, 1);
    sc[0] = d->route | (uint32_t)d->speed << 20 | 1u << 27;
    sc[1] = (uint32_t)d->root_port << 16;
    sc[2] = d->tt_slot | (uint32_t)d->tt_port << 8;
    uint32_t *ep0 = in_ctx(hc, s, 2);
    ep0[1] = 3u << 1 | 4u << 3 | (uint32_t)d->ep0_mps << 16;  // 3 retries, control
    ep0[2] = (uint32_t)s->ring[1].phys | 1;
    ep0[3] = (uint32_t)(s->ring[1].phys >> 32);
    ep0[4] = 8;
    int cc = command(hc, s->in_phys, TRB_TYPE(TRB_ADDRESS) | TRB_SLOT(d->slot));
    if (cc != CC_SUCCESS) {
        kprintf("kernel: usb: port %u: address device failed (code %d)\n", d->port, cc);
        return false;
    }
    return true;
}

bool xhci_set_ep0_mps(struct usb_device *d, uint16_t mps) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    in_clear(s);
    in_ctx(hc, s, 0)[1] = 0x2;
    memcpy(in_ctx(hc, s, 2), out_ctx(hc, s, 1), 20);
    uint32_t *ep0 = in_ctx(hc, s, 2);
    ep0[1] = (ep0[1] & 0xffff) | (uint32_t)mps << 16;
    d->ep0_mps = mps;
    return command(hc, s->in_phys, TRB_TYPE(TRB_EVALUATE) | TRB_SLOT(d->slot)) == CC_SUCCESS;
}

void xhci_disable_slot(struct usb_device *d) {
    struct xhci *hc = d->hc;
    if (!d->slot) {
        return;
    }
    struct slot *s = slot_of(d);
    s->dev = NULL;
    memset(s->pipe, 0, sizeof(s->pipe));
    command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(d->slot));
    hc->dcbaa[d->slot] = 0;
    d->slot = 0;
}

// Input slot context from the current one, Context Entries at least `entries`.
static uint32_t *slot_from_current(struct xhci *hc, struct slot *s, unsigned entries) {
    uint32_t *sc = in_ctx(hc, s, 1);
    memcpy(sc, out_ctx(hc, s, 0), 16);
    sc[3] = 0;
    unsigned cur = sc[0] >> 27;
    if (entries > cur) {
        sc[0] = (sc[0] & 0x07ffffffu) | (uint32_t)entries << 27;
    }
    return sc;
}

bool xhci_set_hub(struct usb_device *d, uint8_t nports, uint8_t ttt) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    in_clear(s);
    in_ctx(hc, s, 0)[1] = 0x1;
    uint32_t *sc = slot_from_current(hc, s, 1);
    sc[0] |= 1u << 26;  // Hub
    sc[1] = (sc[1] & 0x00ffffffu) | (uint32_t)nports << 24;
    if (d->speed == USB_SPEED_HIGH) {
        sc[2] = (sc[2] & ~(3u << 16)) | (uint32_t)(ttt & 3) << 16;
    }
    return command(hc, s->in_phys, TRB_TYPE(TRB_EVALUATE) | TRB_SLOT(d->slot)) == CC_SUCCESS;
}

bool xhci_open_interrupt_in(struct usb_device *d, const uint8_t *ep, usb_intr_done done) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    unsigned num = ep[2] & 0xf, dci = num * 2 + 1;
    uint16_t mps = (uint16_t)((ep[4] | ep[5] << 8) & 0x7ff);
    unsigned binterval = ep[6] ? ep[6] : 1, interval;
    if (d->speed == USB_SPEED_HIGH || d->speed == USB_SPEED_SUPER) {
        interval = binterval > 16 ? 15 : binterval - 1;
    } else {  // frames of 1 ms: the exponent of 125 us units, 3..10
        interval = 3;
        while (interval < 10 && (1u << (interval + 1)) <= binterval * 8) {
            interval++;
        }
    }
    if (!num || !ring_init(&s->ring[dci]) || mps == 0 || mps > 256) {
        return false;
    }
    in_clear(s);
    in_ctx(hc, s, 0)[1] = 0x1 | 1u << dci;
    slot_from_current(hc, s, dci);
    uint32_t *ec = in_ctx(hc, s, dci + 1);
    ec[0] = interval << 16;
    ec[1] = 3u << 1 | 7u << 3 | (uint32_t)mps << 16;  // 3 retries, interrupt IN
    ec[2] = (uint32_t)s->ring[dci].phys | 1;
    ec[3] = (uint32_t)(s->ring[dci].phys >> 32);
    ec[4] = mps | (uint32_t)mps << 16;
    int cc = command(hc, s->in_phys, TRB_TYPE(TRB_CONFIGURE) | TRB_SLOT(d->slot));
    if (cc != CC_SUCCESS) {
        kprintf("kernel: usb: port %u: configure endpoint failed (code %d)\n", d->port, cc);
        return false;
    }
    struct pipe *p = &s->pipe[dci];
    p->buf = s->data + 2048 + 64 * num;  // control data uses the first 2 KiB
    p->buf_phys = s->data_phys + 2048 + 64 * num;
    p->len = mps > 64 ? 64 : mps;
    p->errors = 0;
    p->done = done;
    ring_put(&s->ring[dci], p->buf_phys, p->len, TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    doorbell(hc, d->slot, dci);
    return true;
}

// ---- Bulk endpoints -------------------------------------------------------------------

static unsigned bulk_dci(uint8_t ep_addr) {
    return (ep_addr & 0xf) * 2 + ((ep_addr & 0x80) ? 1 : 0);
}

// Configure Endpoint with the endpoint context for `dci` in the input context; `drop`
// also drops it first, which is how a live endpoint's sequence number (data toggle) is
// reset without a halt (§4.6.6: both flags set drop, then add).
static bool configure_one(struct xhci *hc, struct usb_device *d, struct slot *s, unsigned dci,
                          bool drop) {
    in_ctx(hc, s, 0)[0] = drop ? 1u << dci : 0;
    in_ctx(hc, s, 0)[1] = 0x1 | 1u << dci;
    slot_from_current(hc, s, dci);
    int cc = command(hc, s->in_phys, TRB_TYPE(TRB_CONFIGURE) | TRB_SLOT(d->slot));
    if (cc != CC_SUCCESS) {
        kprintf("kernel: usb: port %u: configure endpoint %u failed (code %d)\n", d->port, dci, cc);
        return false;
    }
    return true;
}

bool xhci_open_bulk(struct usb_device *d, const uint8_t *ep, const uint8_t *companion) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    unsigned num = ep[2] & 0xf, dci = bulk_dci(ep[2]);
    uint16_t mps = (uint16_t)((ep[4] | ep[5] << 8) & 0x7ff);
    unsigned burst = companion ? companion[2] & 0xf : 0;  // SuperSpeed: bMaxBurst
    if (hc->dead || !d->slot || !num || mps < 8 || mps > 1024 || !ring_init(&s->ring[dci])) {
        return false;
    }
    in_clear(s);
    uint32_t *ec = in_ctx(hc, s, dci + 1);
    uint32_t type = (ep[2] & 0x80) ? EP_TYPE_BULK_IN : EP_TYPE_BULK_OUT;
    ec[0] = 0;                                                       // no streams, no interval
    ec[1] = 3u << 1 | type << 3 | burst << 8 | (uint32_t)mps << 16;  // 3 retries
    ec[2] = (uint32_t)s->ring[dci].phys | 1;                         // dequeue, DCS 1
    ec[3] = (uint32_t)(s->ring[dci].phys >> 32);
    ec[4] = BULK_AVG_TRB;  // Max ESIT Payload 0: not periodic
    memset(&s->pipe[dci], 0, sizeof(s->pipe[dci]));
    return configure_one(hc, d, s, dci, false);
}

// The host side of a bulk endpoint back to a fresh start: out of Halted (Reset
// Endpoint) or Running (Stop Endpoint) into Stopped, then dropped and added again with
// an empty ring and the sequence number at 0, as the device's is after CLEAR_FEATURE
// (ENDPOINT_HALT) or a class reset. A TD still queued is thereby abandoned.
bool xhci_bulk_reset(struct usb_device *d, uint8_t ep_addr) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    unsigned dci = bulk_dci(ep_addr);
    if (hc->dead || !d->slot || dci < 2) {
        return false;
    }
    uint32_t state = EP_STATE(out_ctx(hc, s, dci)[0]);
    if (state == EP_STATE_HALTED) {
        command(hc, 0, TRB_TYPE(TRB_RESET_EP) | TRB_SLOT(d->slot) | TRB_EP(dci));
    } else if (state == EP_STATE_RUNNING) {
        command(hc, 0, TRB_TYPE(TRB_STOP_EP) | TRB_SLOT(d->slot) | TRB_EP(dci));
    }
    in_clear(s);
    uint32_t *ec = in_ctx(hc, s, dci + 1);
    memcpy(ec, out_ctx(hc, s, dci), 20);
    ec[0] &= ~7u;  // the state bits are the controller's, not an input
    if (!ring_init(&s->ring[dci])) {
        return false;
    }
    ec[2] = (uint32_t)s->ring[dci].phys | 1;
    ec[3] = (uint32_t)(s->ring[dci].phys >> 32);
    return configure_one(hc, d, s, dci, true);
}

int xhci_bulk(struct usb_device *d, uint8_t ep_addr, uint64_t phys, uint32_t len, unsigned ms,
              uint32_t *moved) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    unsigned dci = bulk_dci(ep_addr);
    *moved = 0;
    if (hc->dead || !d->slot || dci < 2 || !s->ring[dci].trb || len == 0 ||
        len > (BULK_MAX_TRBS - 4) * 0x10000u) {
        return USB_XFER_ERROR;
    }
    if (EP_STATE(out_ctx(hc, s, dci)[0]) == EP_STATE_HALTED) {
        return USB_XFER_STALL;  // still halted: the class driver clears it first
    }
    uint16_t mps = (uint16_t)(out_ctx(hc, s, dci)[1] >> 16);
    bool in = ep_addr & 0x80;
    struct ring *r = &s->ring[dci];
    // One TD: a Normal TRB per piece of the buffer that stays inside one 64 KiB window
    // (§6.4.1.1: a TRB's buffer must not cross a 64 KiB boundary), chained; the last one
    // interrupts, and every one reports a short packet (IN) as the end of the TD.
    // TD Size (§4.11.2.4): the TD's packets less those the bytes up to the end of this
    // TRB fill, 0 in the last TRB.
    hc->bulk.ntrbs = 0;
    uint32_t left = len, sent = 0, tdpc = mps ? (len + mps - 1) / mps : 0;
    uint64_t at = phys;
    while (left) {
        uint32_t room = 0x10000u - (uint32_t)(at & 0xffff);
        uint32_t n = left < room ? left : room;
        left -= n;
        sent += n;
        unsigned packets_after = left && mps ? tdpc - sent / mps : 0;
        uint32_t control = TRB_TYPE(TRB_NORMAL) | (in ? TRB_ISP : 0) | (left ? TRB_CH : TRB_IOC);
        unsigned i = hc->bulk.ntrbs++;
        hc->bulk.len[i] = n;
        hc->bulk.trb[i] = ring_put(r, at, n | TRB_TD_SIZE(packets_after), control);
        at += n;
    }
    hc->bulk.active = true;
    hc->bulk.done = false;
    hc->bulk.slot = d->slot;
    hc->bulk.dci = (uint8_t)dci;
    doorbell(hc, d->slot, dci);
    uint64_t end = deadline_ms(ms);
    while (!hc->bulk.done && arch_rdtsc() < end) {
        poll_events(hc);
        arch_pause();
    }
    poll_events(hc);  // an event that came just as the time ran out still counts
    hc->bulk.active = false;
    if (!hc->bulk.done) {
        uint32_t sts = rd32(hc->op, OP_USBSTS);
        if (sts & (STS_HSE | STS_HCH)) {
            kprintf("kernel: usb: xhci %02x:%02x.%u stopped (status 0x%x); controller given "
                    "up\n",
                    hc->pci->bus, hc->pci->dev, hc->pci->fn, sts);
            hc->dead = true;
            return USB_XFER_ERROR;
        }
        xhci_bulk_reset(d, ep_addr);  // the TD must not run later, on its own
        return USB_XFER_TIMEOUT;
    }
    uint32_t sum = 0;
    for (unsigned i = 0; i < hc->bulk.at; i++) {
        sum += hc->bulk.len[i];
    }
    uint32_t last = hc->bulk.len[hc->bulk.at];
    sum += last - (hc->bulk.residual > last ? last : hc->bulk.residual);
    *moved = sum;
    switch (hc->bulk.code) {
        case CC_SUCCESS:
        case CC_SHORT:
            return USB_XFER_OK;
        case CC_STALL:
        case CC_BABBLE:
        case CC_TRANSACTION:
            return USB_XFER_STALL;  // the endpoint halted (§4.10.2.1, .4, .6)
        default:
            return USB_XFER_ERROR;
    }
}

// A halted default pipe (a request the device refused): reset it and move past the TD.
static void ep0_recover(struct xhci *hc, struct slot *s, unsigned slot) {
    command(hc, 0, TRB_TYPE(TRB_RESET_EP) | TRB_SLOT(slot) | TRB_EP(1));
    struct ring *r = &s->ring[1];
    command(hc, (r->phys + r->enq * sizeof(struct trb)) | r->cycle,
            TRB_TYPE(TRB_SET_DEQUEUE) | TRB_SLOT(slot) | TRB_EP(1));
}

int xhci_control(struct usb_device *d, const uint8_t setup[8], void *data) {
    struct xhci *hc = d->hc;
    struct slot *s = slot_of(d);
    if (hc->dead || !d->slot) {
        return -1;
    }
    uint16_t len = (uint16_t)(setup[6] | setup[7] << 8);
    bool in = setup[0] & USB_REQ_IN;
    if (len > 2048) {
        return -1;
    }
    uint64_t param;
    memcpy(&param, setup, 8);
    if (len && !in) {
        memcpy(s->data, data, len);
    }
    struct ring *r = &s->ring[1];
    uint32_t trt = len ? (in ? 3u : 2u) : 0u;
    ring_put(r, param, 8, TRB_TYPE(TRB_SETUP) | TRB_IDT | trt << 16);
    if (len) {
        ring_put(r, s->data_phys, len, TRB_TYPE(TRB_DATA) | TRB_ISP | (in ? TRB_DIR_IN : 0));
    }
    uint64_t st = ring_put(r, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC | (len && in ? 0 : TRB_DIR_IN));
    doorbell(hc, d->slot, 1);
    if (!wait_for(hc, st, d->slot, KUSB_XFER_MS)) {
        return -1;
    }
    if (hc->wait_code != CC_SUCCESS) {
        if (hc->wait_code == CC_STALL) {
            ep0_recover(hc, s, d->slot);
        }
        return -1;
    }
    unsigned got = len - (hc->wait_residual > len ? len : hc->wait_residual);
    if (in && got) {
        memcpy(data, s->data, got);
    }
    return (int)got;
}

// ---- Root ports -----------------------------------------------------------------------

static bool root_status(void *owner, unsigned port, struct usb_port_status *st) {
    struct xhci *hc = owner;
    if (hc->dead) {
        return false;
    }
    unsigned off = OP_PORTSC + 0x10 * (port - 1);
    uint32_t v = rd32(hc->op, off);
    if (v == 0xffffffffu) {
        return false;
    }
    if (v & PORT_CHANGES) {
        wr32(hc->op, off, (v & PORT_KEEP) | (v & PORT_CHANGES));
    }
    *st = (struct usb_port_status){
        .connected = v & PORT_CCS,
        .enabled = v & PORT_PED,
        .resetting = v & PORT_PR,
        .changed = v & PORT_CSC,
        .speed = (uint8_t)PORT_SPEED(v),
    };
    return true;
}

static bool root_reset(void *owner, unsigned port) {
    struct xhci *hc = owner;
    unsigned off = OP_PORTSC + 0x10 * (port - 1);
    uint32_t v = rd32(hc->op, off);
    wr32(hc->op, off, (v & PORT_KEEP) | PORT_PR);
    return true;
}

static bool root_reset_needed(void *owner, unsigned port) {
    struct xhci *hc = owner;
    return !hc->usb3[port];
}

static const struct usb_hub_ops root_ops = { root_status, root_reset, root_reset_needed };

// ---- Bring-up -------------------------------------------------------------------------

// USBLEGSUP: ask the firmware to let go (§4.22.1), then no more SMIs from the controller;
// and note which ports speak USB 3 (Supported Protocol capabilities).
static void walk_xcaps(struct xhci *hc, uint32_t hcc) {
    unsigned off = (hcc >> 16) << 2;
    for (unsigned n = 0; off && n < 64; n++) {
        uint32_t v = rd32(hc->cap, off);
        if ((v & 0xff) == XCAP_LEGACY) {
            if (v & LEGSUP_BIOS) {
                wr32(hc->cap, off, v | LEGSUP_OS);
                if (!wait_reg(hc->cap, off, LEGSUP_BIOS, 0, KUSB_HANDOFF_MS)) {
                    kprintf("kernel: usb: the firmware kept the xHCI controller for %u ms; "
                            "taking it anyway\n",
                            KUSB_HANDOFF_MS);
                    wr32(hc->cap, off, (rd32(hc->cap, off) & ~LEGSUP_BIOS) | LEGSUP_OS);
                }
            }
            uint32_t ctl = rd32(hc->cap, off + 4);
            wr32(hc->cap, off + 4, (ctl & ~LEGCTL_SMI_ENS) | LEGCTL_SMI_STS);
        } else if ((v & 0xff) == XCAP_PROTOCOL && (v >> 24) >= 3) {
            uint32_t w = rd32(hc->cap, off + 8);
            unsigned first = w & 0xff, count = w >> 8 & 0xff;
            for (unsigned p = first; p < first + count && p <= MAX_PORTS; p++) {
                hc->usb3[p] = true;
            }
        }
        unsigned next = v >> 8 & 0xff;
        off = next ? off + (next << 2) : 0;
    }
}

// Intel's 7 and 8 series chipsets wire their USB 2 ports to the EHCI controller until
// the ports are switched over (the xHCI switch registers in PCI configuration space);
// firmware that booted from EHCI leaves them there, and a keyboard is then invisible.
static void intel_switch_ports(const struct pci_device *p) {
    if (p->vendor != 0x8086 ||
        (p->device != 0x1e31 && p->device != 0x8c31 && p->device != 0x9c31)) {
        return;
    }
    pci_write32(p, 0xd8, pci_read32(p, 0xdc));  // USB3_PSSEN = USB3PRM: SuperSpeed on
    pci_write32(p, 0xd0, pci_read32(p, 0xd4));  // XUSB2PR = XUSB2PRM: USB 2 ports to xHCI
}

static bool start(struct xhci *hc) {
    const struct pci_device *p = hc->pci;
    const struct pci_bar *bar = &p->bar[0];
    if (!bar->base || bar->io || bar->size < 0x1000) {
        kprintf("kernel: usb: xhci %02x:%02x.%u has no register BAR; skipped\n", p->bus, p->dev,
                p->fn);
        return false;
    }
    pci_enable(p);
    intel_switch_ports(p);
    hc->cap = kmem_map_device(bar->base, bar->size);
    uint32_t hcc = rd32(hc->cap, CAP_HCCPARAMS1);
    if (rd32(hc->cap, CAP_LENGTH) == 0xffffffffu) {
        kprintf("kernel: usb: xhci %02x:%02x.%u reads all ones; skipped\n", p->bus, p->dev, p->fn);
        return false;
    }
    hc->op = hc->cap + (rd32(hc->cap, CAP_LENGTH) & 0xff);
    hc->rt = hc->cap + (rd32(hc->cap, CAP_RTSOFF) & ~0x1fu);
    hc->db = (volatile uint32_t *)(hc->cap + (rd32(hc->cap, CAP_DBOFF) & ~0x3u));
    hc->csz = (hcc & HCC_CSZ) ? 64 : 32;
    uint32_t sp1 = rd32(hc->cap, CAP_HCSPARAMS1), sp2 = rd32(hc->cap, CAP_HCSPARAMS2);
    hc->max_slots = sp1 & 0xff;
    if (hc->max_slots > KUSB_MAX_SLOTS) {
        hc->max_slots = KUSB_MAX_SLOTS;
    }
    hc->nports = sp1 >> 24;
    if (hc->nports > MAX_PORTS) {
        hc->nports = MAX_PORTS;
    }
    walk_xcaps(hc, hcc);

    wr32(hc->op, OP_USBCMD, rd32(hc->op, OP_USBCMD) & ~CMD_RUN);
    if (!wait_reg(hc->op, OP_USBSTS, STS_HCH, STS_HCH, KUSB_HC_RESET_MS)) {
        kprintf("kernel: usb: xhci %02x:%02x.%u did not halt; skipped\n", p->bus, p->dev, p->fn);
        return false;
    }
    wr32(hc->op, OP_USBCMD, CMD_HCRST);
    uint64_t settle = deadline_ms(1);  // some controllers must not be read just after it
    while (arch_rdtsc() < settle) {
        arch_pause();
    }
    if (!wait_reg(hc->op, OP_USBCMD, CMD_HCRST, 0, KUSB_HC_RESET_MS) ||
        !wait_reg(hc->op, OP_USBSTS, STS_CNR, 0, KUSB_HC_RESET_MS)) {
        kprintf("kernel: usb: xhci %02x:%02x.%u did not finish its reset; skipped\n", p->bus,
                p->dev, p->fn);
        return false;
    }

    uint64_t dcbaa_phys, ev_phys, erst_phys;
    hc->dcbaa = page(&dcbaa_phys);
    hc->ev = page(&ev_phys);
    uint64_t *erst = page(&erst_phys);
    if (!hc->dcbaa || !hc->ev || !erst || !ring_init(&hc->cmd)) {
        kprintf("kernel: usb: out of memory for the xHCI rings\n");
        return false;
    }
    if (!(hcc & HCC_AC64) && (dcbaa_phys | ev_phys | erst_phys | hc->cmd.phys) >> 32) {
        kprintf("kernel: usb: xhci addresses 32 bits only and memory is above 4 GiB; "
                "skipped\n");
        return false;
    }
    unsigned scratch = (sp2 >> 27 & 0x1f) | (sp2 >> 21 & 0x1f) << 5;
    if (scratch) {
        uint64_t arr_phys;
        uint64_t *arr = page(&arr_phys);
        for (unsigned i = 0; arr && i < scratch && i < KPAGE_SIZE / 8; i++) {
            uint64_t b;
            if (!page(&b)) {
                arr = NULL;
                break;
            }
            arr[i] = b;
        }
        if (!arr) {
            kprintf("kernel: usb: out of memory for %u scratchpad pages\n", scratch);
            return false;
        }
        hc->dcbaa[0] = arr_phys;
    }
    hc->ev_phys = ev_phys;
    hc->ev_deq = 0;
    hc->ev_cycle = 1;
    erst[0] = ev_phys;
    erst[1] = RING_TRBS;
    wr32(hc->op, OP_CONFIG, hc->max_slots);
    wr64(hc->op, OP_DCBAAP, dcbaa_phys);
    wr64(hc->op, OP_CRCR, hc->cmd.phys | 1);
    wr32(hc->rt, RT_IR0_ERSTSZ, 1);
    wr64(hc->rt, RT_IR0_ERDP, ev_phys);
    wr64(hc->rt, RT_IR0_ERSTBA, erst_phys);
    wr32(hc->op, OP_USBCMD, CMD_RUN);
    if (!wait_reg(hc->op, OP_USBSTS, STS_HCH, 0, KUSB_HC_RESET_MS)) {
        kprintf("kernel: usb: xhci %02x:%02x.%u did not start; skipped\n", p->bus, p->dev, p->fn);
        return false;
    }
    if (hcc & HCC_PPC) {
        for (unsigned i = 1; i <= hc->nports; i++) {
            unsigned off = OP_PORTSC + 0x10 * (i - 1);
            wr32(hc->op, off, (rd32(hc->op, off) & PORT_KEEP) | PORT_PP);
        }
    }
    hc->ports = (struct usb_portset){
        .owner = hc,
        .ops = &root_ops,
        .hc = hc,
        .nports = hc->nports,
        .ports = hc->port_state,
        .hold_until = (hcc & HCC_PPC) ? deadline_ms(20) : 0,
    };
    usb_add_portset(&hc->ports);
    for (unsigned i = 1; i <= hc->nports; i++) {
        usb_port_attention(&hc->ports, i);  // a device present since power-on made no event
    }
    kprintf("kernel: usb: xhci %02x:%02x.%u (%04x:%04x) running: %u ports, %u slots\n", p->bus,
            p->dev, p->fn, p->vendor, p->device, hc->nports, hc->max_slots);
    return true;
}

unsigned xhci_init_all(void) {
    for (int i = pci_find(0x0c, 0x03, 0x30, -1); i >= 0 && n_hcs < KUSB_MAX_HC;
         i = pci_find(0x0c, 0x03, 0x30, i)) {
        struct xhci *hc = &hcs[n_hcs];
        hc->pci = pci_get((unsigned)i);
        if (start(hc)) {
            n_hcs++;
        } else {
            memset(hc, 0, sizeof(*hc));
        }
    }
    return n_hcs;
}
