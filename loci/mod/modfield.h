// SPDX-License-Identifier: MIT
// Private to the `_field` MicroPython module: the Field object and the argument and
// error helpers its C files share.
#ifndef LOCIOS_LOCI_MOD_MODFIELD_H
#define LOCIOS_LOCI_MOD_MODFIELD_H

#include "py/obj.h"
#include "py/runtime.h"

#include "field.h"

// The field_t lives inside the object; its arena is one GC block (m_new) whose head
// pointer is field_t.arena. MicroPython's GC never moves a block, and it scans this
// object conservatively, so that pointer keeps the arena alive exactly as long as the
// Field is reachable. The C core's interior pointers (cells, journal, ...) need nothing
// more: they die with the arena.
typedef struct {
    mp_obj_base_t base;
    field_t f;
} mp_field_t;

extern const mp_obj_type_t mp_type_Field;
extern const mp_obj_type_t mp_type_FieldError;

// Depositor id used when none is given: the person at the REPL.
#define MODFIELD_REPL_ID 1

// Raises the exception that fits `rc` (nonzero), its message starting with `op`.
NORETURN void modfield_raise(int rc, const char *op);
static inline void modfield_check(int rc, const char *op) {
    if (rc != FIELD_OK) {
        modfield_raise(rc, op);
    }
}

mp_field_t *modfield_self(mp_obj_t o);
// A flavour given by name (str) or index (int); raises KeyError if there is none.
uint32_t modfield_flavour(const field_t *f, mp_obj_t o);
// A cell of a grid flavour: (x, y) or a cell index; range-checked against the flavour.
void modfield_xy(const field_flavour_t *fl, mp_obj_t where, uint32_t *x, uint32_t *y);
// A key of a keyed flavour (str or bytes); its bytes stay owned by `o`.
const uint8_t *modfield_key(mp_obj_t o, size_t *len);
uint32_t modfield_u32(mp_obj_t o, const char *what);
uint32_t modfield_who(mp_obj_t o);
// Python-side view of a cell index or a key.
mp_obj_t modfield_where(const field_flavour_t *fl, uint32_t index, const uint8_t *key,
                        uint8_t keylen);

MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_deposit_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_sense_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_last_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_neighbourhood_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_gradient_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_region_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_total_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_topk_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_tick_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_check_invariant_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_tick_stats_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_grid_bytes_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_keyed_items_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_entropy_obj);

MP_DECLARE_CONST_FUN_OBJ_2(modfield_journal_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_depositors_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_watch_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_unwatch_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_watches_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_snapshot_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_digest_obj);
MP_DECLARE_CONST_FUN_OBJ_2(modfield_restore_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_replay_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_snap_info_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_snap_layout_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_diff_obj);
MP_DECLARE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_journal_bytes_obj);
MP_DECLARE_CONST_FUN_OBJ_1(modfield_journal_info_obj);
MP_DECLARE_CONST_FUN_OBJ_3(modfield_replay_bytes_obj);

#endif
