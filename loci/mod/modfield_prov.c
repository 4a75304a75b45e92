// SPDX-License-Identifier: MIT
// `_field` provenance and history: journal records, depositor totals, watchpoints,
// snapshots (bytes), digest, restore, replay, and the module-level snapshot readers.
#include <string.h>

#include "field_snap.h"
#include "modfield.h"

static const qstr rec_kind[] = { MP_QSTR_, MP_QSTR_deposit, MP_QSTR_tick, MP_QSTR_watch,
                                 MP_QSTR_restore };

// journal(seq) -> (seq, tick, kind, flavour, where, amount, depositor, flags).
// where: DEPOSIT -> (x, y) or key; WATCH -> watch id; otherwise None. A record the ring
// has overwritten raises FieldError ("journal lost ...").
static mp_obj_t journal(mp_obj_t self_in, mp_obj_t seq_in) {
    field_t *f = &modfield_self(self_in)->f;
    mp_int_t seq = mp_obj_get_int(seq_in);
    if (seq < 0) {
        mp_raise_msg(&mp_type_IndexError, MP_ERROR_TEXT("journal sequence numbers start at 0"));
    }
    field_record_t r;
    modfield_check(field_journal_get(f, (uint64_t)seq, &r), "journal");
    mp_obj_t where = mp_const_none;
    if (r.kind == FIELD_REC_DEPOSIT) {
        where = modfield_where(&f->fl[r.flavour], r.where, r.key, r.keylen);
    } else if (r.kind == FIELD_REC_WATCH) {
        where = MP_OBJ_NEW_SMALL_INT(r.where);
    }
    mp_obj_t t[8] = {
        mp_obj_new_int_from_uint(r.seq),
        mp_obj_new_int_from_uint(r.tick),
        MP_OBJ_NEW_QSTR(r.kind < MP_ARRAY_SIZE(rec_kind) ? rec_kind[r.kind] : MP_QSTR_),
        MP_OBJ_NEW_SMALL_INT(r.flavour),
        where,
        mp_obj_new_float(r.amount),
        mp_obj_new_int_from_uint(r.depositor),
        MP_OBJ_NEW_SMALL_INT(r.flags),
    };
    return mp_obj_new_tuple(8, t);
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_journal_obj, journal);

// depositors() -> [(id, flavour, count, total)] by id then flavour; id 0 is the overflow
// bucket of pairs the table had no room for (listed only if used).
static mp_obj_t depositors(mp_obj_t self_in) {
    field_t *f = &modfield_self(self_in)->f;
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t j = 0; j <= f->deps_count; j++) {
        const field_depositor_t *d = j < f->deps_count ? &f->deps[j] : &f->deps_overflow;
        if (j == f->deps_count && d->count == 0) {
            break;
        }
        mp_obj_t t[4] = { mp_obj_new_int_from_uint(j < f->deps_count ? d->id : 0),
                          MP_OBJ_NEW_SMALL_INT(d->flavour), mp_obj_new_int_from_uint(d->count),
                          mp_obj_new_float(d->total) };
        mp_obj_list_append(list, mp_obj_new_tuple(4, t));
    }
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_depositors_obj, depositors);

// watch(flavour, (x0, y0, w, h) or key, threshold) -> watch id.
static mp_obj_t watch(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    field_t *f = &modfield_self(args[0])->f;
    uint32_t i = modfield_flavour(f, args[1]);
    float thr = (float)mp_obj_get_float(args[3]);
    uint32_t id;
    if (f->fl[i].kind == FIELD_GRID) {
        size_t n;
        mp_obj_t *r;
        if (!mp_obj_is_type(args[2], &mp_type_tuple) && !mp_obj_is_type(args[2], &mp_type_list)) {
            mp_raise_TypeError(MP_ERROR_TEXT("a grid watch needs a region (x0, y0, w, h)"));
        }
        mp_obj_get_array(args[2], &n, &r);
        if (n != 4) {
            mp_raise_TypeError(MP_ERROR_TEXT("a grid watch needs a region (x0, y0, w, h)"));
        }
        modfield_check(field_watch_region(f, i, modfield_u32(r[0], "x0"), modfield_u32(r[1], "y0"),
                                          modfield_u32(r[2], "w"), modfield_u32(r[3], "h"), thr,
                                          &id),
                       "watch");
    } else {
        size_t n;
        const uint8_t *k = modfield_key(args[2], &n);
        modfield_check(field_watch_key(f, i, k, n, thr, &id), "watch");
    }
    return MP_OBJ_NEW_SMALL_INT(id);
}
MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(modfield_watch_obj, 4, 4, watch);

