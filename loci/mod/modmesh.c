// SPDX-License-Identifier: MIT
// The `_mesh` MicroPython module: the Locus record and ctx types (mesh_record.c,
// mesh_ctx.c), and the hot part of Mesh.round (loci/python/mesh.py) in C.
//
// ready(mesh, rn, age_weight, patience) walks mesh.loci in the dict's own order, sets
// each record's state (backoff or live), skips a Locus whose wake condition is not met,
// computes its activation from the trace it attends to plus its age, draws its tie-break
// from mesh.rng (xorshift32, the same draws in the same order as the Python it
// replaced), and returns the records sorted by (-activation, draw). Draws never repeat
// within 2**32 - 1, so no two keys are equal and the order is the one Python's sort of
// those pairs gives. An attention or condition that is not a cell or a key (a region)
// goes to mesh._value, the Python definition, so the meaning stays in one place.
//
// steps(mesh, ready, now, order) runs those records' steps in that order as
// Mesh._step(r, now) would, each under its budget (vm/budget's budget_run, the C that
// `_budget.run` calls), with the same accounting; Mesh._after_step (children to start,
// strikes, retirement) is called only when it has something to do, and Mesh._step
// itself for anything unusual (no step function, a budgeted call already running).
#include <string.h>

#include "py/nlr.h"
#include "py/obj.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "budget.h"
#include "modfield.h"
#include "modmesh.h"

// ready()'s sort key: the activation key -(activation + age_weight * age) as an unsigned
// int of the same order (hi), then the draw and the record's index (lo). Draws never
// repeat within a round, so the index never decides, and the order is the one of the
// pairs (key, draw).
typedef struct {
    uint64_t hi, lo;
} order_key_t;

// Scratch of ready(), kept from one round to the next (a GC root): the records, then
// two arrays of keys to merge between. Rounds of the same mesh need the same size, and
// a large block found anew each round cost more than the sort.
MP_REGISTER_ROOT_POINTER(void *mesh_scratch);
MP_REGISTER_ROOT_POINTER(size_t mesh_scratch_cap);

// The value a Locus attends to (or waits on), as Mesh._value(a, pos) gives it, for any
// `a`: the field's own sense for a cell (with its errors for a bad one), Python for the
// rest.
static mp_float_t value(mp_obj_t mesh, mp_obj_t field, mp_obj_t a, mp_obj_t pos) {
    if (a == mp_const_none) {
        return 0;
    }
    if (mp_obj_is_type(a, &mp_type_dict) && !mesh_dict_get(a, MP_QSTR_key) &&
        !mesh_dict_get(a, MP_QSTR_region)) {
        mp_obj_t fl = mesh_dict_get(a, MP_QSTR_flavour);
        mp_obj_t at = pos != mp_const_none ? pos : mesh_dict_get(a, MP_QSTR_at);
        if (fl != MP_OBJ_NULL && at != MP_OBJ_NULL) {
            // The C method field.sense would run (field.Field does not override it).
            mp_obj_t args[3] = { field, fl, at };
            return mp_obj_get_float(
                mp_call_function_n_kw(MP_OBJ_FROM_PTR(&modfield_sense_obj), 3, 0, args));
        }
    }
    mp_obj_t dest[4];
    mp_load_method(mesh, MP_QSTR__value, dest);
    dest[2] = a;
    dest[3] = pos;
    return mp_obj_get_float(mp_call_method_n_kw(2, 0, dest));
}

