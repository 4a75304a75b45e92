// SPDX-License-Identifier: MIT
// Keys to bytes for every keyboard (keymap.h): scancode sets 1 and 2 to HID usages, the
// layouts as one string per shift level over usages 0x04-0x38 and 0x64, the REPL's
// control bytes and VT100 sequences for the keys that are not text.
#include "keymap.h"

#include "../arch.h"
#include "../kernel.h"
#include "i8042.h"
#include "usb.h"

// Usage 0x04 + i for i < 53, then 0x64 (the ISO key left of Z). A space in an AltGr
// string means the key has no AltGr character.
#define LAYOUT_KEYS 54

struct layout {
    const char *name;
    const uint16_t *plain, *shift, *altgr;
};

static const uint16_t us_plain[] = u"abcdefghijklmnopqrstuvwxyz1234567890     -=[]\\\\;'`,./\\";
static const uint16_t us_shift[] = u"ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()     _+{}||:\"~<>?|";
static const uint16_t de_plain[] = u"abcdefghijklmnopqrstuvwxzy1234567890     ß´ü+##öä^,.-<";
static const uint16_t de_shift[] = u"ABCDEFGHIJKLMNOPQRSTUVWXZY!\"§$%&/()=     ?`Ü*''ÖÄ°;:_>";
static const uint16_t de_altgr[] = u"    €       µ   @          ²³   {[]}     \\  ~        |";
_Static_assert(sizeof(us_plain) == 2 * (LAYOUT_KEYS + 1) && sizeof(us_shift) == sizeof(us_plain) &&
                   sizeof(de_plain) == sizeof(us_plain) && sizeof(de_shift) == sizeof(us_plain) &&
                   sizeof(de_altgr) == sizeof(us_plain),
               "a layout string covers usages 0x04-0x38 and 0x64");

static const struct layout layouts[] = {
    { "us", us_plain, us_shift, NULL },
    { "de", de_plain, de_shift, de_altgr },
};
static const struct layout *layout = &layouts[0];

static struct keymap_stats stats;
static bool echo_pending;

// Set 1 scancodes 0x00-0x58 (XT order) to usages; 0 = nothing.
static const uint8_t set1[0x59] = {
    0,    0x29, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2d, 0x2e, 0x2a,
    0x2b, 0x14, 0x1a, 0x08, 0x15, 0x17, 0x1c, 0x18, 0x0c, 0x12, 0x13, 0x2f, 0x30, 0x28, 0xe0,
    0x04, 0x16, 0x07, 0x09, 0x0a, 0x0b, 0x0d, 0x0e, 0x0f, 0x33, 0x34, 0x35, 0xe1, 0x31, 0x1d,
    0x1b, 0x06, 0x19, 0x05, 0x11, 0x10, 0x36, 0x37, 0x38, 0xe5, 0x55, 0xe2, 0x2c, 0x39, 0x3a,
    0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x41, 0x42, 0x43, 0x53, 0x47, 0x5f, 0x60, 0x61, 0x56,
    0x5c, 0x5d, 0x5e, 0x57, 0x59, 0x5a, 0x5b, 0x62, 0x63, 0,    0,    0x64, 0x44, 0x45,
};

