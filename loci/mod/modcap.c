// SPDX-License-Identifier: MIT
// The `_cap` MicroPython module: the capability Table (loci/cap's C core in one GC
// arena) and the Cap handle, which Python can hold and pass but never make or alter.
#include <math.h>
#include <string.h>

#include "py/gc.h"
#include "py/mphal.h"
#include "py/objexcept.h"
#include "py/objint.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "cap.h"
#include "modcap.h"

MP_DEFINE_EXCEPTION(CapError, ValueError)

typedef struct {
    mp_obj_base_t base;
    cap_table_t t;  // t.slots is the head of the arena, one GC block (see modfield.h)
} mp_cap_table_t;

// The handle. The type has no make_new, so only this file creates one; its fields are
// not writable from Python.
typedef struct {
    mp_obj_base_t base;
    cap_ref_t ref;
    uint32_t owner;
} mp_cap_t;

static const mp_obj_type_t mp_type_Cap;
static const mp_obj_type_t mp_type_Table;

// Table identities: the TSC at the first Table of this boot in the high half, a count
// in the low half, so no two tables of a boot share one and a handle cannot outlive it.
static uint64_t table_ids;

static NORETURN void raise_err(int rc, const char *op) {
    mp_raise_msg_varg(&mp_type_CapError, MP_ERROR_TEXT("%s: %s"), op, cap_why(rc));
}

static cap_table_t *table_of(mp_obj_t o) {
    if (!mp_obj_is_type(o, &mp_type_Table)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a capability Table"));
    }
    return &((mp_cap_table_t *)MP_OBJ_TO_PTR(o))->t;
}

static mp_cap_t *cap_of(mp_obj_t o) {
    if (!mp_obj_is_type(o, &mp_type_Cap)) {
        mp_raise_TypeError(MP_ERROR_TEXT("expected a Cap"));
    }
    return MP_OBJ_TO_PTR(o);
}

static mp_obj_t new_cap(const cap_ref_t *ref, uint32_t owner) {
    mp_cap_t *c = mp_obj_malloc(mp_cap_t, &mp_type_Cap);
    c->ref = *ref;
    c->owner = owner;
    return MP_OBJ_FROM_PTR(c);
}

static uint32_t get_u32(mp_obj_t o, const char *what) {
    mp_int_t v = mp_obj_get_int(o);
    if (v < 0 || (uint64_t)v > 0xffffffffu) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s must be 0..2**32-1"), what);
    }
    return (uint32_t)v;
}

static uint64_t get_u64(mp_obj_t o, const char *what) {
    if (mp_obj_is_small_int(o) && MP_OBJ_SMALL_INT_VALUE(o) >= 0) {
        return (uint64_t)MP_OBJ_SMALL_INT_VALUE(o);
    }
    if (!mp_obj_is_int(o) || mp_obj_int_sign(o) < 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s must be an int >= 0"), what);
    }
    uint8_t b[9] = { 0 };
    mp_obj_int_to_bytes_impl(o, false, sizeof b, b);
    if (b[8] != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s must be < 2**64"), what);
    }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = v << 8 | b[i];
    }
    return v;
}

static mp_obj_t u64_obj(uint64_t v) {
    return mp_obj_new_int_from_uint(v);
}

static void get_pair(mp_obj_t o, const char *what, size_t n, mp_obj_t **items) {
    size_t len;
    if (!mp_obj_is_type(o, &mp_type_tuple) && !mp_obj_is_type(o, &mp_type_list)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s must be a tuple"), what);
    }
    mp_obj_get_array(o, &len, items);
    if (len != n) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s must have %d items"), what,
                          (int)n);
    }
}

static void get_region(mp_obj_t o, cap_scope_t *s) {
    mp_obj_t *it;
    get_pair(o, "region (x0, y0, w, h)", 4, &it);
    s->has_region = 1;
    s->x0 = get_u32(it[0], "region x0");
    s->y0 = get_u32(it[1], "region y0");
    s->w = get_u32(it[2], "region w");
    s->h = get_u32(it[3], "region h");
    if (s->w == 0 || s->h == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("region w and h must be >= 1"));
    }
}

static void get_keys(mp_obj_t o, cap_scope_t *s) {
    size_t n;
    mp_obj_t *it;
    if (!mp_obj_is_type(o, &mp_type_tuple) && !mp_obj_is_type(o, &mp_type_list)) {
        mp_raise_TypeError(MP_ERROR_TEXT("keys must be a tuple of byte prefixes"));
    }
    mp_obj_get_array(o, &n, &it);
    if (n > CAP_MAX_KEYS) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("at most %d key prefixes"),
                          CAP_MAX_KEYS);
    }
    s->has_keys = 1;
    s->nkeys = (uint8_t)n;
    for (size_t i = 0; i < n; i++) {
        if (!mp_obj_is_str_or_bytes(it[i])) {
            mp_raise_TypeError(MP_ERROR_TEXT("a key prefix is bytes or str"));
        }
        size_t len;
        const char *k = mp_obj_str_get_data(it[i], &len);
        if (len > CAP_KEY_MAX) {
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("key prefix longer than %d bytes"),
                              CAP_KEY_MAX);
        }
        s->keylen[i] = (uint8_t)len;
        memcpy(s->keys[i], k, len);
    }
}