// How ready() reads `a`: attend (its cell is the record's pos) or a wake condition
// (its cell is its own `at`, and it has a threshold).
static void see(const field_t *f, mp_obj_t a, bool wake, mesh_seen_t *s) {
    s->kind = a == mp_const_none ? MESH_SEEN_NONE : MESH_SEEN_PYTHON;
    mp_obj_t fl = mesh_dict_get(a, MP_QSTR_flavour);
    int i = fl != MP_OBJ_NULL ? mesh_flavour_index(f, fl) : -1;
    if (i < 0 || mesh_dict_get(a, MP_QSTR_region)) {
        return;
    }
    if (wake) {
        mp_obj_t above = mesh_dict_get(a, MP_QSTR_above);
        if (above == MP_OBJ_NULL || !(mp_obj_is_float(above) || mp_obj_is_small_int(above))) {
            return;
        }
        s->above = mp_obj_get_float(above);
    }
    s->fl = (uint8_t)i;
    mp_obj_t key = mesh_dict_get(a, MP_QSTR_key);
    if (key != MP_OBJ_NULL) {
        size_t n = 0;
        if (f->fl[i].kind == FIELD_KEYED && mp_obj_is_str_or_bytes(key) &&
            (mp_obj_str_get_data(key, &n), n >= 1 && n <= FIELD_KEY_MAX)) {
            s->key = key;
            s->kind = MESH_SEEN_KEY;
        }
        return;
    }
    mp_obj_t at = mesh_dict_get(a, MP_QSTR_at);
    if (f->fl[i].kind == FIELD_GRID && at != MP_OBJ_NULL &&
        (!wake || mesh_grid_cell(&f->fl[i], at, &s->x, &s->y))) {
        s->kind = MESH_SEEN_CELL;
    }
}

// Mesh._value(a, pos) for what `s` says of `a`.
static mp_float_t seen_value(mp_obj_t mesh, mp_obj_t field, const field_t *f, mesh_seen_t *s,
                             mp_obj_t a, mp_obj_t pos, bool wake) {
    if (s->kind == MESH_SEEN_NOT_YET) {
        see(f, a, wake, s);
    }
    float v;
    uint32_t x = s->x, y = s->y;
    size_t n;
    switch (s->kind) {
        case MESH_SEEN_NONE:
            return 0;
        case MESH_SEEN_CELL:
            if ((wake || mesh_grid_cell(&f->fl[s->fl], pos, &x, &y)) &&
                field_sense_xy(f, s->fl, x, y, &v) == FIELD_OK) {
                return v;
            }
            break;
        case MESH_SEEN_KEY: {
            const uint8_t *k = (const uint8_t *)mp_obj_str_get_data(s->key, &n);
            if (field_sense_key(f, s->fl, k, n, &v) == FIELD_OK) {
                return v;
            }
            break;
        }
        default:
            break;
    }
    return value(mesh, field, a, pos);
}

static uint64_t order_bits(mp_float_t key) {
    double d = (double)key;
    if (d == 0) {
        d = 0;  // -0.0 and 0.0 are the same key
    }
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

static bool key_before(const order_key_t *a, const order_key_t *b) {
    return a->hi < b->hi || (a->hi == b->hi && a->lo < b->lo);
}

// Bottom-up merge sort of a[0..n) between a and b; returns the one holding the result.
static order_key_t *merge_sort(order_key_t *a, order_key_t *b, size_t n) {
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                b[k++] = key_before(&a[j], &a[i]) ? a[j++] : a[i++];
            }
            while (i < mid) {
                b[k++] = a[i++];
            }
            while (j < hi) {
                b[k++] = a[j++];
            }
        }
        order_key_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

// The sort's digits: the draw's four bytes, then the activation key's eight, least
// significant first.
#define DIGITS 12
static unsigned digit(const order_key_t *k, unsigned d) {
    return (unsigned)(d < 4 ? k->lo >> (32 + 8 * d) : k->hi >> (8 * (d - 4))) & 0xff;
}

// Counts of the radix sort; ready() runs no Python while it sorts, so one set will do.
static size_t digit_count[DIGITS][256];

