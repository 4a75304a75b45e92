// SPDX-License-Identifier: MIT
// `_field` journal export: the journal since a sequence number as bytes (FORMAT.md,
// "Journal export"), the header of such bytes, and replay of a snapshot plus them.
#include "modfield.h"

// journal_bytes([seq[, digest]]) -> bytes: the records from seq (default 0, or the oldest
// the ring still holds) to the newest. `digest`, the field's current content digest if
// the caller has it (a snapshot just taken), saves hashing the field again.
static mp_obj_t journal_bytes(size_t n_args, const mp_obj_t *args) {
    field_t *f = &modfield_self(args[0])->f;
    mp_int_t seq = n_args > 1 ? mp_obj_get_int(args[1]) : 0;
    if (seq < 0 || (uint64_t)seq > f->journal_next) {
        mp_raise_msg_varg(&mp_type_IndexError, MP_ERROR_TEXT("journal_bytes: seq %d outside 0..%u"),
                          (int)seq, (unsigned)f->journal_next);
    }
    const uint8_t *digest = NULL;
    if (n_args > 2 && args[2] != mp_const_none) {
        mp_buffer_info_t d;
        mp_get_buffer_raise(args[2], &d, MP_BUFFER_READ);
        if (d.len != FIELD_DIGEST_SIZE) {
            mp_raise_ValueError(MP_ERROR_TEXT("journal_bytes: a digest is 32 bytes"));
        }
        digest = d.buf;
    }
    size_t size = field_journal_export_size(f, (uint64_t)seq), len = 0;
    vstr_t v;
    vstr_init_len(&v, size);
    int rc = field_journal_export(f, (uint64_t)seq, digest, v.buf, size, &len);
    if (rc != FIELD_OK) {
        vstr_clear(&v);
        modfield_raise(rc, "journal_bytes");
    }
    v.len = len;
    return mp_obj_new_bytes_from_vstr(&v);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_journal_bytes_obj, 1, 3, journal_bytes);

// journal_info(bytes) -> (first_seq, count, lost, end_tick, digest); validates them.
static mp_obj_t journal_info(mp_obj_t jrn) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(jrn, &b, MP_BUFFER_READ);
    field_journal_info_t ji;
    modfield_check(field_journal_check(b.buf, b.len, &ji), "journal_info");
    mp_obj_t t[5] = { mp_obj_new_int_from_uint(ji.first_seq), mp_obj_new_int_from_uint(ji.count),
                      mp_obj_new_int_from_uint(ji.lost), mp_obj_new_int_from_uint(ji.end_tick),
                      mp_obj_new_bytes(ji.digest, FIELD_DIGEST_SIZE) };
    return mp_obj_new_tuple(5, t);
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_journal_info_obj, journal_info);

// dst.replay_bytes(snap, journal): restore snap, re-apply the export's records after it,
// and check the digest the export recorded.
static mp_obj_t replay_bytes(mp_obj_t self_in, mp_obj_t snap, mp_obj_t jrn) {
    mp_buffer_info_t s, j;
    mp_get_buffer_raise(snap, &s, MP_BUFFER_READ);
    mp_get_buffer_raise(jrn, &j, MP_BUFFER_READ);
    modfield_check(field_replay_journal(&modfield_self(self_in)->f, s.buf, s.len, j.buf, j.len),
                   "replay_bytes");
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_replay_bytes_obj, replay_bytes);
