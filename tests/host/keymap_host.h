// SPDX-License-Identifier: MIT
// The console side of kernel/dev/keymap.c on the host: the bytes it handed to
// kcon_input, taken out by the test.
#ifndef LOCIOS_TESTS_HOST_KEYMAP_HOST_H
#define LOCIOS_TESTS_HOST_KEYMAP_HOST_H

#include <stddef.h>
#include <stdint.h>

size_t keymap_host_take(uint8_t *buf, size_t cap);

#endif
