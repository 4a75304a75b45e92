// SPDX-License-Identifier: MIT
// Float, complex and small-int arithmetic for native code (vm/patches/0025 calls it
// through mp_fun_table where the emitter called mp_binary_op). mp_binary_op reaches a
// float sum through the operand's type slot, mp_obj_float_binary_op and a conversion
// call per operand: about 115 instructions before the result is boxed, in bm_float's
// twins. Here the operands' types are tested once and the arithmetic is done in line.
//
// Every result must be the one mp_binary_op gives, to the bit: the same operations in
// the same order on the same doubles (py/objfloat.c, py/objcomplex.c, py/runtime.c).
// Anything else (bools, big ints, subclasses of float, a float's // or %, powers, and
// a zero divisor or negative shift count, which raise) takes mp_binary_op.
//
// A float result goes into a float this file made, instead of a new one, when that float
// is an operand that nothing but the native code's stack can reach (patch 0028): in
// `a * b + c` the product's float takes the sum. The emitter flags an operand that is a
// binary op's result no op has popped since; only the op that pushed it has had it. Of
// those, the float `fresh` names is the last one made here, and nothing else can hold
// it: mp_binary_op's results (which may be anyone's float, returned by a user's __add__)
// clear `fresh`, and `fresh` cannot come to name a float already alive. Floats are
// immutable to Python code, so no one can tell the float was reused.
#include "py/nativeglue.h"
#include "py/runtime.h"
#include "py/smallint.h"

// A build whose emitter has no native poll (a host port's) passes no operand flags.
#ifndef MP_NATIVE_BINARY_OP_LHS_FRESH
#define MP_NATIVE_BINARY_OP_LHS_FRESH (0)
#define MP_NATIVE_BINARY_OP_RHS_FRESH (0)
#endif

#if MICROPY_PY_BUILTINS_FLOAT && MICROPY_OBJ_REPR == MICROPY_OBJ_REPR_A

#define RW_INLINE static inline __attribute__((always_inline))

// py/objfloat.c's float object, whose struct is private to that file; read here without
// mp_obj_float_get's call, which costs as much as the sum.
typedef struct {
    mp_obj_base_t base;
    mp_float_t value;
} rw_float_t;

// The float the last float_op made (or refilled); compared, never followed, so it need
// not be a GC root.
static mp_obj_t fresh;

// v in `reuse` if there is one (a float only the caller's stack holds), else in a new
// float; either becomes the fresh one.
RW_INLINE mp_obj_t float_result(mp_float_t v, mp_obj_t reuse) {
    if (reuse != MP_OBJ_NULL) {
        ((rw_float_t *)MP_OBJ_TO_PTR(reuse))->value = v;
        return reuse;
    }
    return fresh = mp_obj_new_float(v);
}

// What real_of found.
enum {
    NOT_REAL,
    SMALL_INT,
    FLOAT
};

// A float or a small int as a double, as mp_obj_get_float_maybe converts it, and which
// of the two it was (NOT_REAL for anything else).
RW_INLINE int real_of(mp_obj_t o, mp_float_t *v) {
    if (mp_obj_is_small_int(o)) {
        *v = (mp_float_t)MP_OBJ_SMALL_INT_VALUE(o);
        return SMALL_INT;
    }
    if (mp_obj_is_float(o)) {
        *v = ((const rw_float_t *)MP_OBJ_TO_PTR(o))->value;
        return FLOAT;
    }
    return NOT_REAL;
}

static mp_obj_t float_op(mp_binary_op_t op, mp_float_t a, mp_float_t b, mp_obj_t reuse) {
    switch (op) {
        case MP_BINARY_OP_ADD:
        case MP_BINARY_OP_INPLACE_ADD:
            return float_result(a + b, reuse);
        case MP_BINARY_OP_SUBTRACT:
        case MP_BINARY_OP_INPLACE_SUBTRACT:
            return float_result(a - b, reuse);
        case MP_BINARY_OP_MULTIPLY:
        case MP_BINARY_OP_INPLACE_MULTIPLY:
            return float_result(a * b, reuse);
        case MP_BINARY_OP_TRUE_DIVIDE:
        case MP_BINARY_OP_INPLACE_TRUE_DIVIDE:
            return b == 0 ? MP_OBJ_NULL : float_result(a / b, reuse);
        case MP_BINARY_OP_LESS:
            return mp_obj_new_bool(a < b);
        case MP_BINARY_OP_MORE:
            return mp_obj_new_bool(a > b);
        case MP_BINARY_OP_LESS_EQUAL:
            return mp_obj_new_bool(a <= b);
        case MP_BINARY_OP_MORE_EQUAL:
            return mp_obj_new_bool(a >= b);
        // mp_obj_equal_not_equal asks the float's binary_op for EQUAL and inverts it for
        // NOT_EQUAL (a float is never equal to itself by identity: NaN).
        case MP_BINARY_OP_EQUAL:
            return mp_obj_new_bool(a == b);
        case MP_BINARY_OP_NOT_EQUAL:
            return mp_obj_new_bool(!(a == b));
        default:
            return MP_OBJ_NULL;
    }
}

#if MICROPY_PY_BUILTINS_COMPLEX
// A complex number, a float or a small int as (real, imag), as mp_obj_get_complex_maybe
// converts it; false for anything else.
RW_INLINE bool complex_of(mp_obj_t o, mp_float_t *re, mp_float_t *im) {
    if (mp_obj_is_type(o, &mp_type_complex)) {
        mp_obj_complex_get(o, re, im);
        return true;
    }
    *im = 0;
    return real_of(o, re) != NOT_REAL;
}

