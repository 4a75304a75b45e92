// SPDX-License-Identifier: MIT
// What kernel/dev/keymap.c calls outside itself, for the host test: the console mux
// (recording bytes) and the keyboards' states.
#include "keymap_host.h"

#include <string.h>

#include "kernel.h"

static uint8_t got[4096];
static size_t n;

void kcon_input(uint8_t b) {
    if (n < sizeof(got)) {
        got[n++] = b;
    }
}

void kcon_add_output(const struct kcon_output *out) {
    (void)out;
}

const char *i8042_state(void) {
    return "host";
}

unsigned usb_keyboards(void) {
    return 0;
}

size_t keymap_host_take(uint8_t *buf, size_t cap) {
    size_t k = n < cap ? n : cap;
    memcpy(buf, got, k);
    n = 0;
    return k;
}
