// SPDX-License-Identifier: MIT
// The xHCI host controller (eXtensible Host Controller Interface 1.2): taken from the
// firmware, reset, its rings set up; device slots, the default pipe and interrupt-IN
// endpoints for the USB core (usb.c). No interrupts: the event ring is read from the
// timer tick, and by the core's bounded waits.
#ifndef LOCIOS_KERNEL_DEV_XHCI_H
#define LOCIOS_KERNEL_DEV_XHCI_H

#include <stdbool.h>
#include <stdint.h>

#include "usb.h"

// Every xHCI function on PCI: started, its root ports registered with the core.
// Returns the controllers started.
unsigned xhci_init_all(void);
void xhci_poll_all(void);  // the event rings: transfers done, port changes

// Device slots. Each call waits at most KUSB_CMD_MS (or KUSB_XFER_MS) and returns
// false (or -1) when the controller did not answer or refused.
bool xhci_enable_slot(struct usb_device *d);     // sets d->slot
bool xhci_address_device(struct usb_device *d);  // SET_ADDRESS with the slot context
bool xhci_set_ep0_mps(struct usb_device *d, uint16_t mps);
void xhci_disable_slot(struct usb_device *d);
// A hub's slot fields (Hub, Number of Ports, TT think time), before its endpoints.
bool xhci_set_hub(struct usb_device *d, uint8_t nports, uint8_t ttt);
int xhci_control(struct usb_device *d, const uint8_t setup[8], void *data);
bool xhci_open_interrupt_in(struct usb_device *d, const uint8_t *ep, usb_intr_done done);
// Bulk endpoints (usb.h has the contract): one opened from its descriptor (and its
// SuperSpeed companion, or NULL); a polled transfer of one TD; the host side reset.
bool xhci_open_bulk(struct usb_device *d, const uint8_t *ep, const uint8_t *companion);
int xhci_bulk(struct usb_device *d, uint8_t ep_addr, uint64_t phys, uint32_t len, unsigned ms,
              uint32_t *moved);
bool xhci_bulk_reset(struct usb_device *d, uint8_t ep_addr);

#endif
