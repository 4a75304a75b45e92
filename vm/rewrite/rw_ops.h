// SPDX-License-Identifier: MIT
// Bodies of the rewritten opcodes (their patterns: rw_opcodes.h; the table: README.md),
// included by py/vm.c inside mp_execute_bytecode's dispatch as MICROPY_VM_EXTRA_OPCODES_H
// (vm/patches/0007, vm/vm_hooks.h).
// Each fast path is the guarded, fused form of its pattern; each slow path calls rw_miss
// and then does exactly what the original head instruction does, continuing at the next
// (original) instruction, so tracebacks and the tail's own behaviour are unchanged.
//
// We are at block scope here: the headers below hold only macros, typedefs, prototypes
// and static asserts, which C allows there (vm.c includes nothing after this function).
// Written as labels inside py/vm.c's switch and laid out as the VM's own opcodes are,
// so the formatter leaves the rest of this file alone:
// clang-format off
#include "py/smallint.h"
#include "py/objlist.h"
#include "py/objtuple.h"
#include "rw_stats.h"
#include "rw_cache.h"
#include "rw_opcodes.h"

// The undo map in rw_opcodes.h names the binary ops by number; hold 1.25.0 to them.
_Static_assert(MP_BINARY_OP_LESS == 0 && MP_BINARY_OP_MORE == 1 && MP_BINARY_OP_EQUAL == 2
    && MP_BINARY_OP_LESS_EQUAL == 3 && MP_BINARY_OP_MORE_EQUAL == 4
    && MP_BINARY_OP_NOT_EQUAL == 5, "rw: compare ops");
_Static_assert(MP_BINARY_OP_INPLACE_ADD == 14 && MP_BINARY_OP_INPLACE_SUBTRACT == 15
    && MP_BINARY_OP_OR == 22 && MP_BINARY_OP_XOR == 23
    && MP_BINARY_OP_AND == 24 && MP_BINARY_OP_LSHIFT == 25 && MP_BINARY_OP_RSHIFT == 26
    && MP_BINARY_OP_ADD == 27 && MP_BINARY_OP_SUBTRACT == 28 && MP_BINARY_OP_MULTIPLY == 29
    && MP_BINARY_OP_FLOOR_DIVIDE == 31 && MP_BINARY_OP_MODULO == 33, "rw: arithmetic ops");
_Static_assert(MP_BC_BINARY_OP_MULTI == LOCIOS_BC_ORIG_BINARY_OP
    && MP_BC_POP_JUMP_IF_TRUE == LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE
    && MP_BC_LOAD_FAST_MULTI == LOCIOS_BC_ORIG_LOAD_FAST_MULTI
    && MP_BC_STORE_FAST_MULTI == LOCIOS_BC_ORIG_STORE_FAST_MULTI
    && MP_BC_LOAD_CONST_SMALL_INT_MULTI == LOCIOS_BC_ORIG_SMALL_INT_MULTI
    && MP_BC_LOAD_CONST_SMALL_INT_MULTI_EXCESS == LOCIOS_BC_ORIG_SMALL_INT_EXCESS
    && MP_BC_DUP_TOP_TWO == LOCIOS_BC_ORIG_DUP_TOP_TWO && MP_BC_LOAD_SUBSCR == LOCIOS_BC_ORIG_LOAD_SUBSCR
    && MP_BC_STORE_SUBSCR == LOCIOS_BC_ORIG_STORE_SUBSCR
    && MP_BC_LOAD_CONST_NONE == LOCIOS_BC_ORIG_LOAD_CONST_NONE, "rw: original opcodes");

// In every body ip is one past the head byte (the dispatch consumed it) and, with this
// port's SELECTIVE_EXC_IP = 0, code_state->ip is the head itself.
#define RW_HEAD (ip - 1)

// Slow path of a BINARY_OP head: MP_BC_BINARY_OP_MULTI's body for `binop`.
#define RW_BINOP_SLOW(binop) { \
        rw_miss(RW_HEAD); \
        MARK_EXC_IP_SELECTIVE(); \
        mp_obj_t rw_rhs = POP(); \
        mp_obj_t rw_lhs = TOP(); \
        SET_TOP(mp_binary_op((binop), rw_lhs, rw_rhs)); \
        DISPATCH(); \
}

