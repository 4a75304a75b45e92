// SPDX-License-Identifier: MIT
// One key translation for every keyboard: a key is a HID usage (page 7, USB HID Usage
// Tables §10) going down or up; the i8042's scancodes are turned into usages first.
// Pressed keys become the bytes the REPL expects (UTF-8 text, CR for Enter, DEL for
// Backspace, VT100 sequences for arrows, Home/End, Delete, Ctrl-letters as 0x01-0x1a)
// and go to the console mux, from interrupt or tick context. Unknown keys are ignored.
#ifndef LOCIOS_KERNEL_DEV_KEYMAP_H
#define LOCIOS_KERNEL_DEV_KEYMAP_H

#include <stdbool.h>
#include <stdint.h>

// HID modifier usages 0xe0-0xe7, as the bits of a boot-protocol report's first byte.
#define KEY_LCTRL  0xe0
#define KEY_RALT   0xe6
#define KEY_MOD_LO 0xe0
#define KEY_MOD_HI 0xe7

// One keyboard's state: held modifiers (bit i = usage 0xe0 + i) and Caps Lock.
struct keymap_state {
    uint8_t mods;
    bool caps;
};

// A key went down (or repeats: down again without up) or up. Interrupts off.
void keymap_key(struct keymap_state *st, uint8_t usage, bool down);

// Set 1 (the i8042's translated codes) and set 2 scancodes to usages: the code without
// its release marker, `extended` after an 0xe0 prefix. 0 when the code means nothing.
uint8_t keymap_set1_usage(uint8_t code, bool extended);
uint8_t keymap_set2_usage(uint8_t code, bool extended);

// Layouts: "us" (the default) and "de". false when there is no layout by that name.
bool keymap_select(const char *name);
const char *keymap_layout(void);
const char *keymap_layout_names(void);  // "us de"

// Counters for kernel.keyboards(): bytes keyboards produced, the TSC when the last one
// went to the console, and the TSC of the first console output after it (the echo).
struct keymap_stats {
    uint64_t bytes;
    uint64_t last_key_tsc;
    uint64_t echo_tsc;
};
void keymap_get_stats(struct keymap_stats *out);
void keymap_init(void);  // registers the echo probe among the console's output ends

#endif
