// SPDX-License-Identifier: MIT
// `_rw`: the optimiser's C interface (vm/opt/README.md). The rewriter on live functions
// (vm/rewrite): plan(fn, kinds), apply(fn, edits), code(fn), start(fn), undo(fn),
// misses(fn), misses_reset(), aggressive(flag), stats(); call recording: record/recorded;
// native promotion: promote/demote/twin/sources/machine_code; native code's heat and
// the second tier: native_heat/native_span/native_file/tier; float sites' type feedback:
// float_mode/float_forget/float_stats; watch/unwatch/raised;
// closures: fun_of, and their free variables' cells: cell/cell_get.
#include <string.h>

#include "py/bc.h"
#include "py/gc.h"
#include "py/nativeglue.h"
#include "py/objfun.h"
#include "py/runtime.h"

#include "rw_aggr.h"
#include "rw_exec.h"
#include "rw_float.h"
#include "rw_inline.h"
#include "rw_native_heat.h"
#include "rw_own.h"
#include "vrf_config.h"
#include "rw_plan.h"
#include "rw_promote.h"
#include "rw_record.h"
#include "rw_source.h"
#include "rw_stats.h"
#include "rw_watch.h"

// Layouts private to py/objclosure.c and py/objboundmeth.c, restated (1.25.0).
typedef struct {
    mp_obj_base_t base;
    mp_obj_t fun;
    size_t n_closed;
    mp_obj_t closed[];
} rw_closure_t;
typedef struct {
    mp_obj_base_t base;
    mp_obj_t meth;
    mp_obj_t self;
} rw_bound_meth_t;
extern const mp_obj_type_t mp_type_closure;

// The bytecode function behind fn (bound methods and closures unwrapped).
static mp_obj_fun_bc_t *get_fun(mp_obj_t fn) {
    if (mp_obj_is_type(fn, &mp_type_bound_meth)) {
        fn = ((rw_bound_meth_t *)MP_OBJ_TO_PTR(fn))->meth;
    }
    if (mp_obj_is_type(fn, &mp_type_closure)) {
        fn = ((rw_closure_t *)MP_OBJ_TO_PTR(fn))->fun;
    }
    // A promoted function (rw_promote.c) still owns its bytecode: old frames may run it.
    if (!mp_obj_is_type(fn, &mp_type_fun_bc) && !mp_obj_is_type(fn, &mp_type_gen_wrap) &&
        !mp_obj_is_type(fn, &rw_type_fun_promoted) && !mp_obj_is_type(fn, &rw_type_gen_promoted)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: not a bytecode function"));
    }
    return MP_OBJ_TO_PTR(fn);
}

// fn's opcodes, or ValueError for code outside the GC heap (frozen code is in the
// image's read-only memory; heap code is its own GC block, so gc_nbytes sizes it).
static rw_code_t get_code(mp_obj_t fn) {
    rw_code_t c;
    if (!rw_code_of(get_fun(fn)->bytecode, &c)) {
        mp_raise_ValueError(
            MP_ERROR_TEXT("_rw: code not in the GC heap (frozen code is read-only)"));
    }
    return c;
}

// kinds: an int bit mask (bit = index in _rw.KINDS) or an iterable of kind names.
static uint32_t get_kinds(mp_obj_t k) {
    if (mp_obj_is_int(k)) {
        mp_int_t v = mp_obj_get_int(k);
        if (v < 0 || (uint32_t)v & ~rw_kinds_all) {
            mp_raise_ValueError(MP_ERROR_TEXT("_rw: kinds has bits of no kind the VM runs"));
        }
        return (uint32_t)v;
    }
    uint32_t mask = 0;
    mp_obj_t it = mp_getiter(k, NULL), item;
    while ((item = mp_iternext(it)) != MP_OBJ_STOP_ITERATION) {
        const char *name = mp_obj_str_get_str(item);
        int kind = 0;
        while (rw_kind_name(kind) && strcmp(rw_kind_name(kind), name) != 0) {
            kind++;
        }
        if (!rw_kind_name(kind) || !(rw_kinds_all & RW_K(kind))) {
            mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("_rw: unknown kind '%s'"), name);
        }
        mask |= RW_K(kind);
    }
    return mask;
}

