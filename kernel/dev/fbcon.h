// SPDX-License-Identifier: MIT
// The screen console: a console end (kernel/console.c) on the GOP framebuffer the loader
// handed over. Text lives in RAM cells (fbcon_term.c); the screen is redrawn from them,
// only the cells that changed, at a bounded rate (fbcon.c says how).
#ifndef LOCIOS_KERNEL_DEV_FBCON_H
#define LOCIOS_KERNEL_DEV_FBCON_H

#include <stdbool.h>

#include "../../boot/bootinfo.h"

// Before paging: when the loader found a framebuffer, register the screen as a console
// end that keeps what is written until fbcon_start (so the first boot lines show too).
void fbcon_early(const struct bootinfo_framebuffer *fb);
// After paging_init (the framebuffer mapped write-combining) and with the frame
// allocator up: choose the font, take memory for the cells, clear the screen, show
// what fbcon_early kept. Prints one `kernel: screen ...` line either way.
void fbcon_start(void);
// kcon_screen_size (kapi.h) tells the text grid's size.

#endif