// LSD radix sort of a[0..n) by (hi, draw), between a and b: linear in n. A digit that is
// the same in every key (most Loci share their activation) moves nothing and is skipped.
static order_key_t *radix_sort(order_key_t *a, order_key_t *b, size_t n) {
    memset(digit_count, 0, sizeof digit_count);
    for (size_t i = 0; i < n; i++) {
        for (unsigned d = 0; d < DIGITS; d++) {
            digit_count[d][digit(&a[i], d)]++;
        }
    }
    for (unsigned d = 0; d < DIGITS; d++) {
        size_t *count = digit_count[d];
        if (count[digit(&a[0], d)] == n) {
            continue;
        }
        size_t at = 0;
        for (unsigned v = 0; v < 256; v++) {
            size_t c = count[v];
            count[v] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            b[count[digit(&a[i], d)]++] = a[i];
        }
        order_key_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

// The order of the keys (they never tie): a radix sort, or for a few a merge sort, which
// does not pay for the counts.
static order_key_t *sort_keys(order_key_t *a, order_key_t *b, size_t n) {
    return n < 256 ? merge_sort(a, b, n) : radix_sort(a, b, n);
}

static size_t scratch_bytes(size_t cap) {
    return cap * (sizeof(mp_obj_t) + 2 * sizeof(order_key_t));
}

// The scratch is in use from a round's scan to its last step; a round that the mesh's
// Python started meanwhile (nothing does) would get a buffer of its own.
static bool scratch_busy;

// Where a round's records and keys go: the scratch, or a buffer of its own (own).
typedef struct {
    uint8_t *s;
    size_t cap;
    bool own;
} ready_buf_t;

static mp_obj_t *buf_recs(const ready_buf_t *b) {
    return (mp_obj_t *)b->s;
}

static order_key_t *buf_keys(const ready_buf_t *b) {
    return (order_key_t *)(b->s + b->cap * sizeof(mp_obj_t));
}

// Room for cap records in b, keeping the first n records and keys it holds.
static void buf_room(ready_buf_t *b, size_t cap, size_t n) {
    uint8_t *old = b->s;
    size_t had = b->cap;
    bool was_own = b->own;
    if (old == NULL && !scratch_busy) {
        uint8_t *s = MP_STATE_VM(mesh_scratch);
        size_t c = MP_STATE_VM(mesh_scratch_cap);
        if (s != NULL && c >= cap && c / 4 <= cap) {
            b->s = s;
            b->cap = c;
            b->own = false;
            return;
        }
        old = s;
        had = c;
        was_own = false;
        n = 0;
    }
    b->own = scratch_busy;
    b->cap = cap;
    b->s = m_new(uint8_t, scratch_bytes(cap));
    if (old != NULL && n > 0) {
        memcpy(b->s, old, n * sizeof(mp_obj_t));
        memcpy(buf_keys(b), old + had * sizeof(mp_obj_t), n * sizeof(order_key_t));
    }
    if (!b->own) {
        MP_STATE_VM(mesh_scratch) = b->s;
        MP_STATE_VM(mesh_scratch_cap) = cap;
    }
    if (old != NULL && (was_own || !b->own)) {
        m_del(uint8_t, old, scratch_bytes(had));
    }
}

// Done with b: it keeps no record alive.
static void buf_done(ready_buf_t *b, mp_obj_t *sorted, size_t n) {
    memset(sorted, 0, n * sizeof(mp_obj_t));
    if (b->own) {
        m_del(uint8_t, b->s, scratch_bytes(b->cap));
    }
}

// The scan and order of a round: the eligible records of mesh.loci, sorted, in b. Returns
// how many; *sorted points at them (inside b).
static size_t collect(mp_obj_t mesh, mp_int_t rn, mp_float_t age_weight, mp_int_t patience,
                      ready_buf_t *b, mp_obj_t **sorted) {
    mp_obj_t loci = mesh_get(mesh, MP_QSTR_loci);
    mp_obj_t field = mesh_get(mesh, MP_QSTR_field);
    const field_t *f = &modfield_self(field)->f;
    if (!mp_obj_is_type(loci, &mp_type_dict)) {
        mp_raise_TypeError(MP_ERROR_TEXT("ready: mesh.loci is not a dict"));
    }
    mp_map_t *map = mp_obj_dict_get_map(loci);
    uint32_t x = (uint32_t)mp_obj_get_int_truncated(mesh_get(mesh, MP_QSTR_rng));
    b->s = NULL;
    b->cap = 0;
    b->own = false;
    buf_room(b, map->used ? map->used : 1, 0);
    size_t n = 0;
    mp_obj_t live = MP_OBJ_NEW_QSTR(MP_QSTR_live);
    mp_obj_t retired = MP_OBJ_NEW_QSTR(MP_QSTR_retired);
    for (size_t i = 0; i < map->alloc; i++) {
        if (!mp_map_slot_is_filled(map, i)) {
            continue;
        }
        mesh_record_t *r = mesh_record_of(map->table[i].value);
        // The states are qstrs (a str made at run time would be equal to one, not it).
        if (r->state == retired || (!mp_obj_is_qstr(r->state) && mp_obj_equal(r->state, retired))) {
            continue;
        }
        if (r->backoff_until > rn) {
            r->state = MP_OBJ_NEW_QSTR(MP_QSTR_backoff);
            continue;
        }
        r->state = live;
        mp_int_t age = rn - r->last_round;
        if (r->wake != mp_const_none && age < patience) {
            mesh_seen_t *w = &r->seen_wake;
            mp_float_t v = seen_value(mesh, field, f, w, r->wake, mp_const_none, true);
            mp_float_t above = w->kind != MESH_SEEN_PYTHON
                                   ? w->above
                                   : mp_obj_get_float(mp_obj_subscr(
                                         r->wake, MP_OBJ_NEW_QSTR(MP_QSTR_above), MP_OBJ_SENTINEL));
            if (v <= above) {
                continue;
            }
        }
        mp_float_t act = seen_value(mesh, field, f, &r->seen_attend, r->attend, r->pos, false);
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (n == b->cap) {
            // Never past the buffer, even if a Python fallback added Loci meanwhile.
            buf_room(b, 2 * b->cap, n);
        }
        buf_recs(b)[n] = MP_OBJ_FROM_PTR(r);
        order_key_t *k = buf_keys(b) + n;
        k->hi = order_bits(-(act + age_weight * (mp_float_t)age));
        k->lo = (uint64_t)x << 32 | n;
        n++;
    }
    mesh_set(mesh, MP_QSTR_rng, mp_obj_new_int_from_uint(x));
    order_key_t *keys = buf_keys(b), *spare = keys + b->cap;
    order_key_t *done = sort_keys(keys, spare, n);
    // The records in that order, where the keys the sort no longer needs were.
    mp_obj_t *out = (mp_obj_t *)(done == keys ? spare : keys);
    mp_obj_t *recs = buf_recs(b);
    for (size_t i = 0; i < n; i++) {
        out[i] = recs[done[i].lo & 0xffffffffu];
    }
    memset(recs, 0, n * sizeof(mp_obj_t));
    *sorted = out;
    return n;
}

// ready(mesh, rn, age_weight, patience) -> the eligible records in the round's order.
static mp_obj_t mesh_ready(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    ready_buf_t b;
    mp_obj_t *sorted;
    size_t n = collect(args[0], mp_obj_get_int(args[1]), mp_obj_get_float(args[2]),
                       mp_obj_get_int(args[3]), &b, &sorted);
    mp_obj_t out = mp_obj_new_list(n, sorted);
    buf_done(&b, sorted, n);
    return out;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_ready_obj, 4, 4, mesh_ready);

// An int of a budget dict.
static mp_int_t budget_int(mp_obj_t budget, qstr name) {
    mp_obj_t o = mesh_dict_get(budget, name);
    if (o != MP_OBJ_NULL && mp_obj_is_small_int(o)) {
        return MP_OBJ_SMALL_INT_VALUE(o);
    }
    return mp_obj_get_int(mp_obj_subscr(budget, MP_OBJ_NEW_QSTR(name), MP_OBJ_SENTINEL));
}

// A limit, as `_budget.run` reads it (vm/budget/mod/modbudget.c).
static uint64_t limit(mp_obj_t budget, qstr name) {
    mp_int_t v = budget_int(budget, name);
    if (v < 0) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("_budget.run: %s must be >= 0 (0 means no limit), got %d"),
                          qstr_str(name), (int)v);
    }
    return (uint64_t)v;
}