// CMPJ: both small ints -> compare, then do what the tail's POP_JUMP_IF_TRUE/FALSE would
// with that bool; the branch goes through the pending-exception check as the tail's did.
#define RW_CMPJ(cmp, binop) { \
        mp_obj_t rw_rhs = TOP(); \
        mp_obj_t rw_lhs = sp[-1]; \
        if (mp_obj_is_small_int(rw_lhs) && mp_obj_is_small_int(rw_rhs)) { \
            bool rw_c = MP_OBJ_SMALL_INT_VALUE(rw_lhs) cmp MP_OBJ_SMALL_INT_VALUE(rw_rhs); \
            bool rw_on_true = *ip++ == MP_BC_POP_JUMP_IF_TRUE; \
            sp -= 2; \
            DECODE_SLABEL; \
            if (rw_c == rw_on_true) { \
                ip += slab; \
            } \
            DISPATCH_WITH_PEND_EXC_CHECK(); \
        } \
        RW_BINOP_SLOW(binop); \
}

// Small-int arithmetic: a and b are the operands' values; `ok` is the op's own guard
// (divisor, shift range, overflow), `expr` its result, kept only if it is a small int.
#define RW_SI_ARITH(binop, ok, expr) { \
        mp_obj_t rw_rhs = TOP(); \
        mp_obj_t rw_lhs = sp[-1]; \
        if (mp_obj_is_small_int(rw_lhs) && mp_obj_is_small_int(rw_rhs)) { \
            mp_int_t a = MP_OBJ_SMALL_INT_VALUE(rw_lhs); \
            mp_int_t b = MP_OBJ_SMALL_INT_VALUE(rw_rhs); \
            if (ok) { \
                mp_int_t rw_r = (expr); \
                if (MP_SMALL_INT_FITS(rw_r)) { \
                    sp -= 1; \
                    SET_TOP(MP_OBJ_NEW_SMALL_INT(rw_r)); \
                    DISPATCH(); \
                } \
            } \
        } \
        RW_BINOP_SLOW(binop); \
}

// Shifts as py/runtime.c does them on small ints: a negative count is the generic op's
// ValueError; a left shift that would leave the small-int range goes to the long path.
#define RW_WORD_BITS ((mp_int_t)(sizeof(mp_int_t) * MP_BITS_PER_BYTE))
#define RW_LSHIFT_OK(a, b) ((b) >= 0 && (b) < RW_WORD_BITS \
    && (a) <= (MP_SMALL_INT_MAX >> (b)) && (a) >= (MP_SMALL_INT_MIN >> (b)))
#define RW_RSHIFT(a, b) ((a) >> ((b) >= RW_WORD_BITS ? RW_WORD_BITS - 1 : (b)))

ENTRY(LOCIOS_BC_CMPJ_LT): RW_CMPJ(<, MP_BINARY_OP_LESS)
ENTRY(LOCIOS_BC_CMPJ_GT): RW_CMPJ(>, MP_BINARY_OP_MORE)
ENTRY(LOCIOS_BC_CMPJ_EQ): RW_CMPJ(==, MP_BINARY_OP_EQUAL)
ENTRY(LOCIOS_BC_CMPJ_LE): RW_CMPJ(<=, MP_BINARY_OP_LESS_EQUAL)
ENTRY(LOCIOS_BC_CMPJ_GE): RW_CMPJ(>=, MP_BINARY_OP_MORE_EQUAL)
ENTRY(LOCIOS_BC_CMPJ_NE): RW_CMPJ(!=, MP_BINARY_OP_NOT_EQUAL)

