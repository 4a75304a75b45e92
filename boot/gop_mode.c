// SPDX-License-Identifier: MIT
// Which graphics mode the loader sets (gop_mode.h says the order of preference).
#include "gop_mode.h"

static uint64_t area(const struct gop_mode_info *m) {
    return (uint64_t)m->width * m->height;
}

static int find(const struct gop_mode_info *modes, unsigned n, uint32_t w, uint32_t h) {
    for (unsigned i = 0; i < n; i++) {
        if (modes[i].linear && modes[i].width == w && modes[i].height == h) {
            return (int)i;
        }
    }
    return -1;
}

struct gop_choice gop_mode_choose(const struct gop_mode_info *modes, unsigned n, unsigned current,
                                  uint32_t want_w, uint32_t want_h, uint32_t native_w,
                                  uint32_t native_h, uint64_t max_pixels) {
    struct gop_choice c = { -1, GOP_NONE, 0 };
    if (want_w && want_h) {
        c.index = find(modes, n, want_w, want_h);
        if (c.index >= 0) {
            c.why = GOP_ASKED;
            return c;
        }
        c.asked_missing = 1;
    }
    uint32_t tw = 0, th = 0;
    if (native_w && native_h) {
        tw = native_w;
        th = native_h;
        c.index = find(modes, n, tw, th);
        if (c.index >= 0 && (uint64_t)tw * th <= max_pixels) {
            c.why = GOP_NATIVE;
            return c;
        }
    } else if (current < n && modes[current].linear) {
        tw = modes[current].width;
        th = modes[current].height;
        if (area(&modes[current]) <= max_pixels) {
            c.index = (int)current;
            c.why = GOP_CURRENT;
            return c;
        }
    }
    int best = -1, smallest = -1;
    for (unsigned i = 0; i < n; i++) {
        const struct gop_mode_info *m = &modes[i];
        if (!m->linear) {
            continue;
        }
        if (smallest < 0 || area(m) < area(&modes[smallest])) {
            smallest = (int)i;
        }
        int fits = area(m) <= max_pixels && (!tw || (m->width <= tw && m->height <= th));
        if (fits && (best < 0 || area(m) > area(&modes[best]))) {
            best = (int)i;
        }
    }
    c.index = best >= 0 ? best : smallest;
    c.why = best >= 0 ? GOP_FITS : smallest >= 0 ? GOP_SMALLEST : GOP_NONE;
    return c;
}

int gop_edid_preferred(const uint8_t *edid, size_t len, uint32_t *w, uint32_t *h) {
    static const uint8_t header[8] = { 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00 };
    if (!edid || len < 128) {
        return 0;
    }
    uint8_t sum = 0;
    for (unsigned i = 0; i < 128; i++) {
        sum = (uint8_t)(sum + edid[i]);
        if (i < 8 && edid[i] != header[i]) {
            return 0;
        }
    }
    const uint8_t *d = edid + 54;  // first detailed timing descriptor
    if (sum != 0 || (d[0] == 0 && d[1] == 0)) {
        return 0;  // bad checksum, or a display descriptor rather than a timing
    }
    *w = d[2] | (uint32_t)(d[4] & 0xf0) << 4;
    *h = d[5] | (uint32_t)(d[7] & 0xf0) << 4;
    return *w && *h;
}

static int number(const char *s, size_t len, uint32_t *out) {
    if (len == 0 || len > 5) {
        return 0;
    }
    uint32_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    *out = v;
    return v >= 1 && v <= 65535;
}

int gop_parse_size(const char *s, size_t len, uint32_t *w, uint32_t *h) {
    for (size_t i = 0; i < len; i++) {
        if (s[i] == 'x') {
            return number(s, i, w) && number(s + i + 1, len - i - 1, h);
        }
    }
    return 0;
}