const mesh_limits_t *mesh_limits_of(mesh_record_t *r) {
    mesh_limits_t *l = &r->limits;
    if (!l->known) {
        l->ops = limit(r->budget, MP_QSTR_ops);
        l->cycles = limit(r->budget, MP_QSTR_cycles);
        l->alloc = limit(r->budget, MP_QSTR_alloc);
        l->kept = budget_int(r->budget, MP_QSTR_kept);
        l->known = true;
    }
    return l;
}

// The ctx's tick for a step, and the clock its capability checks use.
static void set_tick(mp_obj_t ctx, mp_obj_t now) {
    mesh_ctx_t *c = MP_OBJ_TO_PTR(ctx);
    c->tick = now;
    c->now = now;
}

// What steps() knows of the mesh between steps. Only the mesh's Python changes it, and
// a Locus's ctx calls reach that Python only through mesh_ctx.c's by_python, which
// counts them; so this is read again only after Python ran.
typedef struct {
    mp_obj_t mesh;
    mp_obj_t now, order;
    mp_obj_t *items;   // the records to step, in order
    size_t len, i;     // how many; the one stepping
    mp_int_t rounds;   // mesh.rounds, the round these steps belong to
    mp_obj_t next_id;  // mesh.next_id
    bool starting;     // mesh.starting is not empty
    mp_int_t pending;  // steps run here, not yet added to mesh.steps
    bool halted;       // mesh.halted was true after a Python call
} round_t;