// + and - of two 63-bit values cannot overflow the 64-bit word; FITS decides.
ENTRY(LOCIOS_BC_ADD_SI): RW_SI_ARITH(MP_BINARY_OP_ADD, 1, a + b)
ENTRY(LOCIOS_BC_SUB_SI): RW_SI_ARITH(MP_BINARY_OP_SUBTRACT, 1, a - b)
ENTRY(LOCIOS_BC_MUL_SI): RW_SI_ARITH(MP_BINARY_OP_MULTIPLY, !mp_small_int_mul_overflow(a, b), a * b)
// Python floor semantics through MicroPython's own helpers; MIN // -1 does not fit.
ENTRY(LOCIOS_BC_FLOORDIV_SI): RW_SI_ARITH(MP_BINARY_OP_FLOOR_DIVIDE, b != 0, mp_small_int_floor_divide(a, b))
ENTRY(LOCIOS_BC_MOD_SI): RW_SI_ARITH(MP_BINARY_OP_MODULO, b != 0, mp_small_int_modulo(a, b))
ENTRY(LOCIOS_BC_AND_SI): RW_SI_ARITH(MP_BINARY_OP_AND, 1, a & b)
ENTRY(LOCIOS_BC_OR_SI): RW_SI_ARITH(MP_BINARY_OP_OR, 1, a | b)
ENTRY(LOCIOS_BC_XOR_SI): RW_SI_ARITH(MP_BINARY_OP_XOR, 1, a ^ b)
ENTRY(LOCIOS_BC_IADD_SI): RW_SI_ARITH(MP_BINARY_OP_INPLACE_ADD, 1, a + b)
ENTRY(LOCIOS_BC_ISUB_SI): RW_SI_ARITH(MP_BINARY_OP_INPLACE_SUBTRACT, 1, a - b)
ENTRY(LOCIOS_BC_RSHIFT_SI): RW_SI_ARITH(MP_BINARY_OP_RSHIFT, b >= 0, RW_RSHIFT(a, b))
ENTRY(LOCIOS_BC_LSHIFT_SI): RW_SI_ARITH(MP_BINARY_OP_LSHIFT, RW_LSHIFT_OK(a, b), (mp_int_t)((mp_uint_t)a << b))

// container[index] for an exact list or tuple and an in-range small int (negative counts
// from the end, as mp_get_index does); anything else is LOAD_SUBSCR.
ENTRY(LOCIOS_BC_SUBSCR_SI): {
    mp_obj_t rw_index = TOP();
    mp_obj_t rw_base = sp[-1];
    if (mp_obj_is_small_int(rw_index) && mp_obj_is_obj(rw_base)) {
        const mp_obj_type_t *rw_type = ((mp_obj_base_t *)MP_OBJ_TO_PTR(rw_base))->type;
        size_t rw_len = 0;
        mp_obj_t *rw_items = NULL;
        if (rw_type == &mp_type_list) {
            mp_obj_list_t *rw_list = MP_OBJ_TO_PTR(rw_base);
            rw_len = rw_list->len;
            rw_items = rw_list->items;
        } else if (rw_type == &mp_type_tuple) {
            mp_obj_tuple_t *rw_tuple = MP_OBJ_TO_PTR(rw_base);
            rw_len = rw_tuple->len;
            rw_items = rw_tuple->items;
        }
        mp_int_t rw_i = MP_OBJ_SMALL_INT_VALUE(rw_index);
        if (rw_i < 0) {
            rw_i += rw_len;
        }
        if ((mp_uint_t)rw_i < rw_len) {
            sp -= 1;
            SET_TOP(rw_items[rw_i]);
            DISPATCH();
        }
    }
    rw_miss(RW_HEAD);
    MARK_EXC_IP_SELECTIVE();
    mp_obj_t rw_idx = POP();
    SET_TOP(mp_obj_subscr(TOP(), rw_idx, MP_OBJ_SENTINEL));
    DISPATCH();
}

// Stack (.., value, list, index): store into an exact list at an in-range small int. A
// NULL value is `del x[i]` (LOAD_NULL; ROT_THREE; STORE_SUBSCR): always the slow path.
ENTRY(LOCIOS_BC_STORE_SUBSCR_SI): {
    mp_obj_t rw_index = sp[0];
    mp_obj_t rw_base = sp[-1];
    if (mp_obj_is_small_int(rw_index) && mp_obj_is_exact_type(rw_base, &mp_type_list)
        && sp[-2] != MP_OBJ_NULL) {
        mp_obj_list_t *rw_list = MP_OBJ_TO_PTR(rw_base);
        mp_int_t rw_i = MP_OBJ_SMALL_INT_VALUE(rw_index);
        if (rw_i < 0) {
            rw_i += rw_list->len;
        }
        if ((mp_uint_t)rw_i < rw_list->len) {
            rw_list->items[rw_i] = sp[-2];
            sp -= 3;
            DISPATCH();
        }
    }
    rw_miss(RW_HEAD);
    MARK_EXC_IP_SELECTIVE();
    mp_obj_subscr(sp[-1], sp[0], sp[-2]);
    sp -= 3;
    DISPATCH();
}

