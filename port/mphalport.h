// SPDX-License-Identifier: MIT
// The port's hardware abstraction layer as MicroPython sees it: console, time, waiting
// for events and interrupt-char control, all on top of kernel/kapi.h.
#ifndef LOCIOS_PORT_MPHALPORT_H
#define LOCIOS_PORT_MPHALPORT_H

#include <stdint.h>

#include "kapi.h"
#include "shared/runtime/interrupt_char.h"

// Halt until the next interrupt (LAPIC tick or console byte); the scheduler runs
// pending callbacks before each wait (py/scheduler.c: mp_event_wait_*).
#define MICROPY_INTERNAL_WFE(TIMEOUT_MS) kcpu_wait_for_interrupt()

// ticks_cpu() is the raw TSC (time.ticks_cpu masks it to the ticks period).
#define mp_hal_ticks_cpu() ((mp_uint_t)ktime_tsc())

#endif