static mp_obj_t unwatch(mp_obj_t self_in, mp_obj_t id) {
    modfield_check(field_unwatch(&modfield_self(self_in)->f, modfield_u32(id, "watch id")),
                   "unwatch");
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_unwatch_obj, unwatch);

// watches() -> [(id, flavour, region or key, threshold, crossings, metric, above)].
static mp_obj_t watches(mp_obj_t self_in) {
    field_t *f = &modfield_self(self_in)->f;
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t j = 0; j < f->watch_cap; j++) {
        const field_watch_t *w = &f->watches[j];
        if (!w->used) {
            continue;
        }
        mp_obj_t target;
        if (f->fl[w->flavour].kind == FIELD_GRID) {
            mp_obj_t r[4] = { mp_obj_new_int_from_uint(w->x0), mp_obj_new_int_from_uint(w->y0),
                              mp_obj_new_int_from_uint(w->w), mp_obj_new_int_from_uint(w->h) };
            target = mp_obj_new_tuple(4, r);
        } else {
            target = mp_obj_new_bytes(w->key, w->keylen);
        }
        mp_obj_t t[7] = { MP_OBJ_NEW_SMALL_INT(j),
                          MP_OBJ_NEW_SMALL_INT(w->flavour),
                          target,
                          mp_obj_new_float(w->threshold),
                          mp_obj_new_int_from_uint(w->crossings),
                          mp_obj_new_float(w->metric),
                          mp_obj_new_bool(w->above) };
        mp_obj_list_append(list, mp_obj_new_tuple(7, t));
    }
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_watches_obj, watches);

// snapshot() -> bytes in the format of loci/field/FORMAT.md (immutable; its header
// carries the content digest).
static mp_obj_t snapshot(mp_obj_t self_in) {
    field_t *f = &modfield_self(self_in)->f;
    size_t size = field_snapshot_size(f), len = 0;
    vstr_t v;
    vstr_init_len(&v, size);
    int rc = field_snapshot(f, v.buf, size, &len);
    if (rc != FIELD_OK) {
        vstr_clear(&v);
        modfield_raise(rc, "snapshot");
    }
    v.len = len;
    return mp_obj_new_bytes_from_vstr(&v);
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_snapshot_obj, snapshot);

static mp_obj_t digest(mp_obj_t self_in) {
    uint8_t d[FIELD_DIGEST_SIZE];
    modfield_check(field_digest(&modfield_self(self_in)->f, d), "digest");
    return mp_obj_new_bytes(d, sizeof d);
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_digest_obj, digest);

// load(snap): restore() of the C core (field.Field.restore wraps it).
static mp_obj_t restore(mp_obj_t self_in, mp_obj_t snap) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(snap, &b, MP_BUFFER_READ);
    modfield_check(field_restore(&modfield_self(self_in)->f, b.buf, b.len), "restore");
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_2(modfield_restore_obj, restore);

// dst.replay_from(src, snap): restore snap into dst, then re-apply src's journal since it.
static mp_obj_t replay(mp_obj_t self_in, mp_obj_t src_in, mp_obj_t snap) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(snap, &b, MP_BUFFER_READ);
    modfield_check(
        field_replay(&modfield_self(self_in)->f, &modfield_self(src_in)->f, b.buf, b.len),
        "replay");
    return mp_const_none;
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_replay_obj, replay);

static void open_snap(mp_obj_t o, snap_t *s, const char *op) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(o, &b, MP_BUFFER_READ);
    modfield_check(snap_open(b.buf, b.len, s), op);
}

