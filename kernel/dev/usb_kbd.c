// SPDX-License-Identifier: MIT
// USB keyboards in the HID boot protocol (HID 1.11 appendix B): 8-byte reports of the
// modifier bits and up to six keys held, compared with the previous report to find
// presses and releases, which keymap.c turns into bytes. The keyboard repeats nothing
// itself (SET_IDLE 0), so held keys repeat here, from the tick.
#include "../arch.h"
#include "../kernel.h"
#include "keymap.h"
#include "usb.h"

#define MAX_KBDS 4

struct kbd {
    bool used;
    uint8_t mods;
    uint8_t held[6];
    struct keymap_state keys;
    uint8_t repeat;  // usage repeating, or 0
    uint64_t repeat_at;
};

static struct kbd kbds[MAX_KBDS];

static bool has(const uint8_t *keys, uint8_t u) {
    for (unsigned i = 0; i < 6; i++) {
        if (keys[i] == u) {
            return true;
        }
    }
    return false;
}

static uint64_t after_ms(unsigned ms) {
    return arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
}

static void report(struct usb_device *d, const uint8_t *data, unsigned len) {
    struct kbd *k = d->priv;
    if (len < 3 || data[2] == 1) {
        return;  // too short, or ErrorRollOver (too many keys): nothing reliable in it
    }
    uint8_t now[6] = { 0 };
    for (unsigned i = 0; i < 6 && 2 + i < len; i++) {
        now[i] = data[2 + i];
    }
    uint8_t changed = data[0] ^ k->mods;
    for (unsigned b = 0; b < 8; b++) {
        if (changed & (1u << b)) {
            keymap_key(&k->keys, (uint8_t)(KEY_MOD_LO + b), data[0] & (1u << b));
        }
    }
    k->mods = data[0];
    for (unsigned i = 0; i < 6; i++) {
        uint8_t u = k->held[i];
        if (u && !has(now, u)) {
            keymap_key(&k->keys, u, false);
            if (k->repeat == u) {
                k->repeat = 0;
            }
        }
    }
    for (unsigned i = 0; i < 6; i++) {
        uint8_t u = now[i];
        if (u > 3 && !has(k->held, u)) {
            keymap_key(&k->keys, u, true);
            k->repeat = u == 0x39 ? 0 : u;  // Caps Lock toggles once
            k->repeat_at = after_ms(KKBD_REPEAT_DELAY_MS);
        }
    }
    memcpy(k->held, now, sizeof(now));
}

static void kbd_tick(struct usb_device *d) {
    struct kbd *k = d->priv;
    if (k->repeat && arch_rdtsc() >= k->repeat_at) {
        keymap_key(&k->keys, k->repeat, true);
        k->repeat_at = after_ms(KKBD_REPEAT_MS);
    }
}

static bool kbd_attach(struct usb_device *d, const uint8_t *intf, const uint8_t *end) {
    if (intf[5] != 3 || intf[6] != 1 || intf[7] != 1) {
        return false;  // HID, boot interface, keyboard
    }
    const uint8_t *ep = usb_next_desc(intf, end, USB_DESC_ENDPOINT, true);
    while (ep && !((ep[2] & 0x80) && (ep[3] & 3) == 3)) {
        ep = usb_next_desc(ep, end, USB_DESC_ENDPOINT, true);
    }
    struct kbd *k = NULL;
    for (unsigned i = 0; i < MAX_KBDS && !k; i++) {
        if (!kbds[i].used) {
            k = &kbds[i];
        }
    }
    if (!ep || !k) {
        return false;
    }
    memset(k, 0, sizeof(*k));
    d->priv = k;
    uint16_t iface = intf[2];
    if (!usb_set_configuration(d) ||
        usb_control(d, USB_REQ_CLASS | USB_REQ_INTERFACE, 0x0b, 0, iface, NULL, 0) < 0) {
        return false;  // SET_PROTOCOL(boot) is required of a boot keyboard
    }
    usb_control(d, USB_REQ_CLASS | USB_REQ_INTERFACE, 0x0a, 0, iface, NULL, 0);  // SET_IDLE 0
    if (!usb_open_interrupt_in(d, ep, report)) {
        return false;
    }
    k->used = true;
    return true;
}

static void kbd_detach(struct usb_device *d) {
    struct kbd *k = d->priv;
    k->used = false;
}

const struct usb_driver usb_kbd_driver = { "keyboard", kbd_attach, kbd_detach, kbd_tick };
