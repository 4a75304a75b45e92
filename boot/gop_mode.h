// SPDX-License-Identifier: MIT
// The choice of graphics mode for the screen console, and the two small parsers it needs
// (an EDID's preferred resolution, a `WIDTHxHEIGHT` boot option). Pure C (no UEFI), so
// the host tests can build it; sysinfo.c asks the firmware and sets the mode.
#ifndef LOCIOS_BOOT_GOP_MODE_H
#define LOCIOS_BOOT_GOP_MODE_H

#include <stddef.h>
#include <stdint.h>

// Above this many pixels a full redraw costs more than the console is worth (a 4K
// panel's 3840 x 2160 is the most); a larger panel gets the largest mode below it.
#define GOP_MAX_PIXELS (3840ULL * 2160ULL)

struct gop_mode_info {
    uint32_t width, height;
    int linear;  // a 32-bit RGBX or BGRX framebuffer the kernel can draw on
};

enum gop_why {
    GOP_NONE = 0,  // no linear mode at all: index is -1
    GOP_ASKED,     // the boot option named it
    GOP_NATIVE,    // the display's preferred (EDID) resolution
    GOP_CURRENT,   // the firmware's mode (most set the panel's native one)
    GOP_FITS,      // the largest mode within the target and the pixel limit
    GOP_SMALLEST,  // nothing fits: the smallest linear mode
};

struct gop_choice {
    int index;  // into the modes, -1 when none is linear
    enum gop_why why;
    int asked_missing;  // a size was asked for that no linear mode has
};

// want_w/want_h: the boot option's size (0 for none); native_w/native_h: the EDID's
// preferred size (0 when unknown); current: the firmware's mode (may be >= n when
// unknown). Prefers, in order: the asked size; the native size; the current mode; the
// largest mode that fits inside the target (native, else current) with at most
// max_pixels pixels; the smallest linear mode.
struct gop_choice gop_mode_choose(const struct gop_mode_info *modes, unsigned n, unsigned current,
                                  uint32_t want_w, uint32_t want_h, uint32_t native_w,
                                  uint32_t native_h, uint64_t max_pixels);

// The preferred resolution of a 128-byte (or longer) EDID block: its first detailed
// timing descriptor. 0 when the block is not a valid EDID (header, checksum) or has no
// such descriptor.
int gop_edid_preferred(const uint8_t *edid, size_t len, uint32_t *w, uint32_t *h);

// "1280x800" (len bytes, not NUL-terminated) into *w, *h; 0 when it is not two decimal
// numbers of 1 to 5 digits, each 1..65535, joined by 'x'.
int gop_parse_size(const char *s, size_t len, uint32_t *w, uint32_t *h);

#endif
