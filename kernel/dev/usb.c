// SPDX-License-Identifier: MIT
// The USB core (usb.h): a state machine per port (debounce, reset, recovery, then
// enumeration), driven from the timer tick and bounded at each step; enumeration gives
// a device its address and reads its descriptors (USB 2.0 chapter 9), then offers its
// interfaces to the class drivers. Devices no driver takes stay addressed and
// unconfigured, left to a later driver.
#include "usb.h"

#include "../arch.h"
#include "../kernel.h"
#include "xhci.h"

enum {
    PORT_EMPTY,
    PORT_DEBOUNCE,
    PORT_RESET,
    PORT_RECOVER,
    PORT_ACTIVE,
    PORT_FAILED
};

#define STEP_MS 10  // a port in transition is looked at this often

static struct usb_device devices[KUSB_MAX_DEVICES];
static struct usb_portset *portsets;
static const struct usb_driver *const drivers[] = { &usb_hub_driver, &usb_kbd_driver,
                                                    &usb_msc_driver };
static bool busy;  // a port is in transition: the boot waits for it to settle

static uint64_t ms_to_tsc(unsigned ms) {
    return ktime_tsc_hz() / 1000 * ms;
}

const uint8_t *usb_next_desc(const uint8_t *p, const uint8_t *end, uint8_t type,
                             bool in_interface) {
    for (p += p[0]; p + 2 <= end && p[0] >= 2 && p + p[0] <= end; p += p[0]) {
        if (p[1] == type) {
            return p;
        }
        if (in_interface && p[1] == USB_DESC_INTERFACE) {
            return NULL;
        }
    }
    return NULL;
}

int usb_control(struct usb_device *d, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
                void *data, uint16_t len) {
    uint8_t setup[8] = { type,           req,
                         (uint8_t)value, (uint8_t)(value >> 8),
                         (uint8_t)index, (uint8_t)(index >> 8),
                         (uint8_t)len,   (uint8_t)(len >> 8) };
    return xhci_control(d, setup, data);
}

bool usb_set_configuration(struct usb_device *d) {
    return usb_control(d, 0, 9, d->config_value, 0, NULL, 0) >= 0;
}

bool usb_open_interrupt_in(struct usb_device *d, const uint8_t *ep, usb_intr_done done) {
    if (ep[0] < 7 || !(ep[2] & 0x80) || (ep[3] & 3) != 3) {
        return false;
    }
    return xhci_open_interrupt_in(d, ep, done);
}

bool usb_open_bulk(struct usb_device *d, const uint8_t *ep, const uint8_t *end) {
    if (ep[0] < 7 || (ep[3] & 3) != 2) {
        return false;
    }
    const uint8_t *next = ep + ep[0];  // the companion, if any, follows its endpoint
    const uint8_t *companion = NULL;
    if (d->speed == USB_SPEED_SUPER && next + 6 <= end && next[0] >= 6 &&
        next[1] == USB_DESC_SS_EP_COMPANION) {
        companion = next;
    }
    return xhci_open_bulk(d, ep, companion);
}

int usb_bulk(struct usb_device *d, uint8_t ep_addr, uint64_t phys, uint32_t len, unsigned ms,
             uint32_t *moved) {
    return xhci_bulk(d, ep_addr, phys, len, ms, moved);
}

bool usb_clear_halt(struct usb_device *d, uint8_t ep_addr) {
    bool ok = usb_control(d, USB_REQ_ENDPOINT, 1, 0, ep_addr, NULL, 0) >= 0;  // ENDPOINT_HALT
    return xhci_bulk_reset(d, ep_addr) && ok;
}

static const char *speed_name(uint8_t s) {
    switch (s) {
        case USB_SPEED_LOW:
            return "low";
        case USB_SPEED_FULL:
            return "full";
        case USB_SPEED_HIGH:
            return "high";
        case USB_SPEED_SUPER:
            return "super";
        default:
            return "unknown";
    }
}

void usb_where(const struct usb_device *d, char *buf, unsigned cap) {
    if (d->parent) {
        size_t n = ksnprintf(buf, cap, "port %u", d->root_port);
        for (unsigned i = 0; i < d->depth; i++) {
            n += ksnprintf(buf + n, cap - n, ".%u", d->route >> (4 * i) & 0xf);
        }
    } else {
        ksnprintf(buf, cap, "port %u", d->root_port);
    }
}