// An IO or MEM range (lo, hi), inclusive; None, () or False means none.
static void get_range(mp_obj_t o, const char *what, uint8_t *has, uint64_t *lo, uint64_t *hi) {
    *has = 0;
    if (o == mp_const_none || o == mp_const_false ||
        ((mp_obj_is_type(o, &mp_type_tuple) || mp_obj_is_type(o, &mp_type_list)) &&
         mp_obj_get_int(mp_obj_len(o)) == 0)) {
        return;
    }
    mp_obj_t *it;
    get_pair(o, what, 2, &it);
    *has = 1;
    *lo = get_u64(it[0], what);
    *hi = get_u64(it[1], what);
    if (*lo > *hi) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: lo > hi"), what);
    }
}

// A rate; None or negative means unlimited.
static double get_rate(mp_obj_t o) {
    if (o == mp_const_none) {
        return -1.0;
    }
    mp_float_t r = mp_obj_get_float(o);
    if (r != r) {
        mp_raise_ValueError(MP_ERROR_TEXT("rate must be a number"));
    }
    return r < 0 ? -1.0 : (double)r;
}

// An absolute expiry tick; None or 0 means never.
static uint64_t get_expires(mp_obj_t o) {
    return o == mp_const_none ? 0 : get_u64(o, "expires");
}

// ---- Table ------------------------------------------------------------------------

static mp_obj_t table_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
                               const mp_obj_t *all_args) {
    enum {
        ARG_capacity,
        ARG_audit
    };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_capacity, MP_ARG_INT, { .u_int = 4096 } },
        { MP_QSTR_audit, MP_ARG_INT, { .u_int = 65536 } },
    };
    mp_arg_val_t a[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, a);
    mp_int_t cap = a[ARG_capacity].u_int, audit = a[ARG_audit].u_int;
    if (cap < 1 || cap > CAP_MAX_CAPACITY || audit < 2 || audit > CAP_MAX_AUDIT) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("capacity must be 1..%d and audit 2..%d"), CAP_MAX_CAPACITY,
                          CAP_MAX_AUDIT);
    }
    size_t size = cap_arena_size((uint32_t)cap, (uint32_t)audit);
    mp_cap_table_t *o = mp_obj_malloc(mp_cap_table_t, type);
    uint8_t *arena = m_new_maybe(uint8_t, size);
    if (arena == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("capability table needs %u bytes"),
                          (unsigned)size);
    }
    if (table_ids == 0) {
        table_ids = (uint64_t)mp_hal_ticks_cpu() << 32;
    }
    int rc = cap_init(&o->t, arena, size, (uint32_t)cap, (uint32_t)audit, ++table_ids);
    if (rc != CAP_OK) {
        m_del(uint8_t, arena, size);
        raise_err(rc, "Table");
    }
    return MP_OBJ_FROM_PTR(o);
}

mp_obj_t modcap_grant(mp_obj_t table, mp_obj_t owner_in, mp_obj_t rights, mp_obj_t flavours,
                      mp_obj_t region, mp_obj_t keys, mp_obj_t rate, mp_obj_t expires, mp_obj_t io,
                      mp_obj_t mem, mp_obj_t by) {
    cap_table_t *t = table_of(table);
    cap_scope_t s;
    memset(&s, 0, sizeof s);
    uint32_t owner = get_u32(owner_in, "owner");
    s.rights = get_u32(rights, "rights");
    s.flavours = get_u32(flavours, "flavours");
    if (region != mp_const_none) {
        get_region(region, &s);
    }
    if (keys != mp_const_none) {
        get_keys(keys, &s);
    }
    s.rate = get_rate(rate);
    s.expires = get_expires(expires);
    get_range(io, "io (lo, hi)", &s.has_io, &s.io_lo, &s.io_hi);
    get_range(mem, "mem (lo, hi)", &s.has_mem, &s.mem_lo, &s.mem_hi);
    if (s.rights & ~(uint32_t)CAP_ALL_RIGHTS) {
        mp_raise_ValueError(MP_ERROR_TEXT("rights: unknown bits"));
    }
    cap_ref_t ref;
    int rc = cap_grant(t, owner, &s, get_u32(by, "by"), &ref);
    if (rc != CAP_OK) {
        raise_err(rc, "grant");
    }
    return new_cap(&ref, owner);
}

