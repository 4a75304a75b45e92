// SPDX-License-Identifier: MIT
// Host-side qstr resolver for the verifier: qstr operands index a plain table of
// strings, as in a .mpy file's qstr table. Used by the host tests through cffi.
#include "vrf_table.h"

const char *vrf_table_qstr(void *ctx, uint32_t q, size_t *len) {
    const vrf_table_t *t = ctx;
    if (t == NULL || q >= t->n) {
        return NULL;
    }
    *len = t->lens[q];
    return t->strs[q];
}

int vrf_table_obj_kind(void *ctx, uint32_t i) {
    const vrf_table_t *t = ctx;
    if (t == NULL || t->obj_kinds == NULL || i >= t->n_obj) {
        return 0;
    }
    return t->obj_kinds[i];
}
