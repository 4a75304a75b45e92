// SPDX-License-Identifier: MIT
// `_rwops`: test-only access to the rewritten opcodes without the rewriter: read and
// patch single bytes of a heap function's opcodes, read the guard-miss table, undo map.
#include <string.h>

#include "py/bc.h"
#include "py/gc.h"
#include "py/objfun.h"
#include "py/runtime.h"

#include "rw_opcodes.h"
#include "rw_stats.h"

// The opcode area [*lo, *hi) of a heap bytecode function (hi: end of its GC block, so a
// few padding bytes may follow the last opcode). Frozen code is read-only: ValueError.
static void opcode_area(mp_obj_t fn, byte **lo, byte **hi) {
    if (!mp_obj_is_type(fn, &mp_type_fun_bc) && !mp_obj_is_type(fn, &mp_type_gen_wrap)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a bytecode function"));
    }
    mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    size_t n = gc_nbytes(f->bytecode);
    if (n == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("code not in the GC heap"));
    }
    const byte *ip = f->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    *lo = (byte *)ip + n_info + n_cell;
    *hi = (byte *)f->bytecode + n;
    if (*lo >= *hi) {
        mp_raise_ValueError(MP_ERROR_TEXT("bad prelude"));
    }
}

// _rwops.code(fn) -> bytes of the opcode area (offset 0 = first opcode).
static mp_obj_t rwops_code(mp_obj_t fn) {
    byte *lo, *hi;
    opcode_area(fn, &lo, &hi);
    return mp_obj_new_bytes(lo, hi - lo);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rwops_code_obj, rwops_code);

// _rwops.poke(fn, offset, byte) -> the byte that was there.
static mp_obj_t rwops_poke(mp_obj_t fn, mp_obj_t off_in, mp_obj_t val_in) {
    byte *lo, *hi;
    opcode_area(fn, &lo, &hi);
    mp_int_t off = mp_obj_get_int(off_in);
    mp_int_t val = mp_obj_get_int(val_in);
    if (off < 0 || off >= hi - lo || val < 0 || val > 255) {
        mp_raise_ValueError(MP_ERROR_TEXT("offset or byte out of range"));
    }
    byte old = lo[off];
    lo[off] = (byte)val;
    return MP_OBJ_NEW_SMALL_INT(old);
}
static MP_DEFINE_CONST_FUN_OBJ_3(rwops_poke_obj, rwops_poke);

// _rwops.misses(fn) -> guard misses recorded at heads inside fn's opcode area.
static mp_obj_t rwops_misses(mp_obj_t fn) {
    byte *lo, *hi;
    opcode_area(fn, &lo, &hi);
    return mp_obj_new_int_from_uint(rw_misses_between(lo, hi));
}
static MP_DEFINE_CONST_FUN_OBJ_1(rwops_misses_obj, rwops_misses);

static mp_obj_t rwops_reset(void) {
    rw_misses_reset();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(rwops_reset_obj, rwops_reset);

// _rwops.undo(code_bytes, offset) -> locios_bc_undo (the original byte, or -1).
static mp_obj_t rwops_undo(mp_obj_t code_in, mp_obj_t off_in) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(code_in, &b, MP_BUFFER_READ);
    mp_int_t off = mp_obj_get_int(off_in);
    if (off < 0 || (size_t)off >= b.len) {
        mp_raise_ValueError(MP_ERROR_TEXT("offset out of range"));
    }
    return MP_OBJ_NEW_SMALL_INT(locios_bc_undo(b.buf, b.len, off));
}
static MP_DEFINE_CONST_FUN_OBJ_2(rwops_undo_obj, rwops_undo);

static const mp_rom_map_elem_t rwops_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__rwops) },
    { MP_ROM_QSTR(MP_QSTR_code), MP_ROM_PTR(&rwops_code_obj) },
    { MP_ROM_QSTR(MP_QSTR_poke), MP_ROM_PTR(&rwops_poke_obj) },
    { MP_ROM_QSTR(MP_QSTR_misses), MP_ROM_PTR(&rwops_misses_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&rwops_reset_obj) },
    { MP_ROM_QSTR(MP_QSTR_undo), MP_ROM_PTR(&rwops_undo_obj) },
};
static MP_DEFINE_CONST_DICT(rwops_globals, rwops_globals_table);

const mp_obj_module_t rwops_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&rwops_globals,
};

// Not registered as a built-in: only the test image has this module, put into
// sys.modules at each VM start by port/test_modules.c (port/Makefile, LOCIOS_TEST_SRC).