// Address, descriptors, a driver. NULL when the device did not get that far (reported).
static struct usb_device *enumerate(struct usb_portset *ps, unsigned port, uint8_t speed) {
    struct usb_device *d = NULL;
    for (unsigned i = 0; i < KUSB_MAX_DEVICES && !d; i++) {
        if (!devices[i].used) {
            d = &devices[i];
        }
    }
    if (!d) {
        kprintf("kernel: usb: more than %u devices; one ignored\n", KUSB_MAX_DEVICES);
        return NULL;
    }
    memset(d, 0, sizeof(*d));
    d->used = true;
    d->hc = ps->hc;
    d->speed = speed;
    d->port = (uint8_t)port;
    struct usb_device *hub = ps->hub;
    if (hub) {
        d->parent = hub;
        d->root_port = hub->root_port;
        d->depth = hub->depth + 1;
        d->route = hub->route | (uint32_t)(port > 15 ? 15 : port) << (4 * hub->depth);
        if (hub->speed == USB_SPEED_HIGH && speed != USB_SPEED_HIGH) {
            d->tt_slot = hub->slot;
            d->tt_port = (uint8_t)port;
        } else {
            d->tt_slot = hub->tt_slot;
            d->tt_port = hub->tt_port;
        }
    } else {
        d->root_port = (uint8_t)port;
    }
    d->ep0_mps = speed == USB_SPEED_SUPER ? 512 : speed == USB_SPEED_HIGH ? 64 : 8;
    char at[40];
    usb_where(d, at, sizeof(at));

    uint8_t desc[18];
    const char *fail = NULL;
    if (!xhci_enable_slot(d)) {
        fail = "no device slot";
    } else if (!xhci_address_device(d)) {
        fail = "it took no address";
    } else if (usb_control(d, USB_REQ_IN, 6, USB_DESC_DEVICE << 8, 0, desc, 8) < 8) {
        fail = "no device descriptor";
    } else {
        uint16_t mps = speed == USB_SPEED_SUPER ? (uint16_t)(1u << (desc[7] & 0xf)) : desc[7];
        if (mps != d->ep0_mps && mps >= 8 && !xhci_set_ep0_mps(d, mps)) {
            fail = "its packet size was not accepted";
        } else if (usb_control(d, USB_REQ_IN, 6, USB_DESC_DEVICE << 8, 0, desc, 18) < 18) {
            fail = "no full device descriptor";
        }
    }
    uint8_t head[9];
    if (!fail && usb_control(d, USB_REQ_IN, 6, USB_DESC_CONFIG << 8, 0, head, 9) < 9) {
        fail = "no configuration descriptor";
    }
    if (fail) {
        kprintf("kernel: usb: %s: %s speed device skipped: %s\n", at, speed_name(speed), fail);
        xhci_disable_slot(d);
        d->used = false;
        return NULL;
    }
    d->vendor = (uint16_t)(desc[8] | desc[9] << 8);
    d->product = (uint16_t)(desc[10] | desc[11] << 8);
    d->dev_class = desc[4];
    d->config_value = head[5];
    uint16_t total = (uint16_t)(head[2] | head[3] << 8);
    if (total > USB_CONFIG_BYTES) {
        total = USB_CONFIG_BYTES;
    }
    int got = usb_control(d, USB_REQ_IN, 6, USB_DESC_CONFIG << 8, 0, d->config, total);
    d->config_len = got > 0 ? (uint16_t)got : 0;

    const uint8_t *end = d->config + d->config_len;
    for (const uint8_t *p = d->config;
         d->config_len >= 9 && (p = usb_next_desc(p, end, USB_DESC_INTERFACE, false)) != NULL;) {
        if (p[3] != 0) {
            continue;  // alternate settings other than 0
        }
        for (unsigned i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
            if (drivers[i]->attach(d, p, end)) {
                d->driver = drivers[i];
                kprintf("kernel: usb: %s: %s (%04x:%04x, %s speed)\n", at, drivers[i]->name,
                        d->vendor, d->product, speed_name(speed));
                return d;
            }
        }
    }
    unsigned cls = d->dev_class;
    const uint8_t *intf = usb_next_desc(d->config, end, USB_DESC_INTERFACE, false);
    if (!cls && intf) {
        cls = intf[5];
    }
    kprintf("kernel: usb: %s: device %04x:%04x class 0x%02x, %s speed: no driver, left "
            "unconfigured\n",
            at, d->vendor, d->product, cls, speed_name(speed));
    return d;
}

void usb_detach(struct usb_device *d) {
    if (!d || !d->used) {
        return;
    }
    char at[40];
    usb_where(d, at, sizeof(at));
    if (d->driver) {
        d->driver->detach(d);  // a hub detaches what hangs on it first
    }
    kprintf("kernel: usb: %s: %s removed\n", at, d->driver ? d->driver->name : "device");
    xhci_disable_slot(d);
    d->used = false;
}