static void reread(round_t *rd) {
    rd->next_id = mesh_get(rd->mesh, MP_QSTR_next_id);
    rd->starting = mp_obj_is_true(mesh_get(rd->mesh, MP_QSTR_starting));
}

// mesh.steps += the steps run here since the last time, with Python's int arithmetic:
// done before any of the mesh's Python runs, so that it sees the count it would have.
static void count_steps(round_t *rd) {
    if (rd->pending != 0) {
        mp_obj_t by = mp_obj_new_int(rd->pending);
        rd->pending = 0;
        mesh_set(rd->mesh, MP_QSTR_steps,
                 mp_binary_op(MP_BINARY_OP_INPLACE_ADD, mesh_get(rd->mesh, MP_QSTR_steps), by));
    }
}

static void python_call(round_t *rd, qstr name, size_t n, const mp_obj_t *args) {
    count_steps(rd);
    mesh_call(rd->mesh, name, n, args);
    reread(rd);
    rd->halted = mp_obj_is_true(mesh_get(rd->mesh, MP_QSTR_halted));
}

// One step of record r: Mesh._step(r, now), its common case in C.
static void step_one(round_t *rd, mesh_record_t *r) {
    mp_obj_t fn = r->step_fn;
    if (fn == mp_const_none || budget_active() || !mp_obj_is_callable(fn) ||
        !mp_obj_is_type(r->ctx, &mesh_type_Ctx)) {
        mp_obj_t args[2] = { MP_OBJ_FROM_PTR(r), rd->now };
        python_call(rd, MP_QSTR__step, 2, args);
        return;
    }
    set_tick(r->ctx, rd->now);
    r->last_round = rd->rounds;
    const mesh_limits_t *l = mesh_limits_of(r);
    mp_obj_t first_new = rd->next_id;
    struct budget_limits lim = { .ops = l->ops, .cycles = l->cycles, .alloc = l->alloc };
    struct budget_result res;
    size_t calls = mesh_python_calls;
    budget_run(fn, r->ctx, &lim, &res);
    rd->pending++;
    r->steps++;
    r->ops += (mp_int_t)res.ops;
    r->ops_last = (mp_int_t)res.ops;
    r->alloc = (mp_int_t)res.alloc;
    r->cycles = (mp_int_t)res.cycles;
    // What it keeps can have grown by at most what it allocated: measured only when that
    // bound passes its budget (Mesh._kept_over).
    r->kept_bound += (mp_int_t)res.alloc;
    if (calls != mesh_python_calls) {
        reread(rd);
    }
    // Mesh._after_step does nothing in this case; anything else is its business.
    if (res.status == BUDGET_OK && !r->retire_asked && !rd->starting && r->kept_bound <= l->kept &&
        (rd->next_id == first_new || mp_obj_equal(rd->next_id, first_new))) {
        return;
    }
    mp_obj_t args[4] = { MP_OBJ_FROM_PTR(r), MP_OBJ_NEW_SMALL_INT(res.status), res.value,
                         first_new };
    python_call(rd, MP_QSTR__after_step, 4, args);
}

