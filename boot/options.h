// SPDX-License-Identifier: MIT
// Boot options: the optional text file \LOCIOS\OPTIONS.TXT, checked and normalised into
// bootinfo.options. Pure C (no UEFI), so the host tests can build it.
#ifndef LOCIOS_BOOT_OPTIONS_H
#define LOCIOS_BOOT_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "bootinfo.h"

enum options_code {
    OPTIONS_OK = 0,
    OPTIONS_ERR_TOO_LONG,  // more than BOOTINFO_OPTIONS_MAX - 1 bytes
    OPTIONS_ERR_BYTE,      // a byte that is neither printable ASCII nor white space
};

// Copies `text` into out[BOOTINFO_OPTIONS_MAX]: runs of white space (space, tab, CR, LF)
// become one space, leading and trailing space is dropped, and the result ends in NUL.
// On an error, out is the empty string and *bad_at is the offending offset.
int options_normalise(const uint8_t *text, size_t len, char *out, size_t *bad_at);

// The value of the word `key=value` in normalised options (the last one wins), as a
// pointer into `opts` and its length; NULL when the key is absent.
const char *options_value(const char *opts, const char *key, size_t *len);

#endif
