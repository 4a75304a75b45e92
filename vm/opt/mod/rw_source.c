// SPDX-License-Identifier: MIT
// Source texts for native twins: the lexer hands the port every source string it is
// given (MICROPY_PORT_LEXER_STR_HOOK, vm/patches/0008); the newest that define a function
// are kept for the optimiser, which compiles a hot function's twin from its def.
#include <string.h>

#include "py/runtime.h"

#include "rw_source.h"

// The newest RW_SRC_KEEP texts given to the lexer as strings (the REPL, exec, compile)
// that define a function, as (name, bytes) tuples; slot rw_src_next is the next to go.
#define RW_SRC_KEEP (8)
#define RW_SRC_MAX  (256 * 1024)
MP_REGISTER_ROOT_POINTER(mp_obj_t rw_src_ring[8]);
static size_t rw_src_next;
// Each kept text's serial number (1, 2, ...; 0 = none), and the serial of the text the
// lexer was last given, 0 when it was not kept: the emitter commits a text's native code
// while compiling it, right after its lexer was made, so rw_exec.c notes with each block
// the text it came from.
static uint32_t rw_src_serial[8];
static uint32_t rw_src_serials;
uint32_t rw_src_current;

static bool defines_a_function(const char *s, size_t len) {
    for (size_t i = 0; i + 4 <= len; i++) {
        if (s[i] == 'd' && s[i + 1] == 'e' && s[i + 2] == 'f' &&
            (s[i + 3] == ' ' || s[i + 3] == '\t')) {
            return true;
        }
    }
    return false;
}

void rw_src_keep(size_t name, const char *str, size_t len) {
    rw_src_current = 0;
    // "<twin>" is the optimiser compiling a twin: keeping that would push out the
    // sources it came from.
    if (strcmp(qstr_str(name), "<twin>") == 0 || len > RW_SRC_MAX ||
        !defines_a_function(str, len)) {
        return;
    }
#if LOCIOS_BUDGET_HOOKS
    // Code compiled inside a budgeted call (a Locus's step) is never optimised: its
    // allocation budget must not pay for a copy.
    if (budget_armed) {
        return;
    }
#endif
    // Keeping a copy is optional: a full heap (or an allocation budget) must fail the
    // copy, never the compile that asked for it.
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t item[2] = { MP_OBJ_NEW_QSTR(name), mp_obj_new_bytes((const byte *)str, len) };
        MP_STATE_VM(rw_src_ring)[rw_src_next] = mp_obj_new_tuple(2, item);
        rw_src_serial[rw_src_next] = rw_src_current = ++rw_src_serials;
        rw_src_next = (rw_src_next + 1) % RW_SRC_KEEP;
        nlr_pop();
    }
}

mp_obj_t rw_src_list(void) {
    mp_obj_t out = mp_obj_new_list(0, NULL);
    for (size_t i = 1; i <= RW_SRC_KEEP; i++) {
        mp_obj_t t = MP_STATE_VM(rw_src_ring)[(rw_src_next + RW_SRC_KEEP - i) % RW_SRC_KEEP];
        if (t != MP_OBJ_NULL) {
            mp_obj_list_append(out, t);
        }
    }
    return out;
}

mp_obj_t rw_src_by_serial(uint32_t serial) {
    for (size_t i = 0; i < RW_SRC_KEEP && serial != 0; i++) {
        if (rw_src_serial[i] == serial && MP_STATE_VM(rw_src_ring)[i] != MP_OBJ_NULL) {
            return MP_STATE_VM(rw_src_ring)[i];
        }
    }
    return mp_const_none;
}

// Soft reset: the kept texts were on the old heap.
void rw_src_deinit(void) {
    memset(MP_STATE_VM(rw_src_ring), 0, sizeof(MP_STATE_VM(rw_src_ring)));
    memset(rw_src_serial, 0, sizeof(rw_src_serial));
    rw_src_next = 0;
    rw_src_current = 0;
}