// grant(owner, rights, flavours=0, region=None, keys=None, rate=-1.0, expires=0,
//       io=None, mem=None, by=0) -> Cap
static mp_obj_t table_grant(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    enum {
        ARG_owner,
        ARG_rights,
        ARG_flavours,
        ARG_region,
        ARG_keys,
        ARG_rate,
        ARG_expires,
        ARG_io,
        ARG_mem,
        ARG_by
    };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_owner, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_rights, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_flavours, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(0) } },
        { MP_QSTR_region, MP_ARG_OBJ, { .u_obj = mp_const_none } },
        { MP_QSTR_keys, MP_ARG_OBJ, { .u_obj = mp_const_none } },
        { MP_QSTR_rate, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(-1) } },
        { MP_QSTR_expires, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(0) } },
        { MP_QSTR_io, MP_ARG_OBJ, { .u_obj = mp_const_none } },
        { MP_QSTR_mem, MP_ARG_OBJ, { .u_obj = mp_const_none } },
        { MP_QSTR_by, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(0) } },
    };
    mp_arg_val_t a[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args - 1, pos + 1, kw, MP_ARRAY_SIZE(allowed), allowed, a);
    return modcap_grant(pos[0], a[ARG_owner].u_obj, a[ARG_rights].u_obj, a[ARG_flavours].u_obj,
                        a[ARG_region].u_obj, a[ARG_keys].u_obj, a[ARG_rate].u_obj,
                        a[ARG_expires].u_obj, a[ARG_io].u_obj, a[ARG_mem].u_obj, a[ARG_by].u_obj);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(table_grant_obj, 3, table_grant);

// derive(cap, owner, rights, flavours, region, keys, rate, expires, io, mem, by=None) -> Cap
// Every argument given means what it means in grant() (region None: everywhere, io None:
// no ports, ...); an argument left out keeps the parent's value.
static mp_obj_t table_derive(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    enum {
        ARG_cap,
        ARG_owner,
        ARG_rights,
        ARG_flavours,
        ARG_region,
        ARG_keys,
        ARG_rate,
        ARG_expires,
        ARG_io,
        ARG_mem,
        ARG_by
    };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_cap, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_owner, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_rights, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_flavours, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_region, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_keys, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_rate, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_expires, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_io, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_mem, MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_by, MP_ARG_OBJ, { .u_obj = mp_const_none } },
    };
    mp_arg_val_t a[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args - 1, pos + 1, kw, MP_ARRAY_SIZE(allowed), allowed, a);
    cap_table_t *t = table_of(pos[0]);
    mp_cap_t *c = cap_of(a[ARG_cap].u_obj);
    uint32_t owner = get_u32(a[ARG_owner].u_obj, "owner");
    uint32_t by = a[ARG_by].u_obj == mp_const_none ? c->owner : get_u32(a[ARG_by].u_obj, "by");
    // Start from the parent's scope when it is live; a stale or foreign parent is
    // refused by the core (and audited) whatever the request says.
    cap_scope_t s;
    memset(&s, 0, sizeof s);
    const cap_slot_t *p;
    if (cap_lookup(t, &c->ref, &p) == CAP_OK) {
        s = p->s;
    }
#define GIVEN(arg) (a[arg].u_obj != MP_OBJ_NULL)
    if (GIVEN(ARG_rights)) {
        s.rights = get_u32(a[ARG_rights].u_obj, "rights");
    }
    if (GIVEN(ARG_flavours)) {
        s.flavours = get_u32(a[ARG_flavours].u_obj, "flavours");
    }
    if (GIVEN(ARG_region)) {
        s.has_region = 0;
        if (a[ARG_region].u_obj != mp_const_none) {
            get_region(a[ARG_region].u_obj, &s);
        }
    }
    if (GIVEN(ARG_keys)) {
        s.has_keys = 0;
        s.nkeys = 0;
        memset(s.keylen, 0, sizeof s.keylen);
        if (a[ARG_keys].u_obj != mp_const_none) {
            get_keys(a[ARG_keys].u_obj, &s);
        }
    }
    if (GIVEN(ARG_rate)) {
        s.rate = get_rate(a[ARG_rate].u_obj);
    }
    if (GIVEN(ARG_expires)) {
        s.expires = get_expires(a[ARG_expires].u_obj);
    }
    if (GIVEN(ARG_io)) {
        get_range(a[ARG_io].u_obj, "io (lo, hi)", &s.has_io, &s.io_lo, &s.io_hi);
    }
    if (GIVEN(ARG_mem)) {
        get_range(a[ARG_mem].u_obj, "mem (lo, hi)", &s.has_mem, &s.mem_lo, &s.mem_hi);
    }
#undef GIVEN
    if (s.rights & ~(uint32_t)CAP_ALL_RIGHTS) {
        mp_raise_ValueError(MP_ERROR_TEXT("rights: unknown bits"));
    }
    cap_ref_t ref;
    int rc = cap_derive(t, &c->ref, owner, &s, by, &ref);
    if (rc != CAP_OK) {
        raise_err(rc, "derive");
    }
    return new_cap(&ref, owner);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(table_derive_obj, 3, table_derive);

