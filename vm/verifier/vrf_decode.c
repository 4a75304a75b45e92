// SPDX-License-Identifier: MIT
// Decoding MicroPython 1.25.0 bytecode: the opcode set, one instruction with all its
// operands bounds-checked, and the function prelude (signature, sizes, names, cells).
#include "vrf_internal.h"

// Names of the single opcodes; multi-opcode families are named in vrf_opcode_name.
static const char *const op_names[0x70] = {
    [OP_LOAD_CONST_STRING] = "LOAD_CONST_STRING",
    [OP_LOAD_NAME] = "LOAD_NAME",
    [OP_LOAD_GLOBAL] = "LOAD_GLOBAL",
    [OP_LOAD_ATTR] = "LOAD_ATTR",
    [OP_LOAD_METHOD] = "LOAD_METHOD",
    [OP_LOAD_SUPER_METHOD] = "LOAD_SUPER_METHOD",
    [OP_STORE_NAME] = "STORE_NAME",
    [OP_STORE_GLOBAL] = "STORE_GLOBAL",
    [OP_STORE_ATTR] = "STORE_ATTR",
    [OP_DELETE_NAME] = "DELETE_NAME",
    [OP_DELETE_GLOBAL] = "DELETE_GLOBAL",
    [OP_IMPORT_NAME] = "IMPORT_NAME",
    [OP_IMPORT_FROM] = "IMPORT_FROM",
    [OP_MAKE_CLOSURE] = "MAKE_CLOSURE",
    [OP_MAKE_CLOSURE_DEFARGS] = "MAKE_CLOSURE_DEFARGS",
    [OP_LOAD_CONST_SMALL_INT] = "LOAD_CONST_SMALL_INT",
    [OP_LOAD_CONST_OBJ] = "LOAD_CONST_OBJ",
    [OP_LOAD_FAST_N] = "LOAD_FAST_N",
    [OP_LOAD_DEREF] = "LOAD_DEREF",
    [OP_STORE_FAST_N] = "STORE_FAST_N",
    [OP_STORE_DEREF] = "STORE_DEREF",
    [OP_DELETE_FAST] = "DELETE_FAST",
    [OP_DELETE_DEREF] = "DELETE_DEREF",
    [OP_BUILD_TUPLE] = "BUILD_TUPLE",
    [OP_BUILD_LIST] = "BUILD_LIST",
    [OP_BUILD_MAP] = "BUILD_MAP",
    [OP_BUILD_SET] = "BUILD_SET",
    [OP_BUILD_SLICE] = "BUILD_SLICE",
    [OP_STORE_COMP] = "STORE_COMP",
    [OP_UNPACK_SEQUENCE] = "UNPACK_SEQUENCE",
    [OP_UNPACK_EX] = "UNPACK_EX",
    [OP_MAKE_FUNCTION] = "MAKE_FUNCTION",
    [OP_MAKE_FUNCTION_DEFARGS] = "MAKE_FUNCTION_DEFARGS",
    [OP_CALL_FUNCTION] = "CALL_FUNCTION",
    [OP_CALL_FUNCTION_VAR_KW] = "CALL_FUNCTION_VAR_KW",
    [OP_CALL_METHOD] = "CALL_METHOD",
    [OP_CALL_METHOD_VAR_KW] = "CALL_METHOD_VAR_KW",
    [OP_UNWIND_JUMP] = "UNWIND_JUMP",
    [OP_JUMP] = "JUMP",
    [OP_POP_JUMP_IF_TRUE] = "POP_JUMP_IF_TRUE",
    [OP_POP_JUMP_IF_FALSE] = "POP_JUMP_IF_FALSE",
    [OP_JUMP_IF_TRUE_OR_POP] = "JUMP_IF_TRUE_OR_POP",
    [OP_JUMP_IF_FALSE_OR_POP] = "JUMP_IF_FALSE_OR_POP",
    [OP_SETUP_WITH] = "SETUP_WITH",
    [OP_SETUP_EXCEPT] = "SETUP_EXCEPT",
    [OP_SETUP_FINALLY] = "SETUP_FINALLY",
    [OP_POP_EXCEPT_JUMP] = "POP_EXCEPT_JUMP",
    [OP_FOR_ITER] = "FOR_ITER",
    [OP_LOAD_CONST_FALSE] = "LOAD_CONST_FALSE",
    [OP_LOAD_CONST_NONE] = "LOAD_CONST_NONE",
    [OP_LOAD_CONST_TRUE] = "LOAD_CONST_TRUE",
    [OP_LOAD_NULL] = "LOAD_NULL",
    [OP_LOAD_BUILD_CLASS] = "LOAD_BUILD_CLASS",
    [OP_LOAD_SUBSCR] = "LOAD_SUBSCR",
    [OP_STORE_SUBSCR] = "STORE_SUBSCR",
    [OP_DUP_TOP] = "DUP_TOP",
    [OP_DUP_TOP_TWO] = "DUP_TOP_TWO",
    [OP_POP_TOP] = "POP_TOP",
    [OP_ROT_TWO] = "ROT_TWO",
    [OP_ROT_THREE] = "ROT_THREE",
    [OP_WITH_CLEANUP] = "WITH_CLEANUP",
    [OP_END_FINALLY] = "END_FINALLY",
    [OP_GET_ITER] = "GET_ITER",
    [OP_GET_ITER_STACK] = "GET_ITER_STACK",
    [OP_STORE_MAP] = "STORE_MAP",
    [OP_RETURN_VALUE] = "RETURN_VALUE",
    [OP_RAISE_LAST] = "RAISE_LAST",
    [OP_RAISE_OBJ] = "RAISE_OBJ",
    [OP_RAISE_FROM] = "RAISE_FROM",
    [OP_YIELD_VALUE] = "YIELD_VALUE",
    [OP_YIELD_FROM] = "YIELD_FROM",
    [OP_IMPORT_STAR] = "IMPORT_STAR",
};