// Set 2 scancodes 0x00-0x83 to usages.
static const uint8_t set2[0x84] = {
    [0x01] = 0x42, [0x03] = 0x3e, [0x04] = 0x3c, [0x05] = 0x3a, [0x06] = 0x3b, [0x07] = 0x45,
    [0x09] = 0x43, [0x0a] = 0x41, [0x0b] = 0x3f, [0x0c] = 0x3d, [0x0d] = 0x2b, [0x0e] = 0x35,
    [0x11] = 0xe2, [0x12] = 0xe1, [0x14] = 0xe0, [0x15] = 0x14, [0x16] = 0x1e, [0x1a] = 0x1d,
    [0x1b] = 0x16, [0x1c] = 0x04, [0x1d] = 0x1a, [0x1e] = 0x1f, [0x21] = 0x06, [0x22] = 0x1b,
    [0x23] = 0x07, [0x24] = 0x08, [0x25] = 0x21, [0x26] = 0x20, [0x29] = 0x2c, [0x2a] = 0x19,
    [0x2b] = 0x09, [0x2c] = 0x17, [0x2d] = 0x15, [0x2e] = 0x22, [0x31] = 0x11, [0x32] = 0x05,
    [0x33] = 0x0b, [0x34] = 0x0a, [0x35] = 0x1c, [0x36] = 0x23, [0x3a] = 0x10, [0x3b] = 0x0d,
    [0x3c] = 0x18, [0x3d] = 0x24, [0x3e] = 0x25, [0x41] = 0x36, [0x42] = 0x0e, [0x43] = 0x0c,
    [0x44] = 0x12, [0x45] = 0x27, [0x46] = 0x26, [0x49] = 0x37, [0x4a] = 0x38, [0x4b] = 0x0f,
    [0x4c] = 0x33, [0x4d] = 0x13, [0x4e] = 0x2d, [0x52] = 0x34, [0x54] = 0x2f, [0x55] = 0x2e,
    [0x58] = 0x39, [0x59] = 0xe5, [0x5a] = 0x28, [0x5b] = 0x30, [0x5d] = 0x31, [0x61] = 0x64,
    [0x66] = 0x2a, [0x69] = 0x59, [0x6b] = 0x5c, [0x6c] = 0x5f, [0x70] = 0x62, [0x71] = 0x63,
    [0x72] = 0x5a, [0x73] = 0x5d, [0x74] = 0x5e, [0x75] = 0x60, [0x76] = 0x29, [0x77] = 0x53,
    [0x78] = 0x44, [0x79] = 0x57, [0x7a] = 0x5b, [0x7b] = 0x56, [0x7c] = 0x55, [0x7d] = 0x61,
    [0x7e] = 0x47, [0x83] = 0x40,
};

// After 0xe0: (code, usage) pairs, set 1 then set 2.
static const uint8_t set1_e0[][2] = {
    { 0x1c, 0x58 }, { 0x1d, 0xe4 }, { 0x35, 0x54 }, { 0x37, 0x46 }, { 0x38, 0xe6 }, { 0x47, 0x4a },
    { 0x48, 0x52 }, { 0x49, 0x4b }, { 0x4b, 0x50 }, { 0x4d, 0x4f }, { 0x4f, 0x4d }, { 0x50, 0x51 },
    { 0x51, 0x4e }, { 0x52, 0x49 }, { 0x53, 0x4c }, { 0x5b, 0xe3 }, { 0x5c, 0xe7 }, { 0x5d, 0x65 },
};
static const uint8_t set2_e0[][2] = {
    { 0x11, 0xe6 }, { 0x14, 0xe4 }, { 0x1f, 0xe3 }, { 0x27, 0xe7 }, { 0x2f, 0x65 }, { 0x4a, 0x54 },
    { 0x5a, 0x58 }, { 0x69, 0x4d }, { 0x6b, 0x50 }, { 0x6c, 0x4a }, { 0x70, 0x49 }, { 0x71, 0x4c },
    { 0x72, 0x51 }, { 0x74, 0x4f }, { 0x75, 0x52 }, { 0x7a, 0x4e }, { 0x7c, 0x46 }, { 0x7d, 0x4b },
};

static uint8_t find_pair(const uint8_t (*t)[2], unsigned n, uint8_t code) {
    for (unsigned i = 0; i < n; i++) {
        if (t[i][0] == code) {
            return t[i][1];
        }
    }
    return 0;
}

uint8_t keymap_set1_usage(uint8_t code, bool extended) {
    if (extended) {
        return find_pair(set1_e0, sizeof(set1_e0) / sizeof(set1_e0[0]), code);
    }
    return code < sizeof(set1) ? set1[code] : 0;
}

uint8_t keymap_set2_usage(uint8_t code, bool extended) {
    if (extended) {
        return find_pair(set2_e0, sizeof(set2_e0) / sizeof(set2_e0[0]), code);
    }
    return code < sizeof(set2) ? set2[code] : 0;
}

static void put(uint8_t b) {
    kcon_input(b);
    stats.bytes++;
    stats.last_key_tsc = arch_rdtsc();
    echo_pending = true;
}

static void put_str(const char *s) {
    while (*s) {
        put((uint8_t)*s++);
    }
}

static void put_utf8(uint16_t c) {
    if (c < 0x80) {
        put((uint8_t)c);
    } else if (c < 0x800) {
        put((uint8_t)(0xc0 | c >> 6));
        put((uint8_t)(0x80 | (c & 0x3f)));
    } else {
        put((uint8_t)(0xe0 | c >> 12));
        put((uint8_t)(0x80 | (c >> 6 & 0x3f)));
        put((uint8_t)(0x80 | (c & 0x3f)));
    }
}

