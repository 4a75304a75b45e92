// SPDX-License-Identifier: MIT
// The USB 2.0 hub class driver (USB 2.0 chapter 11): the hub descriptor, its ports
// powered, their changes from the status-change endpoint, and the port requests the
// core's port state machine needs (status, reset). USB 3 hubs are served through the
// USB 2 hub they also present.
#include "../arch.h"
#include "../kernel.h"
#include "usb.h"
#include "xhci.h"

#define MAX_HUBS 8
#define HUB_REQ  (USB_REQ_CLASS | USB_REQ_OTHER)  // to a port

#define FEAT_PORT_RESET   4
#define FEAT_PORT_POWER   8
#define FEAT_C_CONNECTION 16  // + change bit index: C_ENABLE, C_SUSPEND, C_OVER_CURRENT, C_RESET

struct hub {
    bool used;
    struct usb_device *dev;
    struct usb_portset ps;
    struct usb_port ports[KUSB_MAX_HUB_PORTS];
};

static struct hub hubs[MAX_HUBS];

static bool hub_status(void *owner, unsigned port, struct usb_port_status *st) {
    struct hub *h = owner;
    uint8_t s[4];
    if (usb_control(h->dev, USB_REQ_IN | HUB_REQ, 0, 0, (uint16_t)port, s, 4) < 4) {
        return false;
    }
    uint16_t status = (uint16_t)(s[0] | s[1] << 8), change = (uint16_t)(s[2] | s[3] << 8);
    for (unsigned bit = 0; bit < 5; bit++) {
        if (change & (1u << bit)) {
            usb_control(h->dev, HUB_REQ, 1, (uint16_t)(FEAT_C_CONNECTION + bit), (uint16_t)port,
                        NULL, 0);
        }
    }
    *st = (struct usb_port_status){
        .connected = status & 1,
        .enabled = status & 2,
        .resetting = status & 0x10,
        .changed = change & 1,
        .speed = (status & 0x200)   ? USB_SPEED_LOW
                 : (status & 0x400) ? USB_SPEED_HIGH
                                    : USB_SPEED_FULL,
    };
    return true;
}

static bool hub_reset(void *owner, unsigned port) {
    struct hub *h = owner;
    return usb_control(h->dev, HUB_REQ, 3, FEAT_PORT_RESET, (uint16_t)port, NULL, 0) >= 0;
}

static bool hub_reset_needed(void *owner, unsigned port) {
    (void)owner, (void)port;
    return true;
}

static const struct usb_hub_ops hub_ops = { hub_status, hub_reset, hub_reset_needed };

// The status-change endpoint: bit i set = port i changed.
static void hub_changed(struct usb_device *d, const uint8_t *data, unsigned len) {
    struct hub *h = d->priv;
    for (unsigned i = 1; i <= h->ps.nports && i / 8 < len; i++) {
        if (data[i / 8] & (1u << (i % 8))) {
            usb_port_attention(&h->ps, i);
        }
    }
}

static bool hub_attach(struct usb_device *d, const uint8_t *intf, const uint8_t *end) {
    if (intf[5] != 9) {
        return false;
    }
    if (d->speed == USB_SPEED_SUPER || d->depth >= 5) {
        kprintf("kernel: usb: port %u: %s hub not served\n", d->root_port,
                d->depth >= 5 ? "a sixth-tier" : "the USB 3 side of a");
        return false;
    }
    struct hub *h = NULL;
    for (unsigned i = 0; i < MAX_HUBS && !h; i++) {
        if (!hubs[i].used) {
            h = &hubs[i];
        }
    }
    const uint8_t *ep = usb_next_desc(intf, end, USB_DESC_ENDPOINT, true);
    uint8_t desc[9];
    if (!h || !ep ||
        usb_control(d, USB_REQ_IN | USB_REQ_CLASS, 6, USB_DESC_HUB << 8, 0, desc, 9) < 7) {
        return false;
    }
    unsigned nports = desc[2] > KUSB_MAX_HUB_PORTS ? KUSB_MAX_HUB_PORTS : desc[2];
    unsigned ttt = (desc[3] >> 5) & 3, power_ms = desc[5] * 2u;
    memset(h, 0, sizeof(*h));
    h->dev = d;
    d->priv = h;
    if (!xhci_set_hub(d, (uint8_t)nports, (uint8_t)ttt) || !usb_set_configuration(d) ||
        !usb_open_interrupt_in(d, ep, hub_changed)) {
        return false;
    }
    for (unsigned i = 1; i <= nports; i++) {
        usb_control(d, HUB_REQ, 3, FEAT_PORT_POWER, (uint16_t)i, NULL, 0);
    }
    h->used = true;
    h->ps = (struct usb_portset){
        .owner = h,
        .ops = &hub_ops,
        .hc = d->hc,
        .hub = d,
        .nports = nports,
        .ports = h->ports,
        .hold_until = arch_rdtsc() + ktime_tsc_hz() / 1000 * (power_ms + 20),
    };
    usb_add_portset(&h->ps);
    for (unsigned i = 1; i <= nports; i++) {
        usb_port_attention(&h->ps, i);
    }
    return true;
}

static void hub_detach(struct usb_device *d) {
    struct hub *h = d->priv;
    usb_remove_portset(&h->ps);
    h->used = false;
}

const struct usb_driver usb_hub_driver = { "hub", hub_attach, hub_detach, NULL };
