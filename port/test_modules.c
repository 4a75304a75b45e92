// SPDX-License-Identifier: MIT
// The test image's extra modules: `_rwops` (bytes of live bytecode, vm/rewrite/opsmod)
// and `_fieldbench` (the field's loops timed from C, loci/mod). Linked only into the test
// kernel (the top Makefile's test-image); the image `make run` boots and a USB stick gets
// has neither. They are put into sys.modules at each VM start, where `import` finds them
// first, instead of being registered as built-ins (the built-in table is shared by both
// builds).
#include "py/runtime.h"

#include "port.h"

extern const mp_obj_module_t rwops_user_cmodule;
extern const mp_obj_module_t mp_module_fieldbench;

static void add(qstr name, const mp_obj_module_t *module) {
    mp_map_lookup(&MP_STATE_VM(mp_loaded_modules_dict).map, MP_OBJ_NEW_QSTR(name),
                  MP_MAP_LOOKUP_ADD_IF_NOT_FOUND)
        ->value = MP_OBJ_FROM_PTR(module);
}

void port_test_modules_init(void) {
    add(MP_QSTR__rwops, &rwops_user_cmodule);
    add(MP_QSTR__fieldbench, &mp_module_fieldbench);
}
