// SPDX-License-Identifier: MIT
// The USB core: devices found on ports (the host controller's root ports, a hub's
// ports), enumerated (address, descriptors) and offered to the class drivers (hub,
// HID boot keyboard, mass storage). Everything runs in the timer tick or at boot,
// with interrupts off; every wait is bounded. Host controller: xhci.c.
#ifndef LOCIOS_KERNEL_DEV_USB_H
#define LOCIOS_KERNEL_DEV_USB_H

#include <stdbool.h>
#include <stdint.h>

#include "../config.h"

// Speeds as xHCI's default protocol speed IDs (PORTSC, slot context).
#define USB_SPEED_FULL  1
#define USB_SPEED_LOW   2
#define USB_SPEED_HIGH  3
#define USB_SPEED_SUPER 4

#define USB_DESC_DEVICE          1
#define USB_DESC_CONFIG          2
#define USB_DESC_INTERFACE       4
#define USB_DESC_ENDPOINT        5
#define USB_DESC_HUB             0x29
#define USB_DESC_SS_EP_COMPANION 0x30

// bmRequestType: direction, type, recipient (USB 2.0 §9.3).
#define USB_REQ_IN        0x80
#define USB_REQ_CLASS     0x20
#define USB_REQ_INTERFACE 0x01
#define USB_REQ_ENDPOINT  0x02
#define USB_REQ_OTHER     0x03

#define USB_CONFIG_BYTES 512  // configuration descriptors longer than this are cut

struct xhci;
struct usb_driver;

struct usb_device {
    bool used;
    struct xhci *hc;
    uint8_t slot;               // the controller's device slot
    uint8_t speed;              // USB_SPEED_*
    uint8_t root_port;          // the controller's port (1-based) the path starts at
    uint8_t depth;              // hubs between the root port and this device
    uint32_t route;             // xHCI route string: one hub port per 4 bits
    uint8_t tt_slot, tt_port;   // the high-speed hub whose transaction translator serves a
                                // low/full-speed device, or 0
    struct usb_device *parent;  // the hub it hangs on, or NULL on a root port
    uint8_t port;               // port of the parent (or root port)
    uint16_t ep0_mps;
    uint16_t vendor, product;
    uint8_t dev_class;
    uint8_t config_value;
    uint16_t config_len;
    uint8_t config[USB_CONFIG_BYTES];
    const struct usb_driver *driver;
    void *priv;  // the driver's state
};

// A class driver: offered each interface (alternate setting 0) of a device's first
// configuration, in order; attach returns true when it takes the device (it then opens
// its endpoints, sets the configuration and does its class requests).
struct usb_driver {
    const char *name;
    bool (*attach)(struct usb_device *d, const uint8_t *intf, const uint8_t *end);
    void (*detach)(struct usb_device *d);
    void (*tick)(struct usb_device *d);  // every tick while attached (may be NULL)
};

// One hub's ports (or the controller's root ports) and the state of each.
struct usb_port_status {
    bool connected, enabled, resetting, changed;
    uint8_t speed;
};
struct usb_hub_ops {
    // Reads the port and clears its change bits; false when it cannot be read.
    bool (*status)(void *owner, unsigned port, struct usb_port_status *st);
    bool (*reset)(void *owner, unsigned port);
    bool (*reset_needed)(void *owner, unsigned port);  // false: enabled by itself (USB 3)
};
struct usb_port {
    uint8_t state;
    bool attention;
    uint64_t next;      // TSC of the next step of a port in transition
    uint64_t deadline;  // TSC by which its reset must have ended
    struct usb_device *dev;
};
struct usb_portset {
    void *owner;
    const struct usb_hub_ops *ops;
    struct xhci *hc;
    struct usb_device *hub;  // NULL: the controller's root ports
    unsigned nports;
    struct usb_port *ports;  // ports[i - 1] is port i
    uint64_t hold_until;     // ports not stepped before (hub ports powering up)
    struct usb_portset *next;
};

void usb_init(void);  // every xHCI controller, the devices present at boot; then polled
unsigned usb_keyboards(void);
void usb_add_portset(struct usb_portset *ps);
void usb_remove_portset(struct usb_portset *ps);  // detaches the devices on it
void usb_port_attention(struct usb_portset *ps, unsigned port);
void usb_detach(struct usb_device *d);

// Requests on the default pipe. The result: bytes moved (>= 0), or -1.
int usb_control(struct usb_device *d, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
                void *data, uint16_t len);
bool usb_set_configuration(struct usb_device *d);

// An interrupt-IN endpoint (its descriptor in d->config): each completed transfer calls
// done(d, data, len) from the tick, and the next transfer is queued.
typedef void (*usb_intr_done)(struct usb_device *d, const uint8_t *data, unsigned len);
bool usb_open_interrupt_in(struct usb_device *d, const uint8_t *ep, usb_intr_done done);

// Bulk endpoints (their descriptors in d->config, `end` the end of it). A transfer moves
// `len` bytes (1 .. 1 MiB) to or from physically contiguous memory at `phys`, polled,
// waiting at most `ms`; *moved says how much moved (less than len: a short packet).
// An endpoint that stalled (or halted on an error) stays halted, and every transfer on
// it fails, until usb_clear_halt. After a timeout the transfer is abandoned and the
// host side of the endpoint reset; the device's side may need its class's reset.
#define USB_XFER_OK      0
#define USB_XFER_STALL   (-1)  // the endpoint halted: STALL, babble or transaction error
#define USB_XFER_TIMEOUT (-2)
#define USB_XFER_ERROR   (-3)  // refused, or the controller is gone
bool usb_open_bulk(struct usb_device *d, const uint8_t *ep, const uint8_t *end);
int usb_bulk(struct usb_device *d, uint8_t ep_addr, uint64_t phys, uint32_t len, unsigned ms,
             uint32_t *moved);
// CLEAR_FEATURE(ENDPOINT_HALT) to the device, and the host side reset with it (data
// toggle 0 at both ends). False when the device refused it.
bool usb_clear_halt(struct usb_device *d, uint8_t ep_addr);

// "port 5" or "port 5.1.3" (hub ports after the root port) into buf.
void usb_where(const struct usb_device *d, char *buf, unsigned cap);

// The next descriptor of `type` in [p, end) after p, or NULL (stops at the next
// interface when `in_interface`).
const uint8_t *usb_next_desc(const uint8_t *p, const uint8_t *end, uint8_t type, bool in_interface);

// The class drivers (usb_hub.c, usb_kbd.c, usb_msc.c).
extern const struct usb_driver usb_hub_driver;
extern const struct usb_driver usb_kbd_driver;
extern const struct usb_driver usb_msc_driver;

#endif