// check(cap, owner, op, flavour, x=-1, y=-1, key=None, amount=0.0, now=0, w=1, h=1) -> code
static mp_obj_t table_check(size_t n_args, const mp_obj_t *pos, mp_map_t *kw) {
    enum {
        ARG_cap,
        ARG_owner,
        ARG_op,
        ARG_flavour,
        ARG_x,
        ARG_y,
        ARG_key,
        ARG_amount,
        ARG_now,
        ARG_w,
        ARG_h
    };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_cap, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_owner, MP_ARG_REQUIRED | MP_ARG_OBJ, { .u_obj = MP_OBJ_NULL } },
        { MP_QSTR_op, MP_ARG_REQUIRED | MP_ARG_INT, { .u_int = 0 } },
        { MP_QSTR_flavour, MP_ARG_INT, { .u_int = 0 } },
        { MP_QSTR_x, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(-1) } },
        { MP_QSTR_y, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(-1) } },
        { MP_QSTR_key, MP_ARG_OBJ, { .u_obj = mp_const_none } },
        { MP_QSTR_amount, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(0) } },
        { MP_QSTR_now, MP_ARG_OBJ, { .u_obj = MP_OBJ_NEW_SMALL_INT(0) } },
        { MP_QSTR_w, MP_ARG_INT, { .u_int = 1 } },
        { MP_QSTR_h, MP_ARG_INT, { .u_int = 1 } },
    };
    mp_arg_val_t a[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all(n_args - 1, pos + 1, kw, MP_ARRAY_SIZE(allowed), allowed, a);
    cap_table_t *t = table_of(pos[0]);
    mp_cap_t *c = cap_of(a[ARG_cap].u_obj);
    cap_req_t r;
    memset(&r, 0, sizeof r);
    r.op = (uint32_t)a[ARG_op].u_int;
    if (a[ARG_op].u_int <= 0 || a[ARG_op].u_int > CAP_ALL_RIGHTS || (r.op & (r.op - 1))) {
        mp_raise_ValueError(MP_ERROR_TEXT("op must be one right"));
    }
    r.flavour = (uint32_t)(a[ARG_flavour].u_int < 0 ? 0xffffffffu : a[ARG_flavour].u_int);
    mp_obj_t x = a[ARG_x].u_obj, y = a[ARG_y].u_obj;
    // Negative means "no position"; IO and MEM ranges may need the whole 64 bits.
    if (mp_obj_is_small_int(x) && MP_OBJ_SMALL_INT_VALUE(x) < 0) {
        r.x = -1;
    } else {
        uint64_t ux = get_u64(x, "x");
        if (ux >> 63) {
            mp_raise_ValueError(MP_ERROR_TEXT("x must be < 2**63"));
        }
        r.x = (int64_t)ux;
    }
    r.y = mp_obj_is_small_int(y) && MP_OBJ_SMALL_INT_VALUE(y) < 0 ? -1 : (int64_t)get_u32(y, "y");
    if (a[ARG_w].u_int < 1 || a[ARG_h].u_int < 1 || a[ARG_w].u_int > 0xffffffff ||
        a[ARG_h].u_int > 0xffffffff) {
        mp_raise_ValueError(MP_ERROR_TEXT("w and h must be >= 1"));
    }
    r.w = (uint32_t)a[ARG_w].u_int;
    r.h = (uint32_t)a[ARG_h].u_int;
    if (a[ARG_key].u_obj != mp_const_none) {
        if (!mp_obj_is_str_or_bytes(a[ARG_key].u_obj)) {
            mp_raise_TypeError(MP_ERROR_TEXT("key must be bytes or str"));
        }
        r.key = (const uint8_t *)mp_obj_str_get_data(a[ARG_key].u_obj, &r.keylen);
    }
    r.amount = (double)mp_obj_get_float(a[ARG_amount].u_obj);
    r.now = get_u64(a[ARG_now].u_obj, "now");
    int rc = cap_check(t, &c->ref, get_u32(a[ARG_owner].u_obj, "owner"), &r);
    if (rc == CAP_E_ARG) {
        raise_err(rc, "check");
    }
    return MP_OBJ_NEW_SMALL_INT(rc);
}
static MP_DEFINE_CONST_FUN_OBJ_KW(table_check_obj, 4, table_check);

int modcap_check(mp_obj_t table, mp_obj_t cap, uint32_t owner, const cap_req_t *req) {
    int rc = cap_check(table_of(table), &cap_of(cap)->ref, owner, req);
    if (rc == CAP_E_ARG) {
        raise_err(rc, "check");
    }
    return rc;
}