// `for i in range(a, end[, step])` test with stack (.., end, i). Tail: ROT_TWO,
// BINARY_OP LESS (step >= 0) or MORE, POP_JUMP_IF_TRUE + label. Nothing is pushed.
ENTRY(LOCIOS_BC_FORRANGE_SI): {
    mp_obj_t rw_end = sp[-1];
    mp_obj_t rw_i = sp[0];
    if (mp_obj_is_small_int(rw_end) && mp_obj_is_small_int(rw_i)) {
        bool rw_c = ip[1] == MP_BC_BINARY_OP_MULTI + MP_BINARY_OP_LESS
            ? MP_OBJ_SMALL_INT_VALUE(rw_i) < MP_OBJ_SMALL_INT_VALUE(rw_end)
            : MP_OBJ_SMALL_INT_VALUE(rw_i) > MP_OBJ_SMALL_INT_VALUE(rw_end);
        ip += 3;
        DECODE_SLABEL;
        if (rw_c) {
            ip += slab;
        }
        DISPATCH_WITH_PEND_EXC_CHECK();
    }
    rw_miss(RW_HEAD);
    sp += 2;
    sp[0] = sp[-2];
    sp[-1] = sp[-3];
    DISPATCH();
}

// `x += k` / `x -= k` on local n. Tail: LOAD_CONST_SMALL_INT_MULTI k, BINARY_OP
// INPLACE_ADD/SUBTRACT, STORE_FAST_MULTI n; the head's own n is not in the code any
// more, so it is read from the tail's store. Slow path: LOAD_FAST n, with its
// unbound-local error through load_check.
ENTRY(LOCIOS_BC_INCR_FAST): {
    mp_obj_t *rw_slot = &fastn[MP_BC_STORE_FAST_MULTI - (mp_int_t)ip[2]];
    mp_obj_t rw_v = *rw_slot;
    if (mp_obj_is_small_int(rw_v)) {
        mp_int_t rw_k = (mp_int_t)ip[0] - MP_BC_LOAD_CONST_SMALL_INT_MULTI
            - MP_BC_LOAD_CONST_SMALL_INT_MULTI_EXCESS;
        if (ip[1] != MP_BC_BINARY_OP_MULTI + MP_BINARY_OP_INPLACE_ADD) {
            rw_k = -rw_k;
        }
        mp_int_t rw_r = MP_OBJ_SMALL_INT_VALUE(rw_v) + rw_k;
        if (MP_SMALL_INT_FITS(rw_r)) {
            *rw_slot = MP_OBJ_NEW_SMALL_INT(rw_r);
            ip += 3;
            DISPATCH();
        }
    }
    rw_miss(RW_HEAD);
    obj_shared = rw_v;
    goto load_check;
}

// LOAD_CONST_NONE; RETURN_VALUE: push None and enter RETURN_VALUE's code with ip and
// code_state->ip where its own dispatch would have left them (finally handlers are
// found by comparing with ip).
ENTRY(LOCIOS_BC_RETURN_NONE):
    PUSH(mp_const_none);
    #if SELECTIVE_EXC_IP
    ip += 1;
    MARK_EXC_IP_SELECTIVE();
    #else
    code_state->ip = ip;
    ip += 1;
    #endif
    goto unwind_return;

// ---- Phase 2: per-site caches (qstr operand, head only; misses count in rw_miss) ----