// Runs the steps from rd->i on; returns after the last, or when the mesh halted. An
// exception out of one leaves rd->i at its record.
static void run_steps(round_t *rd) {
    for (; rd->i < rd->len && !rd->halted; rd->i++) {
        mesh_record_t *r = mesh_record_of(rd->items[rd->i]);
        mp_obj_list_append(rd->order, mp_obj_new_int(r->id));
        step_one(rd, r);
    }
}

// Steps rd->items[0..len) in order (see mesh_steps); returns how many ran. An exception
// that is not an Exception (Ctrl-C) goes on out, after `on_leave`.
static mp_int_t run_all(round_t *rd, void (*on_leave)(void *), void *arg) {
    rd->rounds = mp_obj_get_int(mesh_get(rd->mesh, MP_QSTR_rounds));
    reread(rd);
    // One abort point for a run of steps rather than one a step: an exception is rare.
    while (rd->i < rd->len && !rd->halted) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            run_steps(rd);
            nlr_pop();
            break;
        }
        mp_obj_t x = MP_OBJ_FROM_PTR(nlr.ret_val);
        if (!mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(x)),
                                     MP_OBJ_FROM_PTR(&mp_type_Exception))) {
            count_steps(rd);
            if (on_leave != NULL) {
                on_leave(arg);
            }
            nlr_jump(nlr.ret_val);  // KeyboardInterrupt, SystemExit: not the mesh's
        }
        mp_obj_t cargs[2] = { rd->items[rd->i], x };
        rd->i++;
        python_call(rd, MP_QSTR__contain, 2, cargs);
    }
    count_steps(rd);
    return (mp_int_t)rd->i;
}

// steps(mesh, records, now, order) -> how many ran.
static mp_obj_t mesh_steps(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    round_t rd = { .mesh = args[0], .now = args[2], .order = args[3] };
    mp_obj_list_get(args[1], &rd.len, &rd.items);
    return MP_OBJ_NEW_SMALL_INT(run_all(&rd, NULL, NULL));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_steps_obj, 4, 4, mesh_steps);

// The list emptied for n items, its room kept: a round's order fills the last round's
// list in place, where a new list would grow by copies, each a large block to find.
static void empty_for(mp_obj_t list, size_t n) {
    mp_obj_list_t *l = MP_OBJ_TO_PTR(list);
    if (!mp_obj_is_type(list, &mp_type_list)) {
        mp_raise_TypeError(MP_ERROR_TEXT("order must be a list"));
    }
    if (l->alloc < n) {
        l->items = m_renew(mp_obj_t, l->items, l->alloc, n);
        l->alloc = n;
    }
    memset(l->items, 0, l->alloc * sizeof(mp_obj_t));
    l->len = 0;
}

typedef struct {
    ready_buf_t *b;
    mp_obj_t *sorted;
    size_t n;
} held_t;