// snap_info(snap) -> (version, nflavours, tick, journal_seq, size, digest); validates it.
static mp_obj_t snap_info(mp_obj_t snap) {
    snap_t s;
    open_snap(snap, &s, "snap_info");
    mp_obj_t t[6] = {
        MP_OBJ_NEW_SMALL_INT(s.info.version),  MP_OBJ_NEW_SMALL_INT(s.info.nflavours),
        mp_obj_new_int_from_uint(s.info.tick), mp_obj_new_int_from_uint(s.info.journal_seq),
        mp_obj_new_int_from_uint(s.info.size), mp_obj_new_bytes(s.info.digest, FIELD_DIGEST_SIZE)
    };
    return mp_obj_new_tuple(6, t);
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_snap_info_obj, snap_info);

// snap_layout(snap) -> [(name, kind, w, h, E, G, cap, min)], so that a field able to hold
// the snapshot can be sized and built before restore().
static mp_obj_t snap_layout(mp_obj_t snap) {
    snap_t s;
    open_snap(snap, &s, "snap_layout");
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = 0; i < s.info.nflavours; i++) {
        const snap_flavour_t *fl = &s.fl[i];
        mp_obj_t t[8] = {
            mp_obj_new_str(fl->name, fl->name_len),
            MP_OBJ_NEW_QSTR(fl->kind == FIELD_GRID ? MP_QSTR_grid : MP_QSTR_keyed),
            mp_obj_new_int_from_uint(fl->w),
            mp_obj_new_int_from_uint(fl->h),
            mp_obj_new_float(fl->p.evaporation),
            mp_obj_new_float(fl->p.diffusion),
            mp_obj_new_float(fl->p.cap),
            mp_obj_new_float(fl->p.min),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(8, t));
    }
    return list;
}
MP_DEFINE_CONST_FUN_OBJ_1(modfield_snap_layout_obj, snap_layout);

// diff(a, b, cap) -> (total, [(flavour index, where, value in a, value in b)]); at most
// cap rows, total counts them all so a cut list is visible.
static mp_obj_t diff(mp_obj_t a_in, mp_obj_t b_in, mp_obj_t cap_in) {
    mp_buffer_info_t a, b;
    mp_get_buffer_raise(a_in, &a, MP_BUFFER_READ);
    mp_get_buffer_raise(b_in, &b, MP_BUFFER_READ);
    uint32_t cap = modfield_u32(cap_in, "cap");
    snap_t s;
    open_snap(a_in, &s, "diff");
    field_diff_t *rows = m_new(field_diff_t, cap ? cap : 1);
    uint32_t total = 0;
    int rc = field_diff(a.buf, a.len, b.buf, b.len, rows, cap, &total);
    if (rc != FIELD_OK) {
        m_del(field_diff_t, rows, cap ? cap : 1);
        modfield_raise(rc, "diff");
    }
    uint32_t n = total < cap ? total : cap;
    mp_obj_t list = mp_obj_new_list(n, NULL);
    mp_obj_list_t *l = MP_OBJ_TO_PTR(list);
    for (uint32_t j = 0; j < n; j++) {
        const field_diff_t *d = &rows[j];
        const snap_flavour_t *sf = &s.fl[d->flavour];
        mp_obj_t where;
        if (sf->kind == FIELD_GRID) {
            mp_obj_t xy[2] = { mp_obj_new_int_from_uint(d->index % sf->w),
                               mp_obj_new_int_from_uint(d->index / sf->w) };
            where = mp_obj_new_tuple(2, xy);
        } else {
            where = mp_obj_new_bytes(d->key, d->keylen);
        }
        mp_obj_t t[4] = { MP_OBJ_NEW_SMALL_INT(d->flavour), where, mp_obj_new_float(d->a),
                          mp_obj_new_float(d->b) };
        l->items[j] = mp_obj_new_tuple(4, t);
    }
    m_del(field_diff_t, rows, cap ? cap : 1);
    return mp_obj_new_tuple(2, (mp_obj_t[]){ mp_obj_new_int_from_uint(total), list });
}
MP_DEFINE_CONST_FUN_OBJ_3(modfield_diff_obj, diff);
