// SPDX-License-Identifier: MIT
// What the port's own C files share with each other (not part of any public interface).
#ifndef LOCIOS_PORT_PORT_H
#define LOCIOS_PORT_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// TSC cycles from the kernel's first instruction to the first REPL prompt.
uint64_t port_boot_cycles(void);
// Size of the GC heap taken from the kernel at boot.
size_t port_heap_bytes(void);

// boot_options.c: heap sizing from the defaults in mpconfigport.h and the boot options
// (heap_percent, heap_floor_mib, heap_ceiling_mib); reports words it ignores.
void port_heap_params(unsigned *percent, size_t *floor, size_t *ceiling);
// at_prompt=poweroff: power off when the REPL first reaches its prompt (shows a machine
// with no console reached it: under QEMU the emulator then exits with status 0).
bool port_poweroff_at_prompt(void);

// memfault.c: machine.mem8/16/32/64 (fault-checked) and native-code faults as OSError.
struct _port_mem_obj_t;
extern const struct _port_mem_obj_t port_mem8_obj, port_mem16_obj, port_mem32_obj, port_mem64_obj;
void port_memfault_init(void);

// mphalport.c: console output capture for kernel.capture (the optimiser's equivalence
// gate). stop() returns whether capture was on, and the buffer, its length and the
// bytes that did not fit.
#define LOCIOS_CAPTURE_BYTES (4096)
void port_capture_start(void);
bool port_capture_stop(const char **buf, size_t *len, size_t *lost);

// test_modules.c (the test image only; a weak empty one otherwise): puts the test-only
// modules into sys.modules after each mp_init.
void port_test_modules_init(void);

#endif