static void release(void *arg) {
    held_t *h = arg;
    scratch_busy = false;
    buf_done(h->b, h->sorted, h->n);
}

// run_round(mesh, rn, age_weight, patience, limit, now, order) -> steps run: Mesh.round's
// scan, order and steps (ready, then steps of at most ready[:limit] when limit is not 0)
// with no list made on the way. `order`, the last round's list, gets this round's ids.
static mp_obj_t mesh_run_round(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    ready_buf_t b;
    held_t h = { .b = &b };
    h.n = collect(args[0], mp_obj_get_int(args[1]), mp_obj_get_float(args[2]),
                  mp_obj_get_int(args[3]), &b, &h.sorted);
    mp_int_t limit = mp_obj_get_int(args[4]);
    size_t n = h.n;
    if (limit > 0 && (size_t)limit < n) {
        n = (size_t)limit;
    } else if (limit < 0) {  // Python's ready[:limit]: all but the last -limit
        size_t drop = (size_t)-limit;
        n = drop < n ? n - drop : 0;
    }
    empty_for(args[6], n);
    round_t rd = { .mesh = args[0], .now = args[5], .order = args[6], .items = h.sorted, .len = n };
    scratch_busy = !b.own;
    mp_int_t ran = run_all(&rd, release, &h);
    release(&h);
    return MP_OBJ_NEW_SMALL_INT(ran);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(mesh_run_round_obj, 7, 7, mesh_run_round);

// Soft reset (vm/vm_hooks.h): the new heap starts where the old one was, so nothing may
// point into it.
void mesh_deinit(void) {
    MP_STATE_VM(mesh_scratch) = NULL;
    MP_STATE_VM(mesh_scratch_cap) = 0;
    scratch_busy = false;
    mesh_manifest_deinit();
}

// set_tick(ctx, now): the tick a step outside steps() runs in (Mesh._step).
static mp_obj_t mesh_set_tick(mp_obj_t ctx, mp_obj_t now) {
    if (!mp_obj_is_type(ctx, &mesh_type_Ctx)) {
        mp_raise_TypeError(MP_ERROR_TEXT("not a Locus ctx"));
    }
    set_tick(ctx, now);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(mesh_set_tick_obj, mesh_set_tick);

static const mp_rom_map_elem_t mesh_module_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__mesh) },
    { MP_ROM_QSTR(MP_QSTR_Record), MP_ROM_PTR(&mesh_type_Record) },
    { MP_ROM_QSTR(MP_QSTR_Ctx), MP_ROM_PTR(&mesh_type_Ctx) },
    { MP_ROM_QSTR(MP_QSTR_ready), MP_ROM_PTR(&mesh_ready_obj) },
    { MP_ROM_QSTR(MP_QSTR_steps), MP_ROM_PTR(&mesh_steps_obj) },
    { MP_ROM_QSTR(MP_QSTR_run_round), MP_ROM_PTR(&mesh_run_round_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_tick), MP_ROM_PTR(&mesh_set_tick_obj) },
    { MP_ROM_QSTR(MP_QSTR_manifest), MP_ROM_PTR(&mesh_manifest_obj) },
    { MP_ROM_QSTR(MP_QSTR_grant), MP_ROM_PTR(&mesh_grant_obj) },
    { MP_ROM_QSTR(MP_QSTR_hold), MP_ROM_PTR(&mesh_hold_obj) },
    { MP_ROM_QSTR(MP_QSTR_enter), MP_ROM_PTR(&mesh_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR_start), MP_ROM_PTR(&mesh_start_obj) },
    { MP_ROM_QSTR(MP_QSTR_spawn), MP_ROM_PTR(&mesh_spawn_obj) },
};
static MP_DEFINE_CONST_DICT(mesh_module_globals, mesh_module_table);

const mp_obj_module_t mp_module_mesh = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&mesh_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR__mesh, mp_module_mesh);