// A global found at the site's cached index of the current globals map, or a builtin at
// its cached index of the builtins table (constant ROM, so the index never goes stale)
// when the name is in neither the current globals nor the builtins override dict
// (MICROPY_CAN_OVERRIDE_BUILTINS: `builtins.x = ...` writes there) -- the very
// conditions under which mp_load_global (py/runtime.c) reaches that table. Anything
// else (other globals dict, rehashed or deleted entry, a new global or override of a
// builtin's name) is a miss: the same lookups in mp_load_global's order, refilling.
ENTRY(LOCIOS_BC_LOAD_GLOBAL_C): {
    extern const mp_obj_dict_t mp_module_builtins_globals;
    const mp_map_t *rw_bmap = &mp_module_builtins_globals.map;
    const byte *rw_head = RW_HEAD;
    DECODE_QSTR;
    mp_obj_t rw_key = MP_OBJ_NEW_QSTR(qst);
    mp_map_t *rw_map = &mp_globals_get()->map;
    #if MICROPY_CAN_OVERRIDE_BUILTINS
    mp_obj_dict_t *rw_over = MP_STATE_VM(mp_module_builtins_override_dict);
    #define RW_NOT_OVERRIDDEN (rw_over == NULL || mp_map_lookup(&rw_over->map, rw_key, MP_MAP_LOOKUP) == NULL)
    #else
    #define RW_NOT_OVERRIDDEN (1)
    #endif
    rw_cache_t *rw_c = RW_CACHE_SLOT(rw_head);
    size_t rw_i = rw_c->index;
    if (rw_c->ip == rw_head) {
        if (rw_c->map == rw_map && rw_i < rw_map->alloc && rw_map->table[rw_i].key == rw_key) {
            PUSH(rw_map->table[rw_i].value);
            DISPATCH();
        }
        if (rw_c->map == rw_bmap && rw_i < rw_bmap->alloc && rw_bmap->table[rw_i].key == rw_key
            && mp_map_lookup(rw_map, rw_key, MP_MAP_LOOKUP) == NULL && RW_NOT_OVERRIDDEN) {
            PUSH(rw_bmap->table[rw_i].value);
            DISPATCH();
        }
    }
    rw_miss(rw_head);
    MARK_EXC_IP_SELECTIVE();
    mp_map_elem_t *rw_e = mp_map_lookup(rw_map, rw_key, MP_MAP_LOOKUP);
    const mp_map_t *rw_in = rw_map;
    if (rw_e == NULL && RW_NOT_OVERRIDDEN) {
        rw_e = mp_map_lookup((mp_map_t *)rw_bmap, rw_key, MP_MAP_LOOKUP);
        rw_in = rw_bmap;
    }
    #undef RW_NOT_OVERRIDDEN
    if (rw_e != NULL) {
        rw_c->ip = rw_head;
        rw_c->map = rw_in;
        rw_c->index = rw_e - rw_in->table;
        PUSH(rw_e->value);
        DISPATCH();
    }
    // Overridden builtin or undefined name (NameError): mp_load_global itself.
    PUSH(mp_load_global(qst));
    DISPATCH();
}

// An instance's own member at the site's cached index of its members map: what
// LOAD_ATTR's own instance fast path (MICROPY_OPT_LOAD_ATTR_FAST_PATH) returns first.
ENTRY(LOCIOS_BC_LOAD_ATTR_C): {
    const byte *rw_head = RW_HEAD;
    DECODE_QSTR;
    mp_obj_t rw_top = TOP();
    if (mp_obj_is_obj(rw_top)
        && mp_obj_is_instance_type(((mp_obj_base_t *)MP_OBJ_TO_PTR(rw_top))->type)) {
        mp_map_t *rw_m = &((mp_obj_instance_t *)MP_OBJ_TO_PTR(rw_top))->members;
        rw_cache_t *rw_c = RW_CACHE_SLOT(rw_head);
        size_t rw_i = rw_c->index;
        if (rw_c->ip == rw_head && rw_i < rw_m->alloc
            && rw_m->table[rw_i].key == MP_OBJ_NEW_QSTR(qst)) {
            SET_TOP(rw_m->table[rw_i].value);
            DISPATCH();
        }
        mp_map_elem_t *rw_e = mp_map_lookup(rw_m, MP_OBJ_NEW_QSTR(qst), MP_MAP_LOOKUP);
        if (rw_e != NULL) {
            rw_miss(rw_head);
            rw_c->ip = rw_head;
            rw_c->index = rw_e - rw_m->table;
            SET_TOP(rw_e->value);
            DISPATCH();
        }
    }
    rw_miss(rw_head);
    FRAME_UPDATE();
    MARK_EXC_IP_SELECTIVE();
    SET_TOP(mp_load_attr(rw_top, qst));
    DISPATCH();
}