static bool is_letter(uint16_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 0xe0 && c <= 0xfe && c != 0xf7);
}

// Keys that are not text: VT100/xterm sequences MicroPython's readline understands.
static const struct {
    uint8_t usage;
    const char *seq;
} specials[] = {
    { 0x28, "\r" },      { 0x29, "\x1b" },    { 0x2a, "\x7f" },    { 0x2b, "\t" },
    { 0x2c, " " },       { 0x49, "\x1b[2~" }, { 0x4a, "\x1b[H" },  { 0x4b, "\x1b[5~" },
    { 0x4c, "\x1b[3~" }, { 0x4d, "\x1b[F" },  { 0x4e, "\x1b[6~" }, { 0x4f, "\x1b[C" },
    { 0x50, "\x1b[D" },  { 0x51, "\x1b[B" },  { 0x52, "\x1b[A" },  { 0x54, "/" },
    { 0x55, "*" },       { 0x56, "-" },       { 0x57, "+" },       { 0x58, "\r" },
    { 0x62, "0" },       { 0x63, "." },
};

static const char *special(uint8_t usage) {
    for (unsigned i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
        if (specials[i].usage == usage) {
            return specials[i].seq;
        }
    }
    return NULL;
}

void keymap_key(struct keymap_state *st, uint8_t usage, bool down) {
    if (usage >= KEY_MOD_LO && usage <= KEY_MOD_HI) {
        uint8_t bit = (uint8_t)(1u << (usage - KEY_MOD_LO));
        st->mods = down ? (st->mods | bit) : (st->mods & ~bit);
        return;
    }
    if (!down) {
        return;
    }
    if (usage == 0x39) {
        st->caps = !st->caps;
        return;
    }
    const char *seq = special(usage);
    if (seq) {
        put_str(seq);
        return;
    }
    if (usage >= 0x59 && usage <= 0x61) {  // keypad 1-9, as with Num Lock on
        put((uint8_t)('1' + usage - 0x59));
        return;
    }
    int i = usage >= 0x04 && usage <= 0x38 ? usage - 0x04 : usage == 0x64 ? 53 : -1;
    if (i < 0 || (usage >= 0x28 && usage <= 0x2c)) {
        return;  // function keys, locks, unknown usages: nothing
    }
    bool shift = st->mods & 0x22;  // either Shift
    bool ctrl = st->mods & 0x11;
    bool altgr = st->mods & 0x40;
    uint16_t plain = layout->plain[i];
    if (altgr) {
        if (layout->altgr && layout->altgr[i] != ' ') {
            put_utf8(layout->altgr[i]);
        }
        return;
    }
    if (ctrl) {
        if (plain >= 'a' && plain <= 'z') {
            put((uint8_t)(plain & 0x1f));
        }
        return;
    }
    if (st->caps && is_letter(plain)) {
        shift = !shift;
    }
    put_utf8(shift ? layout->shift[i] : plain);
}

bool keymap_select(const char *name) {
    for (unsigned i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
        const char *a = layouts[i].name, *b = name;
        while (*a && *a == *b) {
            a++, b++;
        }
        if (!*a && !*b) {
            layout = &layouts[i];
            return true;
        }
    }
    return false;
}

const char *keymap_layout(void) {
    return layout->name;
}

const char *keymap_layout_names(void) {
    return "us de";
}

void keymap_get_stats(struct keymap_stats *out) {
    uint64_t f = arch_save_flags_cli();
    *out = stats;
    arch_restore_flags(f);
}

// An output end that writes nothing: it notes when the console first wrote after a key
// (the REPL's echo), for the keypress-to-echo latency.
static void probe_write(const char *s, size_t len) {
    (void)s;
    if (echo_pending && len) {
        echo_pending = false;
        stats.echo_tsc = arch_rdtsc();
    }
}

static const struct kcon_output echo_probe = { "keyboard echo probe", probe_write, NULL };

void keymap_init(void) {
    kcon_add_output(&echo_probe);
}

void kkbd_get(struct kkbd_info *out) {
    struct keymap_stats st;
    keymap_get_stats(&st);
    *out = (struct kkbd_info){
        .layout = layout->name,
        .layouts = keymap_layout_names(),
        .ps2 = i8042_state(),
        .usb = usb_keyboards(),
        .bytes = st.bytes,
        .last_key_tsc = st.last_key_tsc,
        .echo_tsc = st.echo_tsc,
    };
}

bool kkbd_set_layout(const char *name) {
    return keymap_select(name);
}
