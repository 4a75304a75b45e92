// SPDX-License-Identifier: MIT
// LociOS has no filesystem yet: imports resolve only to built-in and frozen modules,
// and open()/execfile() report that no file exists.
#include "py/builtin.h"
#include "py/lexer.h"
#include "py/mperrno.h"
#include "py/runtime.h"

// Called for paths outside ".frozen/" (frozen modules are found by py/builtinimport.c).
mp_import_stat_t mp_import_stat(const char *path) {
    (void)path;
    return MP_IMPORT_STAT_NO_EXIST;
}

mp_lexer_t *mp_lexer_new_from_file(qstr filename) {
    (void)filename;
    mp_raise_OSError(MP_ENOENT);
}

mp_obj_t mp_builtin_open(size_t n_args, const mp_obj_t *args, mp_map_t *kwargs) {
    (void)n_args;
    (void)args;
    (void)kwargs;
    mp_raise_OSError(MP_ENOENT);
}
MP_DEFINE_CONST_FUN_OBJ_KW(mp_builtin_open_obj, 1, mp_builtin_open);