// refuse(owner, op, flavour=-1) -> the code audited (E_OP), or E_AUDIT_FULL: a use that no
// capability of the owner covers, recorded though there is no handle to check.
static mp_obj_t table_refuse(size_t n_args, const mp_obj_t *args) {
    mp_int_t op = mp_obj_get_int(args[2]);
    mp_int_t fl = n_args > 3 ? mp_obj_get_int(args[3]) : -1;
    if (op <= 0 || op > CAP_ALL_RIGHTS || (op & (op - 1))) {
        mp_raise_ValueError(MP_ERROR_TEXT("op must be one right"));
    }
    cap_table_t *t = table_of(args[0]);
    int rc = cap_refuse(t, get_u32(args[1], "owner"), (uint32_t)op,
                        fl < 0 ? 0xffffffffu : (uint32_t)fl, 0);
    return MP_OBJ_NEW_SMALL_INT(rc);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(table_refuse_obj, 3, 4, table_refuse);

static mp_obj_t table_epoch(mp_obj_t self) {
    cap_epoch(table_of(self));
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_epoch_obj, table_epoch);

// revoke(cap, by=0) -> count (0 if it was already revoked)
static mp_obj_t table_revoke(size_t n_args, const mp_obj_t *args) {
    cap_table_t *t = table_of(args[0]);
    mp_cap_t *c = cap_of(args[1]);
    uint32_t n;
    int rc = cap_revoke(t, &c->ref, n_args > 2 ? get_u32(args[2], "by") : 0, &n);
    if (rc != CAP_OK) {
        raise_err(rc, "revoke");
    }
    return mp_obj_new_int_from_uint(n);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(table_revoke_obj, 2, 3, table_revoke);

// retire(owner, by=0) -> count
static mp_obj_t table_retire(size_t n_args, const mp_obj_t *args) {
    cap_table_t *t = table_of(args[0]);
    uint32_t n;
    int rc = cap_retire(t, get_u32(args[1], "owner"), n_args > 2 ? get_u32(args[2], "by") : 0, &n);
    if (rc != CAP_OK) {
        raise_err(rc, "retire");
    }
    return mp_obj_new_int_from_uint(n);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(table_retire_obj, 2, 3, table_retire);

static mp_obj_t table_expire(mp_obj_t self, mp_obj_t now) {
    uint32_t n;
    int rc = cap_expire(table_of(self), get_u64(now, "now"), &n);
    if (rc != CAP_OK) {
        raise_err(rc, "expire");
    }
    return mp_obj_new_int_from_uint(n);
}
static MP_DEFINE_CONST_FUN_OBJ_2(table_expire_obj, table_expire);

static mp_obj_t table_held(mp_obj_t self, mp_obj_t owner_in) {
    cap_table_t *t = table_of(self);
    uint32_t owner = get_u32(owner_in, "owner");
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = 0; i < t->capacity; i++) {
        const cap_slot_t *s = &t->slots[i];
        if (s->live && s->owner == owner) {
            cap_ref_t ref = { t->id, i, s->gen };
            mp_obj_list_append(list, new_cap(&ref, owner));
        }
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_2(table_held_obj, table_held);

static mp_obj_t range_obj(uint8_t has, uint64_t lo, uint64_t hi) {
    if (!has) {
        return mp_const_none;
    }
    mp_obj_t v[2] = { u64_obj(lo), u64_obj(hi) };
    return mp_obj_new_tuple(2, v);
}

// info(cap) -> dict of the capability's fields (CapError if it is not live).
static mp_obj_t table_info(mp_obj_t self, mp_obj_t cap_in) {
    cap_table_t *t = table_of(self);
    mp_cap_t *c = cap_of(cap_in);
    const cap_slot_t *s;
    int rc = cap_lookup(t, &c->ref, &s);
    if (rc != CAP_OK) {
        raise_err(rc, "info");
    }
    mp_obj_t d = mp_obj_new_dict(16);
#define PUT(k, v) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_##k), (v))
    PUT(owner, mp_obj_new_int_from_uint(s->owner));
    PUT(slot, mp_obj_new_int_from_uint(c->ref.slot));
    PUT(gen, mp_obj_new_int_from_uint(s->gen));
    PUT(parent, s->parent == CAP_NONE ? mp_const_none : mp_obj_new_int_from_uint(s->parent));
    PUT(rights, mp_obj_new_int_from_uint(s->s.rights));
    PUT(flavours, mp_obj_new_int_from_uint(s->s.flavours));
    if (s->s.has_region) {
        mp_obj_t r[4] = { mp_obj_new_int_from_uint(s->s.x0), mp_obj_new_int_from_uint(s->s.y0),
                          mp_obj_new_int_from_uint(s->s.w), mp_obj_new_int_from_uint(s->s.h) };
        PUT(region, mp_obj_new_tuple(4, r));
    } else {
        PUT(region, mp_const_none);
    }
    if (s->s.has_keys) {
        mp_obj_t k[CAP_MAX_KEYS];
        for (uint32_t i = 0; i < s->s.nkeys; i++) {
            k[i] = mp_obj_new_bytes(s->s.keys[i], s->s.keylen[i]);
        }
        PUT(keys, mp_obj_new_tuple(s->s.nkeys, k));
    } else {
        PUT(keys, mp_const_none);
    }
    PUT(rate, mp_obj_new_float(s->s.rate));
    PUT(used, mp_obj_new_float(s->used));
    PUT(expires, u64_obj(s->s.expires));
    PUT(io, range_obj(s->s.has_io, s->s.io_lo, s->s.io_hi));
    PUT(mem, range_obj(s->s.has_mem, s->s.mem_lo, s->s.mem_hi));
#undef PUT
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_2(table_info_obj, table_info);

static const qstr rec_kinds[] = {
    MP_QSTR_,       MP_QSTR_GRANT,  MP_QSTR_DERIVE, MP_QSTR_REFUSED,
    MP_QSTR_REVOKE, MP_QSTR_EXPIRE, MP_QSTR_RETIRE, MP_QSTR_CHECKPOINT,
};

static mp_obj_t slot_obj(uint32_t v) {
    return v == CAP_NONE ? mp_const_none : mp_obj_new_int_from_uint(v);
}

// One record as (seq, kind, tick, actor, owner, slot, gen, parent, rights, aux, reason,
// extra): reason is None unless REFUSED; extra is the carried chain head (bytes) of a
// CHECKPOINT, the amount of a REFUSED, else None.
static mp_obj_t rec_tuple(const cap_rec_t *r) {
    mp_obj_t extra = mp_const_none;
    if (r->kind == CAP_REC_CHECKPOINT) {
        extra = mp_obj_new_bytes(r->data, CAP_HASH_SIZE);
    } else if (r->kind == CAP_REC_REFUSED) {
        extra = mp_obj_new_float(r->amount);
    }
    mp_obj_t v[12] = {
        u64_obj(r->seq),
        MP_OBJ_NEW_QSTR(r->kind <= CAP_REC_CHECKPOINT ? rec_kinds[r->kind] : MP_QSTR_),
        u64_obj(r->tick),
        mp_obj_new_int_from_uint(r->actor),
        mp_obj_new_int_from_uint(r->owner),
        slot_obj(r->slot),
        mp_obj_new_int_from_uint(r->gen),
        slot_obj(r->parent),
        mp_obj_new_int_from_uint(r->rights),
        mp_obj_new_int_from_uint(r->aux),
        r->kind == CAP_REC_REFUSED ? mp_obj_new_str_from_cstr(cap_why(r->reason)) : mp_const_none,
        extra,
    };
    return mp_obj_new_tuple(12, v);
}

// audit(n) -> the last n records (oldest first).
static mp_obj_t table_audit(mp_obj_t self, mp_obj_t n_in) {
    cap_table_t *t = table_of(self);
    uint32_t n = get_u32(n_in, "n");
    if (n > t->audit_len) {
        n = t->audit_len;
    }
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = t->audit_len - n; i < t->audit_len; i++) {
        cap_rec_t r;
        cap_audit_get(t, i, &r);
        mp_obj_list_append(list, rec_tuple(&r));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_2(table_audit_obj, table_audit);

size_t modcap_audit_count(mp_obj_t table) {
    return table_of(table)->audit_len;
}

static mp_obj_t table_audit_count(mp_obj_t self) {
    return mp_obj_new_int_from_uint(table_of(self)->audit_len);
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_audit_count_obj, table_audit_count);

static mp_obj_t table_audit_verify(mp_obj_t self) {
    return mp_obj_new_bool(cap_audit_verify(table_of(self)));
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_audit_verify_obj, table_audit_verify);

static mp_obj_t table_audit_head(mp_obj_t self) {
    return mp_obj_new_bytes(table_of(self)->head, CAP_HASH_SIZE);
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_audit_head_obj, table_audit_head);

// audit_export() -> bytes of every record; the log keeps one CHECKPOINT.
static mp_obj_t table_audit_export(mp_obj_t self) {
    cap_table_t *t = table_of(self);
    size_t size = (size_t)t->audit_len * CAP_REC_SIZE, n;
    vstr_t v;
    vstr_init_len(&v, size);
    int rc = cap_audit_export(t, (uint8_t *)v.buf, size, &n);
    if (rc != CAP_OK) {
        raise_err(rc, "audit_export");
    }
    return mp_obj_new_bytes_from_vstr(&v);
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_audit_export_obj, table_audit_export);

// stats() -> dict: capacity, live, audit_cap, audit_count, seq, now.
static mp_obj_t table_stats(mp_obj_t self) {
    cap_table_t *t = table_of(self);
    mp_obj_t d = mp_obj_new_dict(6);
#define PUT(k, v) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_##k), u64_obj(v))
    PUT(capacity, t->capacity);
    PUT(live, t->live);
    PUT(audit_cap, t->audit_cap);
    PUT(audit_count, t->audit_len);
    PUT(seq, t->seq);
    PUT(now, t->now);
#undef PUT
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_1(table_stats_obj, table_stats);

// t.now: the table's clock (audit ticks, the default `now` of check); expire() sets it.
static void table_attr(mp_obj_t self, qstr attr, mp_obj_t *dest) {
    if (attr != MP_QSTR_now) {
        dest[1] = MP_OBJ_SENTINEL;
        return;
    }
    cap_table_t *t = table_of(self);
    if (dest[0] == MP_OBJ_NULL) {
        dest[0] = u64_obj(t->now);
    } else if (dest[0] == MP_OBJ_SENTINEL && dest[1] != MP_OBJ_NULL) {
        t->now = get_u64(dest[1], "now");
        dest[0] = MP_OBJ_NULL;
    }
}

static const mp_rom_map_elem_t table_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_grant), MP_ROM_PTR(&table_grant_obj) },
    { MP_ROM_QSTR(MP_QSTR_derive), MP_ROM_PTR(&table_derive_obj) },
    { MP_ROM_QSTR(MP_QSTR_check), MP_ROM_PTR(&table_check_obj) },
    { MP_ROM_QSTR(MP_QSTR_epoch), MP_ROM_PTR(&table_epoch_obj) },
    { MP_ROM_QSTR(MP_QSTR_refuse), MP_ROM_PTR(&table_refuse_obj) },
    { MP_ROM_QSTR(MP_QSTR_revoke), MP_ROM_PTR(&table_revoke_obj) },
    { MP_ROM_QSTR(MP_QSTR_retire), MP_ROM_PTR(&table_retire_obj) },
    { MP_ROM_QSTR(MP_QSTR_expire), MP_ROM_PTR(&table_expire_obj) },
    { MP_ROM_QSTR(MP_QSTR_held), MP_ROM_PTR(&table_held_obj) },
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&table_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_audit), MP_ROM_PTR(&table_audit_obj) },
    { MP_ROM_QSTR(MP_QSTR_audit_count), MP_ROM_PTR(&table_audit_count_obj) },
    { MP_ROM_QSTR(MP_QSTR_audit_verify), MP_ROM_PTR(&table_audit_verify_obj) },
    { MP_ROM_QSTR(MP_QSTR_audit_head), MP_ROM_PTR(&table_audit_head_obj) },
    { MP_ROM_QSTR(MP_QSTR_audit_export), MP_ROM_PTR(&table_audit_export_obj) },
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&table_stats_obj) },
};
static MP_DEFINE_CONST_DICT(table_locals_dict, table_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(mp_type_Table, MP_QSTR_Table, MP_TYPE_FLAG_NONE, make_new,
                                table_make_new, attr, table_attr, locals_dict, &table_locals_dict);

// ---- Cap --------------------------------------------------------------------------

static void cap_print(const mp_print_t *print, mp_obj_t self, mp_print_kind_t kind) {
    (void)kind;
    mp_cap_t *c = MP_OBJ_TO_PTR(self);
    mp_printf(print, "<Cap %u.%u badge=%u>", (unsigned)c->ref.slot, (unsigned)c->ref.gen,
              (unsigned)c->owner);
}

static void cap_attr(mp_obj_t self, qstr attr, mp_obj_t *dest) {
    mp_cap_t *c = MP_OBJ_TO_PTR(self);
    if (dest[0] != MP_OBJ_NULL) {
        return;  // read-only: stores and deletes fail with AttributeError
    }
    if (attr == MP_QSTR_badge) {
        dest[0] = mp_obj_new_int_from_uint(c->owner);
    } else if (attr == MP_QSTR_slot) {
        dest[0] = mp_obj_new_int_from_uint(c->ref.slot);
    } else if (attr == MP_QSTR_gen) {
        dest[0] = mp_obj_new_int_from_uint(c->ref.gen);
    }
}

// Two handles to the same capability compare equal (held() makes new objects).
static mp_obj_t cap_binary_op(mp_binary_op_t op, mp_obj_t lhs, mp_obj_t rhs) {
    if (op != MP_BINARY_OP_EQUAL || !mp_obj_is_type(rhs, &mp_type_Cap)) {
        return MP_OBJ_NULL;
    }
    const cap_ref_t *a = &((mp_cap_t *)MP_OBJ_TO_PTR(lhs))->ref;
    const cap_ref_t *b = &((mp_cap_t *)MP_OBJ_TO_PTR(rhs))->ref;
    return mp_obj_new_bool(a->table == b->table && a->slot == b->slot && a->gen == b->gen);
}

static mp_obj_t cap_unary_op(mp_unary_op_t op, mp_obj_t self) {
    if (op != MP_UNARY_OP_HASH) {
        return MP_OBJ_NULL;
    }
    const cap_ref_t *r = &((mp_cap_t *)MP_OBJ_TO_PTR(self))->ref;
    return MP_OBJ_NEW_SMALL_INT((mp_int_t)((r->slot * 2654435761u) ^ r->gen ^ (uint32_t)r->table) &
                                0x3fffffff);
}

static MP_DEFINE_CONST_OBJ_TYPE(mp_type_Cap, MP_QSTR_Cap, MP_TYPE_FLAG_NONE, print, cap_print, attr,
                                cap_attr, binary_op, cap_binary_op, unary_op, cap_unary_op);

// ---- module -----------------------------------------------------------------------

static mp_obj_t mod_why(mp_obj_t code) {
    return mp_obj_new_str_from_cstr(cap_why((int)mp_obj_get_int(code)));
}
static MP_DEFINE_CONST_FUN_OBJ_1(mod_why_obj, mod_why);

// chain(data) -> the chain head over exported records, or None if they are malformed.
static mp_obj_t mod_chain(mp_obj_t data) {
    mp_buffer_info_t b;
    mp_get_buffer_raise(data, &b, MP_BUFFER_READ);
    uint8_t head[CAP_HASH_SIZE];
    if (cap_audit_chain(b.buf, b.len, head) != CAP_OK) {
        return mp_const_none;
    }
    return mp_obj_new_bytes(head, CAP_HASH_SIZE);
}
static MP_DEFINE_CONST_FUN_OBJ_1(mod_chain_obj, mod_chain);

// arena_size(capacity, audit) -> bytes a Table of that size takes from the heap.
static mp_obj_t mod_arena_size(mp_obj_t c, mp_obj_t a) {
    return mp_obj_new_int_from_uint(cap_arena_size(get_u32(c, "capacity"), get_u32(a, "audit")));
}
static MP_DEFINE_CONST_FUN_OBJ_2(mod_arena_size_obj, mod_arena_size);

static const mp_rom_map_elem_t cap_module_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__cap) },
    { MP_ROM_QSTR(MP_QSTR_Table), MP_ROM_PTR(&mp_type_Table) },
    { MP_ROM_QSTR(MP_QSTR_Cap), MP_ROM_PTR(&mp_type_Cap) },
    { MP_ROM_QSTR(MP_QSTR_CapError), MP_ROM_PTR(&mp_type_CapError) },
    { MP_ROM_QSTR(MP_QSTR_why), MP_ROM_PTR(&mod_why_obj) },
    { MP_ROM_QSTR(MP_QSTR_chain), MP_ROM_PTR(&mod_chain_obj) },
    { MP_ROM_QSTR(MP_QSTR_arena_size), MP_ROM_PTR(&mod_arena_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_SENSE), MP_ROM_INT(CAP_SENSE) },
    { MP_ROM_QSTR(MP_QSTR_DEPOSIT), MP_ROM_INT(CAP_DEPOSIT) },
    { MP_ROM_QSTR(MP_QSTR_SPAWN), MP_ROM_INT(CAP_SPAWN) },
    { MP_ROM_QSTR(MP_QSTR_IO), MP_ROM_INT(CAP_IO) },
    { MP_ROM_QSTR(MP_QSTR_MEM), MP_ROM_INT(CAP_MEM) },
    { MP_ROM_QSTR(MP_QSTR_REWRITE), MP_ROM_INT(CAP_REWRITE) },
    { MP_ROM_QSTR(MP_QSTR_OK), MP_ROM_INT(CAP_OK) },
    { MP_ROM_QSTR(MP_QSTR_E_REVOKED), MP_ROM_INT(CAP_E_REVOKED) },
    { MP_ROM_QSTR(MP_QSTR_E_EXPIRED), MP_ROM_INT(CAP_E_EXPIRED) },
    { MP_ROM_QSTR(MP_QSTR_E_OWNER), MP_ROM_INT(CAP_E_OWNER) },
    { MP_ROM_QSTR(MP_QSTR_E_OP), MP_ROM_INT(CAP_E_OP) },
    { MP_ROM_QSTR(MP_QSTR_E_FLAVOUR), MP_ROM_INT(CAP_E_FLAVOUR) },
    { MP_ROM_QSTR(MP_QSTR_E_REGION), MP_ROM_INT(CAP_E_REGION) },
    { MP_ROM_QSTR(MP_QSTR_E_KEY), MP_ROM_INT(CAP_E_KEY) },
    { MP_ROM_QSTR(MP_QSTR_E_RATE), MP_ROM_INT(CAP_E_RATE) },
    { MP_ROM_QSTR(MP_QSTR_E_FOREIGN), MP_ROM_INT(CAP_E_FOREIGN) },
    { MP_ROM_QSTR(MP_QSTR_E_IO), MP_ROM_INT(CAP_E_IO) },
    { MP_ROM_QSTR(MP_QSTR_E_MEM), MP_ROM_INT(CAP_E_MEM) },
    { MP_ROM_QSTR(MP_QSTR_E_AMOUNT), MP_ROM_INT(CAP_E_AMOUNT) },
    { MP_ROM_QSTR(MP_QSTR_E_AUDIT_FULL), MP_ROM_INT(CAP_E_AUDIT_FULL) },
    { MP_ROM_QSTR(MP_QSTR_REC_SIZE), MP_ROM_INT(CAP_REC_SIZE) },
};
static MP_DEFINE_CONST_DICT(cap_module_globals, cap_module_table);

const mp_obj_module_t mp_module_cap = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&cap_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__cap, mp_module_cap);