// Plans into a fresh heap array (*n edits); the caller frees it with m_del.
static rw_edit_t *plan_heap(const rw_code_t *c, uint32_t kinds, size_t *n) {
    *n = rw_plan(c->code, c->len, NULL, 0, kinds);
    rw_edit_t *e = m_new(rw_edit_t, *n ? *n : 1);
    rw_plan(c->code, c->len, e, *n, kinds);
    return e;
}

// _rw.plan(fn, kinds=ALL) -> [(offset, old, new, kind_name)], offsets from the first opcode.
static mp_obj_t rw_plan_fn(size_t n_args, const mp_obj_t *args) {
    rw_code_t c = get_code(args[0]);
    uint32_t kinds = n_args > 1 ? get_kinds(args[1]) : rw_kinds_all;
    size_t n;
    rw_edit_t *e = plan_heap(&c, kinds, &n);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < n; i++) {
        const char *name = rw_kind_name(e[i].kind);
        mp_obj_t t[4] = { MP_OBJ_NEW_SMALL_INT(e[i].offset), MP_OBJ_NEW_SMALL_INT(e[i].old_byte),
                          MP_OBJ_NEW_SMALL_INT(e[i].new_byte), mp_obj_new_str(name, strlen(name)) };
        mp_obj_list_append(list, mp_obj_new_tuple(4, t));
    }
    m_del(rw_edit_t, e, n ? n : 1);
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(rw_plan_obj, 1, 2, rw_plan_fn);

// _rw.apply(fn, edits) -> bytes written. Every edit must be one the planner gives for
// fn's code now with the kinds of the edits (so no byte can be written that the
// planner would not, whatever Python passes); all are checked, then all are written in
// this one C call, with no bytecode running in between.
static mp_obj_t rw_apply_fn(mp_obj_t fn, mp_obj_t edits_in) {
    rw_code_t c = get_code(fn);
    size_t n_in;
    mp_obj_t *items;
    mp_obj_get_array(edits_in, &n_in, &items);
    rw_edit_t *want = m_new(rw_edit_t, n_in ? n_in : 1);
    uint32_t kinds = 0;
    for (size_t i = 0; i < n_in; i++) {
        size_t len;
        mp_obj_t *f;
        mp_obj_get_array(items[i], &len, &f);
        if (len < 3) {
            mp_raise_TypeError(MP_ERROR_TEXT("_rw.apply: an edit is (offset, old, new[, kind])"));
        }
        mp_int_t off = mp_obj_get_int(f[0]), old = mp_obj_get_int(f[1]), nb = mp_obj_get_int(f[2]);
        int kind = nb >= 0 && nb < 256 ? rw_kind_of((uint8_t)nb) : -1;
        if (off < 0 || (size_t)off >= c.len || old < 0 || old > 255 || kind < 0) {
            mp_raise_msg_varg(&mp_type_ValueError,
                              MP_ERROR_TEXT("_rw.apply: edit %d is not a rewrite of this code"),
                              (int)i);
        }
        want[i] = (rw_edit_t){ (uint32_t)off, (uint8_t)old, (uint8_t)nb, (uint8_t)kind };
        kinds |= RW_K(kind);
    }
    size_t n_plan;
    rw_edit_t *plan = plan_heap(&c, kinds, &n_plan);
    for (size_t i = 0; i < n_in; i++) {
        size_t j = 0;
        while (j < n_plan && plan[j].offset != want[i].offset) {
            j++;
        }
        if (j == n_plan || plan[j].old_byte != want[i].old_byte ||
            plan[j].new_byte != want[i].new_byte) {
            mp_raise_msg_varg(
                &mp_type_ValueError,
                MP_ERROR_TEXT("_rw.apply: edit %d at offset %d is not planned for this code now"),
                (int)i, (int)want[i].offset);
        }
    }
    size_t bad = rw_apply(c.code, c.len, want, n_in);
    m_del(rw_edit_t, plan, n_plan ? n_plan : 1);
    m_del(rw_edit_t, want, n_in ? n_in : 1);
    if (bad) {
        // Planned from these very bytes a moment ago, with no bytecode run since.
        mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("_rw.apply: code changed"));
    }
    return MP_OBJ_NEW_SMALL_INT(n_in);
}
static MP_DEFINE_CONST_FUN_OBJ_2(rw_apply_obj, rw_apply_fn);

