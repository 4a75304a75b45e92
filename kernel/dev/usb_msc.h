// SPDX-License-Identifier: MIT
// USB mass storage, Bulk-Only Transport with SCSI commands (interface class 0x08,
// subclass 0x06, protocol 0x50): the class driver (usb_msc_driver in usb.h) registers
// LUN 0 of each such device as a block device "usbN" (blk.h), writable. Framing and
// command blocks: usb_msc_bot.h. Each request runs with interrupts off (the USB core
// and the timer tick share the controller's rings) and every wait in it is bounded.
#ifndef LOCIOS_KERNEL_DEV_USB_MSC_H
#define LOCIOS_KERNEL_DEV_USB_MSC_H

#define USB_MSC_MAX 4  // USB disks served at once (names usb0..usb3, kept across re-plugs)

#endif