// mp_obj_complex_binary_op's sum, difference and product; the real operand of a mixed
// op is widened to (x, 0) first there too, by whichever side it is on.
static mp_obj_t complex_op(mp_binary_op_t op, mp_obj_t lhs, mp_obj_t rhs) {
    mp_float_t ar, ai, br, bi;
    if (!complex_of(lhs, &ar, &ai) || !complex_of(rhs, &br, &bi)) {
        return MP_OBJ_NULL;
    }
    switch (op) {
        case MP_BINARY_OP_ADD:
        case MP_BINARY_OP_INPLACE_ADD:
            return mp_obj_new_complex(ar + br, ai + bi);
        case MP_BINARY_OP_SUBTRACT:
        case MP_BINARY_OP_INPLACE_SUBTRACT:
            return mp_obj_new_complex(ar - br, ai - bi);
        case MP_BINARY_OP_MULTIPLY:
        case MP_BINARY_OP_INPLACE_MULTIPLY: {
            mp_float_t re = ar * br - ai * bi;
            mp_float_t im = ar * bi + ai * br;
            return mp_obj_new_complex(re, im);
        }
        default:
            return MP_OBJ_NULL;
    }
}
#endif

// Two small ints, for the ops the emitter leaves to the runtime (0009 computes + - * & |
// ^ and comparisons inline): shifts, floor division and modulo as mp_binary_op computes
// them, true division through float_op as it converts both. A negative shift count, a
// zero divisor (both raise) and a left shift that overflows go to mp_binary_op.
static mp_obj_t small_int_op(mp_binary_op_t op, mp_obj_t lhs, mp_obj_t rhs) {
    mp_int_t a = MP_OBJ_SMALL_INT_VALUE(lhs);
    mp_int_t b = MP_OBJ_SMALL_INT_VALUE(rhs);
    const mp_int_t bits = sizeof(mp_int_t) * MP_BITS_PER_BYTE;
    switch (op) {
        case MP_BINARY_OP_LSHIFT:
        case MP_BINARY_OP_INPLACE_LSHIFT:
            if (b < 0 || b >= bits || a > (MP_SMALL_INT_MAX >> b) || a < (MP_SMALL_INT_MIN >> b)) {
                return MP_OBJ_NULL;
            }
            // In range by those tests but for -1 << 63 and the like: as mp_binary_op, the
            // word's value, boxed when it leaves the small-int range.
            return mp_obj_new_int((mp_int_t)((mp_uint_t)a << b));
        case MP_BINARY_OP_RSHIFT:
        case MP_BINARY_OP_INPLACE_RSHIFT:
            if (b < 0) {
                return MP_OBJ_NULL;
            }
            return MP_OBJ_NEW_SMALL_INT(a >> (b >= bits ? bits - 1 : b));
        case MP_BINARY_OP_FLOOR_DIVIDE:
        case MP_BINARY_OP_INPLACE_FLOOR_DIVIDE:
            if (b == 0) {
                return MP_OBJ_NULL;
            }
            // The one quotient that leaves the small-int range: MP_SMALL_INT_MIN // -1.
            return mp_obj_new_int(mp_small_int_floor_divide(a, b));
        case MP_BINARY_OP_MODULO:
        case MP_BINARY_OP_INPLACE_MODULO:
            if (b == 0) {
                return MP_OBJ_NULL;
            }
            return MP_OBJ_NEW_SMALL_INT(mp_small_int_modulo(a, b));
        case MP_BINARY_OP_TRUE_DIVIDE:
        case MP_BINARY_OP_INPLACE_TRUE_DIVIDE:
            return float_op(op, (mp_float_t)a, (mp_float_t)b, MP_OBJ_NULL);
        default:
            return MP_OBJ_NULL;
    }
}

mp_obj_t mp_native_binary_op(mp_binary_op_t op, mp_obj_t lhs, mp_obj_t rhs) {
    mp_uint_t flags = op;
    op &= ~(MP_NATIVE_BINARY_OP_LHS_FRESH | MP_NATIVE_BINARY_OP_RHS_FRESH);
    mp_float_t a, b;
    int ka = real_of(lhs, &a);
    int kb = ka != NOT_REAL ? real_of(rhs, &b) : NOT_REAL;
    mp_obj_t out = MP_OBJ_NULL;
    if (ka != NOT_REAL && kb != NOT_REAL && (ka == FLOAT || kb == FLOAT)) {
        mp_obj_t reuse = MP_OBJ_NULL;
        if (fresh != MP_OBJ_NULL) {
            if ((flags & MP_NATIVE_BINARY_OP_LHS_FRESH) && lhs == fresh) {
                reuse = lhs;
            } else if ((flags & MP_NATIVE_BINARY_OP_RHS_FRESH) && rhs == fresh) {
                reuse = rhs;
            }
        }
        out = float_op(op, a, b, reuse);
    } else if (ka == SMALL_INT && kb == SMALL_INT) {  // two small ints stay ints
        out = small_int_op(op, lhs, rhs);
    }
#if MICROPY_PY_BUILTINS_COMPLEX
    else if (mp_obj_is_type(lhs, &mp_type_complex) || mp_obj_is_type(rhs, &mp_type_complex)) {
        out = complex_op(op, lhs, rhs);
    }
#endif
    if (out == MP_OBJ_NULL) {
        out = mp_binary_op(op, lhs, rhs);
        fresh = MP_OBJ_NULL;  // whatever ran may have kept the float it returned
    }
    return out;
}

#else

mp_obj_t mp_native_binary_op(mp_binary_op_t op, mp_obj_t lhs, mp_obj_t rhs) {
    return mp_binary_op(op & ~(MP_NATIVE_BINARY_OP_LHS_FRESH | MP_NATIVE_BINARY_OP_RHS_FRESH), lhs,
                        rhs);
}

#endif
