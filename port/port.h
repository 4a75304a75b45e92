// SPDX-License-Identifier: MIT
// What the port's own C files share with each other (not part of any public interface).
#ifndef LOCIOS_PORT_PORT_H
#define LOCIOS_PORT_PORT_H

#include <stddef.h>
#include <stdint.h>

// TSC cycles from the kernel's first instruction to the first REPL prompt.
uint64_t port_boot_cycles(void);
// Size of the GC heap taken from the kernel at boot.
size_t port_heap_bytes(void);

#endif
