// SPDX-License-Identifier: MIT
// Host-side qstr resolver for the verifier (a table of strings, like a .mpy's).
#ifndef LOCIOS_VM_VERIFIER_HOST_VRF_TABLE_H
#define LOCIOS_VM_VERIFIER_HOST_VRF_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct vrf_table {
    const char *const *strs;
    const size_t *lens;
    uint32_t n;
    const uint8_t *obj_kinds;  // VRF_OBJ_* per constant (VRF_OBJ_TUPLE + n for tuples)
    uint32_t n_obj;
} vrf_table_t;

const char *vrf_table_qstr(void *ctx, uint32_t q, size_t *len);
int vrf_table_obj_kind(void *ctx, uint32_t i);

#endif
