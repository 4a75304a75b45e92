// SPDX-License-Identifier: MIT
// `_fieldbench`: the field's deposit and sense loops driven from C, timed with the TSC,
// so `make bench-field` (tools/bench/fieldbench.py) can set them beside the same calls made
// from Python. A module of its own so that the `_field` binding stays benchmark-free.
#include "py/mphal.h"

#include "modfield.h"

// deposit_sense(field, flavour, n) -> (cycles for n deposits, cycles for n senses).
// Cells follow a 32-bit LCG over the grid, the same sequence for both loops, so the
// senses read the cells the deposits wrote (after the caller's tick, if any).
static mp_obj_t deposit_sense(mp_obj_t field_in, mp_obj_t fl_in, mp_obj_t n_in) {
    field_t *f = &modfield_self(field_in)->f;
    uint32_t fl = modfield_flavour(f, fl_in);
    if (f->fl[fl].kind != FIELD_GRID) {
        mp_raise_TypeError(MP_ERROR_TEXT("deposit_sense needs a grid flavour"));
    }
    uint32_t n = modfield_u32(n_in, "n");
    uint32_t cells = f->fl[fl].w * f->fl[fl].h, w = f->fl[fl].w;
    uint32_t s = 1;
    mp_uint_t t0 = mp_hal_ticks_cpu();
    for (uint32_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        modfield_check(field_deposit_cell(f, fl, (s >> 8) % cells, 1.0f, MODFIELD_REPL_ID),
                       "deposit");
    }
    mp_uint_t t1 = mp_hal_ticks_cpu();
    s = 1;
    float acc = 0.0f, v;
    for (uint32_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        uint32_t c = (s >> 8) % cells;
        modfield_check(field_sense_xy(f, fl, c % w, c / w, &v), "sense");
        acc += v;
    }
    mp_uint_t t2 = mp_hal_ticks_cpu();
    // acc is returned so the compiler cannot drop the sense loop.
    mp_obj_t out[3] = { mp_obj_new_int_from_uint(t1 - t0), mp_obj_new_int_from_uint(t2 - t1),
                        mp_obj_new_float(acc) };
    return mp_obj_new_tuple(3, out);
}
static MP_DEFINE_CONST_FUN_OBJ_3(deposit_sense_obj, deposit_sense);

static const mp_rom_map_elem_t fieldbench_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__fieldbench) },
    { MP_ROM_QSTR(MP_QSTR_deposit_sense), MP_ROM_PTR(&deposit_sense_obj) },
};
static MP_DEFINE_CONST_DICT(fieldbench_globals, fieldbench_globals_table);

const mp_obj_module_t mp_module_fieldbench = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&fieldbench_globals,
};

// Not registered as a built-in: only the test image has this module, put into
// sys.modules at each VM start by port/test_modules.c (port/Makefile, LOCIOS_TEST_SRC).