// _rw.code(fn) -> bytes of the opcode area now (first opcode to the last instruction).
static mp_obj_t rw_code_fn(mp_obj_t fn) {
    rw_code_t c = get_code(fn);
    return mp_obj_new_bytes(c.code, rw_code_end(c.code, c.len));
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_code_obj, rw_code_fn);

// _rw.undo(fn) -> bytes changed: the canonical original restored in place.
static mp_obj_t rw_undo_fn(mp_obj_t fn) {
    rw_code_t c = get_code(fn);
    long n = rw_undo(c.code, c.len, c.code);
    if (n < 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw.undo: a rewrite head without its tail"));
    }
    return MP_OBJ_NEW_SMALL_INT(n);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_undo_obj, rw_undo_fn);

// _rw.misses(fn) -> guard misses recorded at heads in fn's opcodes.
static mp_obj_t rw_misses_fn(mp_obj_t fn) {
    rw_code_t c = get_code(fn);
    return mp_obj_new_int_from_uint(rw_misses_between(c.code, c.code + c.len));
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_misses_obj, rw_misses_fn);

static mp_obj_t rw_misses_reset_fn(void) {
    rw_misses_reset();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(rw_misses_reset_obj, rw_misses_reset_fn);

// _rw.aggressive([flag]) -> whether it was on. On: every heap function is rewritten
// (all kinds, verified first) at its first call, by the VM's frame-enter hook.
static mp_obj_t rw_aggressive_fn(size_t n_args, const mp_obj_t *args) {
    mp_obj_t was = mp_obj_new_bool(rw_enter_flags & RW_ENTER_AGGRESSIVE);
    if (n_args) {
        rw_aggr_set(mp_obj_is_true(args[0]));
    }
    return was;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(rw_aggressive_obj, 0, 1, rw_aggressive_fn);

// _rw.code_id(fn) -> where fn's code is: equal for two functions made from one def by
// two exec()s of the same compiled code (every Locus of one source, loci/python/opt_locus.py).
static mp_obj_t rw_code_id_fn(mp_obj_t fn) {
    return mp_obj_new_int_from_uint((uintptr_t)get_code(fn).code);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_code_id_obj, rw_code_id_fn);

// The most a frozen function's opcodes may take (the verifier's bound on any code).
#define RW_OWN_MAX (VRF_MAX_CODE)

// _rw.own(fn) -> True when fn ran code it does not own, and now runs a heap copy of it
// (rw_own.c); False when its code was a heap block of its own already. Code not owned:
// frozen code, in the image's read-only memory, and code a .mpy file left in the buffer
// it was read from (one mounted with vfs.VfsRom, say). ValueError when the code does
// not decode to a closed prefix (nothing changes then).
static mp_obj_t rw_own_fn(mp_obj_t fn) {
    mp_obj_fun_bc_t *f = get_fun(fn);
    if (gc_nbytes(f->bytecode) != 0) {
        return mp_const_false;
    }
    if (gc_nbytes(f) == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw.own: the function object itself is frozen"));
    }
    const byte *ip = f->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    size_t off = (size_t)(ip - f->bytecode) + n_info + n_cell;
    size_t len = rw_reachable_len(f->bytecode + off, RW_OWN_MAX);
    if (len == 0) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw.own: frozen code with no closed end"));
    }
    // A zero byte after the last instruction: where rw_code_end stops on heap code.
    byte *copy = m_new(byte, off + len + 1);
    memcpy(copy, f->bytecode, off + len);
    memset(copy + off + len, 0, gc_nbytes(copy) - off - len);
    f->bytecode = copy;
    return mp_const_true;
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_own_obj, rw_own_fn);

// _rw.frozen(fn) -> whether fn's bytecode is the image's (frozen): outside the GC heap.
static mp_obj_t rw_frozen_fn(mp_obj_t fn) {
    const byte *bc = get_fun(fn)->bytecode;
    return mp_obj_new_bool(bc < MP_STATE_MEM(area).gc_pool_start ||
                           bc >= MP_STATE_MEM(area).gc_pool_end);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_frozen_obj, rw_frozen_fn);

// _rw.start(fn) -> offset of fn's first opcode in its fun_data (vm.bytecode(fn)), where
// the plan's offsets start.
static mp_obj_t rw_start_fn(mp_obj_t fn) {
    return MP_OBJ_NEW_SMALL_INT(get_code(fn).off);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_start_obj, rw_start_fn);

// A native function (@micropython.native), also while the optimiser has changed its type.
static bool is_native(mp_obj_t fn) {
    return mp_obj_is_exact_type(fn, &mp_type_fun_native) ||
           mp_obj_is_exact_type(fn, &rw_type_native_recorded) ||
           mp_obj_is_exact_type(fn, &rw_type_native_promoted);
}

// _rw.record(fn, n): record the positional arguments of fn's next n calls (n = 0 stops);
// _rw.recorded(fn) -> [(args...), ...] so far. One function at a time.

static mp_obj_t rw_record_fn(mp_obj_t fn, mp_obj_t n_in) {
    mp_int_t n = mp_obj_get_int(n_in);
    if (n < 0 || n > 1024) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw.record: n must be 0..1024"));
    }
    if (mp_obj_is_exact_type(fn, &mp_type_fun_native) ||
        mp_obj_is_exact_type(fn, &rw_type_native_recorded)) {
        rw_record_start_native(fn, (size_t)n);
    } else {
        const uint8_t *bc = get_fun(fn)->bytecode;
        rw_record_start(bc, bc, (size_t)n);
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(rw_record_obj, rw_record_fn);

static mp_obj_t rw_recorded_fn(mp_obj_t fn) {
    if (is_native(fn)) {
        return rw_record_calls(((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(fn))->bytecode);
    }
    return rw_record_calls(get_fun(fn)->bytecode);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_recorded_obj, rw_recorded_fn);

static void put(mp_obj_t d, const char *k, mp_uint_t v) {
    mp_obj_dict_store(d, mp_obj_new_str(k, strlen(k)), mp_obj_new_int_from_uint(v));
}

// _rw.stats() -> the aggressive mode's counters since boot: functions seen, rewritten,
// refused (by the verifier or too big), frozen code copied to be rewritten, left alone
// (frozen with the pool full, nothing to rewrite), edits by kind, and the last
// refusal's message.
static mp_obj_t rw_stats_fn(void) {
    const rw_aggr_stats_t *s = rw_aggr_stats();
    mp_obj_t d = mp_obj_new_dict(0);
    put(d, "seen", s->seen);
    put(d, "rewritten", s->rewritten);
    put(d, "refused", s->refused);
    put(d, "too_big", s->too_big);
    put(d, "frozen", s->frozen);
    put(d, "copied", s->copied);
    put(d, "unchanged", s->unchanged);
    mp_obj_t by = mp_obj_new_dict(0);
    for (int k = 0; k < RW_KIND_N; k++) {
        put(by, rw_kind_name(k), s->edits[k]);
    }
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_edits), by);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_last_refusal),
                      mp_obj_new_str(s->last_refusal, strlen(s->last_refusal)));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(rw_stats_obj, rw_stats_fn);