// The name of an opcode of MicroPython 1.25.0, or "?".
static const char *orig_name(int op) {
    if (op < 0 || op > 0xff) {
        return "?";
    }
    if (op < 0x70) {
        return op_names[op] ? op_names[op] : "?";
    }
    if (op < OP_LOAD_FAST_MULTI) {
        return "LOAD_CONST_SMALL_INT";
    }
    if (op < OP_STORE_FAST_MULTI) {
        return "LOAD_FAST";
    }
    if (op < OP_UNARY_OP_MULTI) {
        return "STORE_FAST";
    }
    if (op < OP_UNARY_OP_MULTI + OP_UNARY_OP_NUM) {
        return "UNARY_OP";
    }
    if (op >= OP_BINARY_OP_MULTI && op < OP_BINARY_OP_MULTI + OP_BINARY_OP_NUM) {
        return "BINARY_OP";
    }
    return "?";
}

const char *vrf_opcode_name(int op) {
    const char *n = orig_name(op);
    return n[0] == '?' ? vrf_rw_name(op) : n;
}

// The VM's own opcodes (the rewriter's heads are vrf_rw_op).
int vrf_opcode_valid(int op) {
    return orig_name(op)[0] != '?';
}

// Opcodes after which the VM runs MICROPY_VM_HOOK_LOOP and checks pending exceptions
// (DISPATCH_WITH_PEND_EXC_CHECK in py/vm.c), on both of their edges.
int vrf_op_polls(int op) {
    switch (op) {
        case OP_JUMP:
        case OP_POP_JUMP_IF_TRUE:
        case OP_POP_JUMP_IF_FALSE:
        case OP_JUMP_IF_TRUE_OR_POP:
        case OP_JUMP_IF_FALSE_OR_POP:
        case OP_UNWIND_JUMP:
        case OP_POP_EXCEPT_JUMP:
        // The fused loop tests end in DISPATCH_WITH_PEND_EXC_CHECK, like the POP_JUMP
        // whose jump they take (vm/rewrite/rw_ops.h).
        case LOCIOS_BC_CMPJ_LT:
        case LOCIOS_BC_CMPJ_GT:
        case LOCIOS_BC_CMPJ_EQ:
        case LOCIOS_BC_CMPJ_LE:
        case LOCIOS_BC_CMPJ_GE:
        case LOCIOS_BC_CMPJ_NE:
        case LOCIOS_BC_FORRANGE_SI:
            return 1;
        default:
            return 0;
    }
}

// Operand format of an opcode: a 2-bit field per row of 16 (py/bc0.h, MP_BC_FORMAT).
static int op_format(int op) {
    return (0x000003a4 >> (2 * (op >> 4))) & 3;
}

// Reads a var-uint of at most 5 bytes (32 bits); returns bytes used or 0 if it runs
// past the end or is longer.
static uint32_t read_uint(const uint8_t *code, size_t len, size_t off, uint32_t *val) {
    uint64_t v = 0;
    for (uint32_t n = 0; n < 5; n++) {
        if (off + n >= len) {
            return 0;
        }
        uint8_t b = code[off + n];
        v = (v << 7) | (b & 0x7f);
        if (!(b & 0x80)) {
            if (v > 0xffffffffu) {
                return 0;
            }
            *val = (uint32_t)v;
            return n + 1;
        }
    }
    return 0;
}

