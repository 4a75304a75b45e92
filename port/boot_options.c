// SPDX-License-Identifier: MIT
// The boot options the port understands (heap sizing; at_prompt=poweroff, a test aid for
// machines whose console nobody can read), read from the words the loader copied out of
// \LOCIOS\OPTIONS.TXT into bootinfo.options. Words starting with loader_ are the
// loader's. Unknown words and values out of range are reported on the console and
// ignored, never fatal.
#include <stdio.h>
#include <string.h>

#include "kapi.h"
#include "mpconfigport.h"
#include "port.h"

struct option_spec {
    const char *key;
    unsigned long min, max;
};

static const struct option_spec specs[] = {
    { "heap_percent", 1, 95 },
    { "heap_floor_mib", 1, 1u << 20 },
    { "heap_ceiling_mib", 1, 1u << 20 },
};
#define NSPECS (sizeof specs / sizeof specs[0])

// Parses a decimal number that fills [s, end); false on anything else or overflow.
static bool parse_ulong(const char *s, const char *end, unsigned long *out) {
    unsigned long v = 0;
    if (s == end) {
        return false;
    }
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (~0ul - 9) / 10) {
            return false;
        }
        v = v * 10 + (unsigned long)(*s - '0');
    }
    *out = v;
    return true;
}

// Visits every word "key=value"; calls back with the spec index (or -1 if unknown).
static void each_word(void (*fn)(int spec, const char *w, size_t wlen, const char *eq, void *ctx),
                      void *ctx) {
    const char *p = kboot_info()->options;
    while (*p) {
        const char *w = p;
        while (*p && *p != ' ') {
            p++;
        }
        size_t wlen = (size_t)(p - w);
        const char *eq = memchr(w, '=', wlen);
        int spec = -1;
        for (size_t i = 0; eq && i < NSPECS; i++) {
            if (strlen(specs[i].key) == (size_t)(eq - w) && !memcmp(w, specs[i].key, eq - w)) {
                spec = (int)i;
            }
        }
        fn(spec, w, wlen, eq, ctx);
        while (*p == ' ') {
            p++;
        }
    }
}

struct lookup {
    int want;
    unsigned long value;
    bool found;
};

static void find_value(int spec, const char *w, size_t wlen, const char *eq, void *ctx) {
    struct lookup *l = ctx;
    unsigned long v;
    if (spec == l->want && parse_ulong(eq + 1, w + wlen, &v) && v >= specs[spec].min &&
        v <= specs[spec].max) {
        l->value = v;  // the last valid word wins, as on most command lines
        l->found = true;
    }
}

static bool word_is(const char *w, size_t wlen, const char *word) {
    return strlen(word) == wlen && !memcmp(w, word, wlen);
}

static void report(int spec, const char *w, size_t wlen, const char *eq, void *ctx) {
    (void)ctx;
    unsigned long v;
    if (wlen >= 7 && !memcmp(w, "loader_", 7)) {
        return;  // read by BOOTX64.EFI (boot/PROTOCOL.md)
    }
    if (word_is(w, wlen, "at_prompt=poweroff")) {
        return;
    }
    if (spec < 0) {
        printf("LociOS: boot option '%.*s' is not known; ignored (known: heap_percent, "
               "heap_floor_mib, heap_ceiling_mib, at_prompt=poweroff)\n",
               (int)wlen, w);
    } else if (!parse_ulong(eq + 1, w + wlen, &v) || v < specs[spec].min || v > specs[spec].max) {
        printf("LociOS: boot option '%.*s' ignored: %s takes a whole number from %lu to %lu\n",
               (int)wlen, w, specs[spec].key, specs[spec].min, specs[spec].max);
    }
}

static unsigned long option_or(int spec, unsigned long fallback) {
    struct lookup l = { spec, 0, false };
    each_word(find_value, &l);
    return l.found ? l.value : fallback;
}

void port_heap_params(unsigned *percent, size_t *floor, size_t *ceiling) {
    each_word(report, NULL);
    *percent = (unsigned)option_or(0, LOCIOS_HEAP_PERCENT);
    *floor = (size_t)option_or(1, LOCIOS_HEAP_FLOOR >> 20) << 20;
    *ceiling = (size_t)option_or(2, LOCIOS_HEAP_CEILING >> 20) << 20;
    if (*ceiling < *floor) {
        printf("LociOS: heap ceiling %lu MiB is below the floor %lu MiB; using the floor\n",
               (unsigned long)(*ceiling >> 20), (unsigned long)(*floor >> 20));
        *ceiling = *floor;
    }
}

static void find_poweroff(int spec, const char *w, size_t wlen, const char *eq, void *ctx) {
    (void)spec;
    (void)eq;
    if (word_is(w, wlen, "at_prompt=poweroff")) {
        *(bool *)ctx = true;
    }
}

bool port_poweroff_at_prompt(void) {
    bool yes = false;
    each_word(find_poweroff, &yes);
    return yes;
}