// _rw.KINDS: the kind names, bit i of a kinds mask is KINDS[i] (rw_kind_name's order;
// a host test checks the two agree); _rw.ALL: the mask of every kind the VM runs.
static const mp_rom_obj_tuple_t rw_kinds_tuple = { { &mp_type_tuple },
                                                   RW_KIND_N,
                                                   {
                                                       MP_ROM_QSTR(MP_QSTR_cmpj),
                                                       MP_ROM_QSTR(MP_QSTR_arith_si),
                                                       MP_ROM_QSTR(MP_QSTR_subscr_si),
                                                       MP_ROM_QSTR(MP_QSTR_forrange),
                                                       MP_ROM_QSTR(MP_QSTR_incr_fast),
                                                       MP_ROM_QSTR(MP_QSTR_return_none),
                                                       MP_ROM_QSTR(MP_QSTR_cache),
                                                   } };

// Native promotion (rw_promote.c, rw_source.c, rw_exec.c): promote(fn, twin), demote(fn) -> twin or None,
// twin(fn) -> twin or None, sources() -> [(name, bytes)], machine_code(twin) -> bytes.
static mp_obj_t rw_promote_fn(mp_obj_t fn, mp_obj_t twin) {
    rw_promote(fn, twin);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_2(rw_promote_obj, rw_promote_fn);
static MP_DEFINE_CONST_FUN_OBJ_1(rw_demote_obj, rw_demote);
static MP_DEFINE_CONST_FUN_OBJ_1(rw_twin_obj, rw_twin);
static MP_DEFINE_CONST_FUN_OBJ_0(rw_sources_obj, rw_src_list);

static mp_obj_t rw_machine_code_fn(mp_obj_t twin) {
    if (!is_native(twin) && !mp_obj_is_exact_type(twin, &mp_type_native_gen_wrap)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: not a native function"));
    }
    size_t len;
    const void *at = rw_exec_block(((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(twin))->bytecode, &len);
    if (at == NULL) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw: the block of this native code is not known"));
    }
    return mp_obj_new_bytes(at, len);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_machine_code_obj, rw_machine_code_fn);

// The heat of native code (rw_native_glue.c): native_heat() -> [(address, back edges)]
// of the back-edge sites counted, native_heat(True) empties the table after reading;
// native_span(fn) -> (start, length) of native function fn's machine code, or None when
// its block is no longer among those remembered (rw_exec.c); native_file(fn) -> the file
// name it was compiled from; source_of(fn) -> the kept text it was compiled from.
static mp_obj_t rw_native_heat_fn(size_t n_args, const mp_obj_t *args) {
    mp_obj_t out = mp_obj_new_list(0, NULL);
    for (size_t i = 0; i < RW_HEAT_SLOTS; i++) {
        if (rw_native_heat[i].at != 0 && rw_native_heat[i].n != 0) {
            mp_obj_t pair[2] = { mp_obj_new_int_from_uint(rw_native_heat[i].at),
                                 mp_obj_new_int_from_uint(rw_native_heat[i].n) };
            mp_obj_list_append(out, mp_obj_new_tuple(2, pair));
        }
    }
    if (n_args > 0 && mp_obj_is_true(args[0])) {
        rw_native_heat_reset();
    }
    return out;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(rw_native_heat_obj, 0, 1, rw_native_heat_fn);

static const mp_obj_fun_bc_t *native_fun(mp_obj_t fn) {
    if (!is_native(fn)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw: not a native function"));
    }
    return MP_OBJ_TO_PTR(fn);
}

static mp_obj_t rw_native_span_fn(mp_obj_t fn) {
    size_t len;
    const void *at = rw_exec_block(native_fun(fn)->bytecode, &len);
    if (at == NULL) {
        return mp_const_none;
    }
    mp_obj_t pair[2] = { mp_obj_new_int_from_uint((uintptr_t)at), mp_obj_new_int_from_uint(len) };
    return mp_obj_new_tuple(2, pair);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_native_span_obj, rw_native_span_fn);

static mp_obj_t rw_native_file_fn(mp_obj_t fn) {
    return MP_OBJ_NEW_QSTR(native_fun(fn)->context->constants.qstr_table[0]);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_native_file_obj, rw_native_file_fn);

// source_of(fn) -> (name, bytes) of the kept text native function fn was compiled from,
// or None (not kept, or no longer).
static mp_obj_t rw_source_of_fn(mp_obj_t fn) {
    size_t len;
    uint32_t src = 0;
    if (rw_exec_block_src(native_fun(fn)->bytecode, &len, &src) == NULL) {
        return mp_const_none;
    }
    return rw_src_by_serial(src);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_source_of_obj, rw_source_of_fn);

// tier(flag): compile with direct calls (vm/patches/0021) while set: the optimiser sets
// it around compiling a twin, and clears it in a finally. Returns the previous setting.
static mp_obj_t rw_tier_fn(mp_obj_t flag) {
    bool was = mp_native_direct_calls;
    bool on = mp_obj_is_true(flag);
    if (on) {
        rw_native_tier_init();
    }
    mp_native_direct_calls = on;
    return mp_obj_new_bool(was);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_tier_obj, rw_tier_fn);

// count_ops(flag): compile twins that count a budget's ops as the VM does (vm/patches/0023)
// while set; the optimiser sets it around compiling a twin of Locus code. Returns the
// previous setting.
static mp_obj_t rw_count_ops_fn(mp_obj_t flag) {
    bool was = mp_native_count_ops;
    mp_native_count_ops = mp_obj_is_true(flag);
    return mp_obj_new_bool(was);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_count_ops_obj, rw_count_ops_fn);

#ifdef MP_NATIVE_FLOAT_ALL
// float_mode(mode): how native code compiled from now on treats float sites
// (vm/patches/0029): 0 not at all, 1 probe them, 2 give the fast path where the probes'
// notes say, 3 give it everywhere, guarded as floats. Returns the previous mode.
static mp_obj_t rw_float_mode_fn(mp_obj_t mode) {
    mp_int_t m = mp_obj_get_int(mode);
    if (m < MP_NATIVE_FLOAT_OFF || m > MP_NATIVE_FLOAT_ALL) {
        mp_raise_ValueError(MP_ERROR_TEXT("_rw.float_mode: 0 to 3"));
    }
    mp_int_t was = mp_native_float_mode;
    mp_native_float_mode = (uint8_t)m;
    return MP_OBJ_NEW_SMALL_INT(was);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_float_mode_obj, rw_float_mode_fn);

// float_forget(): clears the probes' notes.
static mp_obj_t rw_float_forget_fn(void) {
    rw_float_forget();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(rw_float_forget_obj, rw_float_forget_fn);

// float_stats() -> (float sites compiled since boot, of them with a fast path, sites the
// probes' notes say ran, fast paths that store a local unboxed).
static mp_obj_t rw_float_stats_fn(void) {
    mp_obj_t t[4] = {
        mp_obj_new_int_from_uint(mp_native_float_sites),
        mp_obj_new_int_from_uint(mp_native_float_made),
        MP_OBJ_NEW_SMALL_INT(rw_float_noted()),
        mp_obj_new_int_from_uint(mp_native_float_unboxed),
    };
    return mp_obj_new_tuple(4, t);
}
static MP_DEFINE_CONST_FUN_OBJ_0(rw_float_stats_obj, rw_float_stats_fn);
#endif

// rebind(fn, globals) -> a copy of native function fn whose globals are `globals`: the
// same machine code, constants and defaults (loci/python/opt_locus.py gives each Locus
// a twin of its step bound to its own namespace).
static mp_obj_t rw_rebind_fn(mp_obj_t fn, mp_obj_t globals) {
    if (!mp_obj_is_exact_type(fn, &mp_type_fun_native) || !mp_obj_is_type(globals, &mp_type_dict)) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw.rebind: a native function and a dict"));
    }
    const mp_obj_fun_bc_t *f = MP_OBJ_TO_PTR(fn);
    size_t n = gc_nbytes(f);
    mp_obj_fun_bc_t *g = m_malloc(n);
    memcpy(g, f, n);
    mp_module_context_t *c = m_new_obj(mp_module_context_t);
    *c = *f->context;
    c->module.globals = MP_OBJ_TO_PTR(globals);
    g->context = c;
    return MP_OBJ_FROM_PTR(g);
}
static MP_DEFINE_CONST_FUN_OBJ_2(rw_rebind_obj, rw_rebind_fn);

// cell(value) -> a new cell holding value; cell_get(c) -> what cell c holds. A closure's
// bytecode function takes its free variables as cells ahead of its arguments: the
// equivalence gate replays its recorded calls on new cells holding copies
// (vm/opt/_values.py), so the replay never writes the live closure's variables.
static const mp_obj_type_t *cell_type(void) {
    static const mp_obj_type_t *t;
    if (t == NULL) {
        t = mp_obj_get_type(mp_obj_new_cell(mp_const_none));
    }
    return t;
}
static mp_obj_t rw_cell_fn(mp_obj_t value) {
    return mp_obj_new_cell(value);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_cell_obj, rw_cell_fn);
static mp_obj_t rw_cell_get_fn(mp_obj_t c) {
    if (mp_obj_get_type(c) != cell_type()) {
        mp_raise_TypeError(MP_ERROR_TEXT("_rw.cell_get: not a cell"));
    }
    return mp_obj_cell_get(c);
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_cell_get_obj, rw_cell_get_fn);
// fun_of(fn) -> the function a closure (or bound method) calls: for bytecode, the function
// the profiler counts and the optimiser gates; for a closure made by native code, the
// native function (a closure's twin, vm/opt/_source.py).
static mp_obj_t rw_fun_of_fn(mp_obj_t fn) {
    if (mp_obj_is_type(fn, &mp_type_closure)) {
        mp_obj_t f = ((rw_closure_t *)MP_OBJ_TO_PTR(fn))->fun;
        if (mp_obj_is_type(f, &mp_type_fun_native)) {
            return f;
        }
    }
    return MP_OBJ_FROM_PTR(get_fun(fn));
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_fun_of_obj, rw_fun_of_fn);

// watch(fn, types): note the first exception type not in `types` escaping a call of fn
// (rw_watch.c); False when the table is full. unwatch(fn). raised(fn): that type, or None.
static mp_obj_t rw_watch_fn(mp_obj_t fn, mp_obj_t types) {
    mp_obj_t allowed = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_tuple), types);
    return mp_obj_new_bool(rw_watch(fn, allowed));
}
static MP_DEFINE_CONST_FUN_OBJ_2(rw_watch_obj, rw_watch_fn);
static mp_obj_t rw_unwatch_fn(mp_obj_t fn) {
    rw_unwatch(fn);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(rw_unwatch_obj, rw_unwatch_fn);
static MP_DEFINE_CONST_FUN_OBJ_1(rw_raised_obj, rw_watch_seen);

static const mp_rom_map_elem_t rw_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR__rw) },
    { MP_ROM_QSTR(MP_QSTR_KINDS), MP_ROM_PTR(&rw_kinds_tuple) },
    { MP_ROM_QSTR(MP_QSTR_ALL), MP_ROM_INT(RW_KINDS_ALL) },
    { MP_ROM_QSTR(MP_QSTR_plan), MP_ROM_PTR(&rw_plan_obj) },
    { MP_ROM_QSTR(MP_QSTR_apply), MP_ROM_PTR(&rw_apply_obj) },
    { MP_ROM_QSTR(MP_QSTR_code), MP_ROM_PTR(&rw_code_obj) },
    { MP_ROM_QSTR(MP_QSTR_undo), MP_ROM_PTR(&rw_undo_obj) },
    { MP_ROM_QSTR(MP_QSTR_misses), MP_ROM_PTR(&rw_misses_obj) },
    { MP_ROM_QSTR(MP_QSTR_misses_reset), MP_ROM_PTR(&rw_misses_reset_obj) },
    { MP_ROM_QSTR(MP_QSTR_aggressive), MP_ROM_PTR(&rw_aggressive_obj) },
    { MP_ROM_QSTR(MP_QSTR_stats), MP_ROM_PTR(&rw_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_start), MP_ROM_PTR(&rw_start_obj) },
    { MP_ROM_QSTR(MP_QSTR_code_id), MP_ROM_PTR(&rw_code_id_obj) },
    { MP_ROM_QSTR(MP_QSTR_own), MP_ROM_PTR(&rw_own_obj) },
    { MP_ROM_QSTR(MP_QSTR_frozen), MP_ROM_PTR(&rw_frozen_obj) },
    { MP_ROM_QSTR(MP_QSTR_record), MP_ROM_PTR(&rw_record_obj) },
    { MP_ROM_QSTR(MP_QSTR_recorded), MP_ROM_PTR(&rw_recorded_obj) },
    { MP_ROM_QSTR(MP_QSTR_promote), MP_ROM_PTR(&rw_promote_obj) },
    { MP_ROM_QSTR(MP_QSTR_demote), MP_ROM_PTR(&rw_demote_obj) },
    { MP_ROM_QSTR(MP_QSTR_twin), MP_ROM_PTR(&rw_twin_obj) },
    { MP_ROM_QSTR(MP_QSTR_sources), MP_ROM_PTR(&rw_sources_obj) },
    { MP_ROM_QSTR(MP_QSTR_machine_code), MP_ROM_PTR(&rw_machine_code_obj) },
    { MP_ROM_QSTR(MP_QSTR_native_heat), MP_ROM_PTR(&rw_native_heat_obj) },
    { MP_ROM_QSTR(MP_QSTR_native_span), MP_ROM_PTR(&rw_native_span_obj) },
    { MP_ROM_QSTR(MP_QSTR_native_file), MP_ROM_PTR(&rw_native_file_obj) },
    { MP_ROM_QSTR(MP_QSTR_source_of), MP_ROM_PTR(&rw_source_of_obj) },
    { MP_ROM_QSTR(MP_QSTR_tier), MP_ROM_PTR(&rw_tier_obj) },