// Names mp_load_method answers before it reaches the class's locals dict (py/runtime.c
// mp_load_method_maybe: __class__, __next__; py/objtype.c mp_obj_instance_load_attr:
// __dict__): never the fast path.
#define RW_METHOD_NAME_OK(q) ((q) != MP_QSTR___class__ && (q) != MP_QSTR___next__ \
    && (q) != MP_QSTR___dict__)

// A plain bytecode function, or one promoted to a native twin (vm/opt/mod/rw_promote.c:
// the same object with a type that is also named 'function', binds self, and has the same
// attr slot, so no __get__ either).
extern const mp_obj_type_t rw_type_fun_promoted;
#define RW_PLAIN_METHOD(v) (mp_obj_is_exact_type((v), &mp_type_fun_bc) \
    || mp_obj_is_exact_type((v), &rw_type_fun_promoted))

// obj.name(...) where obj is an instance of a user class T (the site's cached type,
// exact pointer), name is not one of obj's own members, and T's OWN locals dict holds
// name at the cached index with a plain (RW_PLAIN_METHOD) function as value. On exactly that
// domain mp_load_method -> mp_obj_instance_load_attr finds no member, no __dict__, then
// mp_obj_class_lookup's first step (T itself: a user class, so no native-slot shortcut
// and self is the instance, not a native sub-object) binds the function by
// mp_convert_member_lookup (BINDS_SELF, not BUILTIN_FUN) to (fun, obj); the
// special-accessor checks after it change nothing for a fun_bc (not a property; a
// function has no __get__ here), and __getattr__ is only tried when nothing was found.
// So the fast path pushes the same (fun, obj). staticmethod, classmethod, property,
// closures, generators, native functions, inherited methods and everything else miss.
ENTRY(LOCIOS_BC_LOAD_METHOD_C): {
    const byte *rw_head = RW_HEAD;
    DECODE_QSTR;
    mp_obj_t rw_top = TOP();
    mp_obj_t rw_key = MP_OBJ_NEW_QSTR(qst);
    if (mp_obj_is_obj(rw_top) && RW_METHOD_NAME_OK(qst)) {
        const mp_obj_type_t *rw_t = ((mp_obj_base_t *)MP_OBJ_TO_PTR(rw_top))->type;
        if (mp_obj_is_instance_type(rw_t) && MP_OBJ_TYPE_HAS_SLOT(rw_t, locals_dict)) {
            mp_map_t *rw_lm = &MP_OBJ_TYPE_GET_SLOT(rw_t, locals_dict)->map;
            rw_cache_t *rw_c = RW_CACHE_SLOT(rw_head);
            size_t rw_i = rw_c->index;
            if (rw_c->ip == rw_head && rw_c->map == rw_t && rw_i < rw_lm->alloc
                && rw_lm->table[rw_i].key == rw_key
                && RW_PLAIN_METHOD(rw_lm->table[rw_i].value)
                && mp_map_lookup(&((mp_obj_instance_t *)MP_OBJ_TO_PTR(rw_top))->members,
                    rw_key, MP_MAP_LOOKUP) == NULL) {
                sp[1] = rw_top;
                SET_TOP(rw_lm->table[rw_i].value);
                sp += 1;
                DISPATCH();
            }
            // Refill from T's own dict now, while obj (and so T) is still on the stack.
            mp_map_elem_t *rw_e = mp_map_lookup(rw_lm, rw_key, MP_MAP_LOOKUP);
            if (rw_e != NULL && RW_PLAIN_METHOD(rw_e->value)) {
                rw_c->ip = rw_head;
                rw_c->map = rw_t;
                rw_c->index = rw_e - rw_lm->table;
            }
        }
    }
    rw_miss(rw_head);
    MARK_EXC_IP_SELECTIVE();
    mp_load_method(rw_top, qst, sp);
    sp += 1;
    DISPATCH();
}

#undef RW_HEAD
#undef RW_BINOP_SLOW
#undef RW_CMPJ
#undef RW_SI_ARITH
#undef RW_WORD_BITS
#undef RW_LSHIFT_OK
#undef RW_RSHIFT
#undef RW_METHOD_NAME_OK
#undef RW_PLAIN_METHOD