const char *vrf_decode_insn(const uint8_t *code, size_t len, size_t off, vrf_insn_t *out) {
    if (off >= len) {
        out->off = (uint32_t)off;
        out->op = 0;
        return "instruction starts past the end";
    }
    uint8_t op = code[off];
    size_t p = off + 1;
    out->off = (uint32_t)off;
    out->op = op;
    out->fmt = (uint8_t)op_format(op);
    out->arg = 0;
    out->target = 0;
    out->has_extra = 0;
    out->extra = 0;
    if (!vrf_opcode_valid(op) && !vrf_rw_op(op)) {
        return "opcode not implemented by the VM";
    }
    if (out->fmt == FMT_QSTR || out->fmt == FMT_VAR_UINT) {
        if (op == OP_LOAD_CONST_SMALL_INT) {
            // Signed: the VM accumulates any length; we allow what fits 64 bits.
            uint32_t n = 0;
            while (1) {
                if (p + n >= len || n >= 10) {
                    return "small-int operand runs past the end or exceeds 64 bits";
                }
                if (!(code[p + n] & 0x80)) {
                    break;
                }
                n++;
            }
            out->arg = code[p + n] & 0x7f;
            p += n + 1;
        } else {
            uint32_t n = read_uint(code, len, p, &out->arg);
            if (n == 0) {
                return "var-uint operand runs past the end or exceeds 32 bits";
            }
            p += n;
        }
    } else if (out->fmt == FMT_OFFSET) {
        if (p >= len) {
            return "jump offset runs past the end";
        }
        int64_t v;
        if (!(code[p] & 0x80)) {
            v = code[p];
            p += 1;
            if (op <= OP_POP_JUMP_IF_FALSE) {
                v -= 0x40;
            }
        } else {
            if (p + 1 >= len) {
                return "jump offset runs past the end";
            }
            v = (code[p] & 0x7f) | ((int64_t)code[p + 1] << 7);
            p += 2;
            if (op <= OP_POP_JUMP_IF_FALSE) {
                v -= 0x4000;
            }
        }
        // Signed for 0x40..0x44 (MP_BC_OPCODE_HAS_SIGNED_OFFSET), forward otherwise;
        // relative to the end of the offset field (UNWIND_JUMP's extra byte follows).
        out->target = (int64_t)p + v;
    }
    if ((op & 0x9e) == 0) {
        if (p >= len) {
            return "extra byte runs past the end";
        }
        out->has_extra = 1;
        out->extra = code[p];
        p += 1;
    }
    out->size = (uint32_t)(p - off);
    return 0;
}

const char *vrf_parse_prelude(const vrf_fn_t *fn, vrf_prelude_t *pr, uint32_t *bad_off) {
    const uint8_t *c = fn->code;
    size_t len = fn->len, p = 0;
    *bad_off = 0;
    if (len == 0) {
        return "empty function";
    }
    // Signature: xSSSSEAA then xFSSKAED groups (py/bc.h).
    uint8_t z = c[p++];
    uint32_t S = (z >> 3) & 0xf, E = (z >> 2) & 1, F = 0, A = z & 3, K = 0, D = 0;
    for (unsigned n = 0; z & 0x80; ++n) {
        if (p >= len || n >= 6) {
            return "signature runs past the end or is too long";
        }
        z = c[p++];
        S |= (uint32_t)(z & 0x30) << (2 * n);
        E |= (uint32_t)(z & 0x02) << n;
        F |= (uint32_t)((z & 0x40) >> 6) << n;
        A |= (uint32_t)(z & 0x4) << n;
        K |= (uint32_t)((z & 0x08) >> 3) << n;
        D |= (uint32_t)(z & 0x1) << n;
    }
    pr->n_state = S + 1;
    pr->n_exc_stack = E;
    pr->scope_flags = F;
    pr->n_pos_args = A;
    pr->n_kwonly_args = K;
    pr->n_def_pos_args = D;
    // Size: xIIIIIIC groups.
    uint32_t I = 0, C = 0;
    for (unsigned n = 0;; ++n) {
        if (p >= len || n >= 4) {
            *bad_off = (uint32_t)p;
            return "size field runs past the end or is too long";
        }
        z = c[p++];
        C |= (uint32_t)(z & 1) << n;
        I |= (uint32_t)((z & 0x7e) >> 1) << (6 * n);
        if (!(z & 0x80)) {
            break;
        }
    }
    pr->n_info = I;
    pr->n_cell = C;
    pr->info_off = (uint32_t)p;
    if (I == 0 || (uint64_t)p + I + C > len) {
        *bad_off = (uint32_t)p;
        return "source-info and cell sections run past the end";
    }
    pr->cell_off = (uint32_t)(p + I);
    pr->code_off = (uint32_t)(p + I + C);
    if (pr->n_def_pos_args > pr->n_pos_args) {
        return "more default arguments than positional arguments";
    }
    // Simple name and argument names: var-uint qstrs inside the info section.
    size_t q = p, info_end = p + I;
    for (uint32_t i = 0; i < 1 + pr->n_pos_args + pr->n_kwonly_args; i++) {
        uint32_t v, n = read_uint(c, info_end, q, &v);
        if (n == 0) {
            *bad_off = (uint32_t)q;
            return "name list runs past the source-info section";
        }
        if (v >= fn->n_qstr) {
            *bad_off = (uint32_t)q;
            return "name qstr out of range";
        }
        if (i == 0) {
            pr->name = v;
        }
        q += n;
    }
    // The rest of the section is the line-number table: entries of one byte (0LLBBBBB)
    // or two (1LLLBBBB LLLLLLLL). The VM's decoder (mp_bytecode_get_source_line, run
    // for every traceback) stops only at the section's end, so an entry starting on its
    // last byte would have it read one byte past it: every entry must end inside.
    while (q < info_end) {
        if ((c[q] & 0x80) && q + 1 >= info_end) {
            *bad_off = (uint32_t)q;
            return "line-number table runs past the source-info section";
        }
        q += (c[q] & 0x80) ? 2 : 1;
    }
    return 0;
}