#ifdef MP_NATIVE_FLOAT_ALL
    { MP_ROM_QSTR(MP_QSTR_float_mode), MP_ROM_PTR(&rw_float_mode_obj) },
    { MP_ROM_QSTR(MP_QSTR_float_forget), MP_ROM_PTR(&rw_float_forget_obj) },
    { MP_ROM_QSTR(MP_QSTR_float_stats), MP_ROM_PTR(&rw_float_stats_obj) },
    { MP_ROM_QSTR(MP_QSTR_inline), MP_ROM_PTR(&rw_inline_obj) },
    { MP_ROM_QSTR(MP_QSTR_inline_stats), MP_ROM_PTR(&rw_inline_stats_obj) },
#endif
    { MP_ROM_QSTR(MP_QSTR_count_ops), MP_ROM_PTR(&rw_count_ops_obj) },
    { MP_ROM_QSTR(MP_QSTR_rebind), MP_ROM_PTR(&rw_rebind_obj) },
    { MP_ROM_QSTR(MP_QSTR_cell), MP_ROM_PTR(&rw_cell_obj) },
    { MP_ROM_QSTR(MP_QSTR_cell_get), MP_ROM_PTR(&rw_cell_get_obj) },
    { MP_ROM_QSTR(MP_QSTR_fun_of), MP_ROM_PTR(&rw_fun_of_obj) },
    { MP_ROM_QSTR(MP_QSTR_watch), MP_ROM_PTR(&rw_watch_obj) },
    { MP_ROM_QSTR(MP_QSTR_unwatch), MP_ROM_PTR(&rw_unwatch_obj) },
    { MP_ROM_QSTR(MP_QSTR_raised), MP_ROM_PTR(&rw_raised_obj) },
};
static MP_DEFINE_CONST_DICT(rw_globals, rw_globals_table);

const mp_obj_module_t rw_user_cmodule = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&rw_globals,
};

MP_REGISTER_MODULE(MP_QSTR__rw, rw_user_cmodule);
