// SPDX-License-Identifier: MIT
// The PS/2 keyboard behind the i8042 controller (ports 0x60/0x64), where laptops keep
// their built-in keyboard. Probed with bounded waits: no controller, or one that does
// not answer, is reported once and skipped.
#ifndef LOCIOS_KERNEL_DEV_I8042_H
#define LOCIOS_KERNEL_DEV_I8042_H

#include <stdbool.h>

// Probe, self-test, configure, reset the keyboard, route IRQ 1 (and poll from the tick
// as well, for machines where the route does not work). kmain calls it once, after
// apic_init and before interrupts are on.
void i8042_init(void);
bool i8042_present(void);
const char *i8042_state(void);  // "keyboard (set 1)", "no controller", ...

#endif
