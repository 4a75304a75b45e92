// SPDX-License-Identifier: MIT
// Recording the positional arguments of real calls to one function (rw_record.c), for
// the optimiser's equivalence gate (vm/python/opt.py).
#ifndef LOCI_RW_RECORD_H
#define LOCI_RW_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"

// Start recording the next `calls` calls of the function whose fun_data is bytecode
// (replacing any recording in progress). ValueError for *args, **kwargs or keyword-only
// parameters. Allocates.
void rw_record_start(const uint8_t *bytecode, size_t calls);
void rw_record_stop(void);
// [(arg, ...), ...] recorded so far for bytecode; [] if it is not the one recorded.
mp_obj_t rw_record_calls(const uint8_t *bytecode);

#endif