static void step(struct usb_portset *ps, unsigned i, uint64_t now) {
    struct usb_port *p = &ps->ports[i - 1];
    if (p->next && now < p->next) {
        busy = true;
        return;
    }
    p->attention = false;
    p->next = 0;
    struct usb_port_status st;
    if (!ps->ops->status(ps->owner, i, &st)) {
        return;
    }
    if (!st.connected || (st.changed && p->state >= PORT_ACTIVE)) {
        if (p->dev) {
            usb_detach(p->dev);
            p->dev = NULL;
        }
        p->state = PORT_EMPTY;
        if (!st.connected) {
            return;
        }
    }
    switch (p->state) {
        case PORT_EMPTY:
            p->state = PORT_DEBOUNCE;
            p->next = now + ms_to_tsc(KUSB_DEBOUNCE_MS);
            break;
        case PORT_DEBOUNCE:
            if (!ps->ops->reset_needed(ps->owner, i) && st.enabled) {
                p->state = PORT_RECOVER;
                p->next = now + ms_to_tsc(KUSB_RECOVERY_MS);
            } else {
                ps->ops->reset(ps->owner, i);
                p->state = PORT_RESET;
                p->dev = NULL;
                p->next = now + ms_to_tsc(STEP_MS);
                p->deadline = now + ms_to_tsc(KUSB_PORT_RESET_MS);
            }
            break;
        case PORT_RESET:
            if (st.enabled && !st.resetting) {
                p->state = PORT_RECOVER;
                p->next = now + ms_to_tsc(KUSB_RECOVERY_MS);
            } else if (now > p->deadline) {
                kprintf("kernel: usb: port %u: reset did not finish in %u ms; skipped\n", i,
                        KUSB_PORT_RESET_MS);
                p->state = PORT_FAILED;
            } else {
                p->next = now + ms_to_tsc(STEP_MS);
            }
            break;
        case PORT_RECOVER:
            p->dev = enumerate(ps, i, st.speed);
            p->state = p->dev ? PORT_ACTIVE : PORT_FAILED;
            break;
        default:
            break;
    }
    if (p->next) {
        busy = true;
    }
}

static void poll(void) {
    xhci_poll_all();
    uint64_t now = arch_rdtsc();
    busy = false;
    for (struct usb_portset *ps = portsets; ps; ps = ps->next) {
        for (unsigned i = 1; i <= ps->nports; i++) {
            struct usb_port *p = &ps->ports[i - 1];
            if (p->attention || p->next) {
                step(ps, i, now);
            }
        }
    }
    for (unsigned i = 0; i < KUSB_MAX_DEVICES; i++) {
        if (devices[i].used && devices[i].driver && devices[i].driver->tick) {
            devices[i].driver->tick(&devices[i]);
        }
    }
}

void usb_add_portset(struct usb_portset *ps) {
    ps->next = portsets;
    portsets = ps;
}

void usb_remove_portset(struct usb_portset *ps) {
    for (struct usb_portset **pp = &portsets; *pp; pp = &(*pp)->next) {
        if (*pp == ps) {
            *pp = ps->next;
            break;
        }
    }
    for (unsigned i = 0; i < ps->nports; i++) {
        if (ps->ports[i].dev) {
            usb_detach(ps->ports[i].dev);
            ps->ports[i].dev = NULL;
        }
    }
}

void usb_port_attention(struct usb_portset *ps, unsigned port) {
    if (port >= 1 && port <= ps->nports) {
        ps->ports[port - 1].attention = true;
        busy = true;
        if (ps->hold_until && ps->ports[port - 1].state == PORT_EMPTY) {
            ps->ports[port - 1].next = ps->hold_until;  // hub ports still powering up
        }
    }
}

unsigned usb_keyboards(void) {
    unsigned n = 0;
    for (unsigned i = 0; i < KUSB_MAX_DEVICES; i++) {
        n += devices[i].used && devices[i].driver == &usb_kbd_driver;
    }
    return n;
}

// Devices present at boot get their keyboards before the prompt: the port machines run
// here, interrupts still off, until nothing is in transition (or KUSB_SETTLE_MS).
void usb_init(void) {
    if (!xhci_init_all()) {
        return;
    }
    uint64_t end = arch_rdtsc() + ms_to_tsc(KUSB_SETTLE_MS);
    do {
        poll();
        uint64_t t = arch_rdtsc() + ms_to_tsc(1);
        while (arch_rdtsc() < t) {
            arch_pause();
        }
    } while (busy && arch_rdtsc() < end);
    kdev_add_poll(poll);
}
