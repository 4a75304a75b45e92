// SPDX-License-Identifier: MIT
// Checks and normalises the boot options text (see options.h and PROTOCOL.md).
#include "options.h"

static int is_space(uint8_t c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int options_normalise(const uint8_t *text, size_t len, char *out, size_t *bad_at) {
    out[0] = '\0';
    *bad_at = 0;
    if (len > BOOTINFO_OPTIONS_MAX - 1) {
        *bad_at = BOOTINFO_OPTIONS_MAX - 1;
        return OPTIONS_ERR_TOO_LONG;
    }
    size_t n = 0;
    int pending_space = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = text[i];
        if (is_space(c)) {
            pending_space = n > 0;
            continue;
        }
        if (c < 0x21 || c > 0x7e) {
            out[0] = '\0';
            *bad_at = i;
            return OPTIONS_ERR_BYTE;
        }
        if (pending_space) {
            out[n++] = ' ';
        }
        pending_space = 0;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return OPTIONS_OK;
}

const char *options_value(const char *opts, const char *key, size_t *len) {
    size_t klen = 0;
    while (key[klen]) {
        klen++;
    }
    const char *found = NULL;
    const char *w = opts;
    while (*w) {
        const char *end = w;
        while (*end && *end != ' ') {
            end++;
        }
        size_t i = 0;
        while (i < klen && w + i < end && w[i] == key[i]) {
            i++;
        }
        if (i == klen && w + klen < end && w[klen] == '=') {
            found = w + klen + 1;
            *len = (size_t)(end - found);
        }
        w = *end ? end + 1 : end;
    }
    return found;
}
