// SPDX-License-Identifier: MIT
// One instruction's effect on the abstract state: stack depth, slot kinds, locals,
// children made; exception-block opcodes are vrf_block.c's.
#include <string.h>

#include "vrf_flow.h"

static int call_pops(ctx_t *c, const vrf_insn_t *in, st_t *s, int method, int var_kw) {
    if (in->arg > 0xffff) {
        FAIL(VRF_RULE_DECODE, "call argument encodes more than positional/keyword counts");
    }
    uint32_t n_pos = in->arg & 0xff, n_kw = (in->arg >> 8) & 0xff;
    uint32_t n = n_pos + 2 * n_kw + (var_kw ? 1u : 0u);
    uint32_t fslot = s->d - n - (method ? 1u : 0u);  // the callable (checked below)
    if (s->d < n + 1 + (method ? 1u : 0u)) {
        FAIL(VRF_RULE_STACK, "calls with fewer slots than arguments");
    }
    // The VM takes keyword names as interned strings without checking; with star
    // arguments a NULL name marks a **map.
    for (uint32_t i = 0; i < n_kw; i++) {
        uint32_t key = s->d - n + 1 + n_pos + 2 * i;
        int k = kget(s, key);
        if (k != K_QSTR && !(var_kw && k == K_NULL)) {
            FAIL(VRF_RULE_STACK, "passes a keyword whose name is not an interned string");
        }
        kset(s, key, K_OBJ);
    }
    // __build_class__ runs its first argument and stores the class in what it returns:
    // only a class body proved to return None or a cell may be passed.
    if (!method && kget(s, fslot) == K_BUILDCLASS) {
        if (n_pos < 1 || kget(s, fslot + 1) != K_CLASSBODY) {
            FAIL(VRF_RULE_STACK, "calls __build_class__ without a class body");
        }
        kset(s, fslot, K_OBJ);
    }
    int r = pop_n(c, in, s, n);
    if (r) {
        return r;
    }
    if (method) {
        if (s->d < 2 || s->d - 2 < vrf_floor(s, in->off)) {
            FAIL(VRF_RULE_STACK, "calls a method that is not on the stack");
        }
        if (!is_object_or_null(kget(s, s->d)) || !is_object_kind(kget(s, s->d - 1))) {
            FAIL(VRF_RULE_STACK, "calls a raw or NULL slot");
        }
        s->d -= 2;
        kclear_above(s, s->d);
    } else if ((r = pop_n(c, in, s, 1))) {
        return r;
    }
    return push(c, in, s, K_OBJ);
}

// Checks one instruction and propagates its state; s becomes the fall-through state.
// *falls is cleared for instructions that never continue to the next one.
int vrf_step(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls) {
    int r = 0, op = in->op;
    uint32_t a = in->arg;
    *falls = 1;
    if (c->rewritten && vrf_rw_op(op)) {
        return vrf_rw_step(c, in, s, falls);
    }
    if (op >= OP_SMALL_INT_MULTI && op < OP_LOAD_FAST_MULTI) {
        return push(c, in, s, K_OBJ);
    }
    if (op >= OP_LOAD_FAST_MULTI && op < OP_STORE_FAST_MULTI) {
        op = OP_LOAD_FAST_N;
        a = in->op - OP_LOAD_FAST_MULTI;
    } else if (op >= OP_STORE_FAST_MULTI && op < OP_UNARY_OP_MULTI) {
        op = OP_STORE_FAST_N;
        a = in->op - OP_STORE_FAST_MULTI;
    } else if (op >= OP_UNARY_OP_MULTI && op < OP_BINARY_OP_MULTI) {
        return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
    } else if (op >= OP_BINARY_OP_MULTI) {
        return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
    }
    if (in->fmt == FMT_QSTR && a >= c->fn->n_qstr) {
        FAIL(VRF_RULE_DECODE, "qstr index out of range");
    }
    switch (op) {
        case OP_LOAD_NAME:
        case OP_LOAD_GLOBAL:
        case OP_LOAD_CONST_SMALL_INT:
        case OP_LOAD_CONST_FALSE:
        case OP_LOAD_CONST_TRUE:
            return push(c, in, s, K_OBJ);
        case OP_LOAD_CONST_STRING:
            return push(c, in, s, K_QSTR);
        case OP_LOAD_BUILD_CLASS:
            return push(c, in, s, K_BUILDCLASS);
        case OP_LOAD_CONST_NONE:
            return push(c, in, s, K_NONE);
        case OP_LOAD_NULL:
            return push(c, in, s, K_NULL);
        case OP_LOAD_CONST_OBJ:
            if (a >= c->fn->n_obj) {
                FAIL(VRF_RULE_DECODE, "constant index out of range");
            }
            {
                int ok = c->fn->obj_kind ? c->fn->obj_kind(c->fn->ctx, a) : VRF_OBJ_OTHER;
                if (ok == VRF_OBJ_INVALID) {
                    FAIL(VRF_RULE_DECODE, "constant slot holds no object");
                }
                int len = ok - VRF_OBJ_TUPLE;
                return push(c, in, s, len >= 0 && len <= VRF_MAX_TUPLE ? K_TUPLE + len : K_OBJ);
            }
        case OP_LOAD_ATTR:
        case OP_GET_ITER:
            return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_LOAD_METHOD:
            return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) || push(c, in, s, K_NULLABLE)
                       ? c->res->rule
                       : 0;
        case OP_LOAD_SUPER_METHOD:
            return pop_n(c, in, s, 3) || push(c, in, s, K_OBJ) || push(c, in, s, K_NULLABLE)
                       ? c->res->rule
                       : 0;
        case OP_POP_TOP:
            // Discarding is always safe, even a raw iterator word (break pops the
            // buffer word by word); a partial buffer can never satisfy FOR_ITER.
            if (s->d < 1 || s->d - 1 < vrf_floor(s, in->off)) {
                FAIL(VRF_RULE_STACK, "pops below the stack or its block");
            }
            s->d -= 1;
            kclear_above(s, s->d);
            return 0;
        case OP_STORE_NAME:
        case OP_STORE_GLOBAL:
            return pop_n(c, in, s, 1);
        case OP_IMPORT_STAR:
            if (s->d < 1 || kget(s, s->d) != K_MODULE) {
                FAIL(VRF_RULE_STACK, "imports * from a slot not made by IMPORT_NAME");
            }
            return pop_n(c, in, s, 1);
        case OP_DELETE_NAME:
        case OP_DELETE_GLOBAL:
            return 0;
        case OP_STORE_ATTR:
        case OP_STORE_SUBSCR: {
            // The value (deepest operand) may be NULL: that is how del is compiled.
            uint32_t n = op == OP_STORE_ATTR ? 2 : 3;
            if (s->d < n || !is_object_or_null(kget(s, s->d - n + 1))) {
                FAIL(VRF_RULE_STACK, "stores a raw slot or pops below the stack");
            }
            kset(s, s->d - n + 1, K_OBJ);
            return pop_n(c, in, s, n);
        }
        case OP_LOAD_SUBSCR:
            return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_IMPORT_NAME:
            return pop_n(c, in, s, 2) || push(c, in, s, K_MODULE) ? c->res->rule : 0;
        case OP_IMPORT_FROM:
            if (s->d < 1 || !is_object_kind(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "imports from a missing or raw module slot");
            }
            return push(c, in, s, K_OBJ);
        case OP_LOAD_FAST_N:
            if ((r = vrf_use_local(c, in, a))) {
                return r;
            }
            return push(c, in, s, vrf_is_cell_local(c, a) ? K_CELL : K_OBJ);
        case OP_STORE_FAST_N:
        case OP_DELETE_FAST:
            if ((r = vrf_use_local(c, in, a))) {
                return r;
            }
            if (vrf_is_cell_local(c, a)) {
                FAIL(VRF_RULE_STACK, "overwrites a closure cell with a plain value");
            }
            return op == OP_STORE_FAST_N ? pop_n(c, in, s, 1) : 0;
        case OP_LOAD_DEREF:
        case OP_STORE_DEREF:
        case OP_DELETE_DEREF:
            if ((r = vrf_use_local(c, in, a))) {
                return r;
            }
            if (!vrf_is_cell_local(c, a)) {
                FAIL(VRF_RULE_STACK, "dereferences a local that is not a cell");
            }
            if (op == OP_LOAD_DEREF) {
                return push(c, in, s, K_OBJ);
            }
            return op == OP_STORE_DEREF ? pop_n(c, in, s, 1) : 0;
        case OP_DUP_TOP:
            if (s->d < 1 || is_raw(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "duplicates a missing or raw slot");
            }
            return push(c, in, s, kget(s, s->d));
        case OP_DUP_TOP_TWO: {
            if (s->d < 2 || is_raw(kget(s, s->d)) || is_raw(kget(s, s->d - 1))) {
                FAIL(VRF_RULE_STACK, "duplicates missing or raw slots");
            }
            int k1 = kget(s, s->d - 1), k0 = kget(s, s->d);
            return push(c, in, s, k1) || push(c, in, s, k0) ? c->res->rule : 0;
        }
        case OP_ROT_TWO:
        case OP_ROT_THREE: {
            uint32_t n = op == OP_ROT_TWO ? 2 : 3;
            if ((r = vrf_async_tail(c, in, s)) >= 0) {
                return r;
            }
            if (s->d < n || s->d - n < vrf_floor(s, in->off)) {
                FAIL(VRF_RULE_STACK, "rotates slots below the stack or its block");
            }
            int k[3];
            for (uint32_t i = 0; i < n; i++) {
                k[i] = kget(s, s->d - n + 1 + i);
                if (is_raw(k[i])) {
                    FAIL(VRF_RULE_STACK, "rotates a raw slot");
                }
            }
            // ROT_TWO: (a, b) -> (b, a); ROT_THREE: (a, b, c) -> (c, a, b).
            for (uint32_t i = 0; i < n; i++) {
                kset(s, s->d - n + 1 + i, k[(i + n - 1) % n]);
            }
            return 0;
        }
        case OP_BUILD_TUPLE:
        case OP_BUILD_LIST:
        case OP_BUILD_SET:
            if (a > VRF_MAX_DEPTH) {
                FAIL(VRF_RULE_STACK, "builds from more slots than the stack holds");
            }
            return pop_n(c, in, s, a) || push(c, in, s,
                                              op == OP_BUILD_LIST  ? K_LIST
                                              : op == OP_BUILD_SET ? K_SET
                                              : a <= VRF_MAX_TUPLE ? K_TUPLE + (int)a
                                                                   : K_OBJ)
                       ? c->res->rule
                       : 0;
        case OP_BUILD_MAP:
            return push(c, in, s, K_MAP);
        case OP_BUILD_SLICE:
            if (a != 2 && a != 3) {
                FAIL(VRF_RULE_DECODE, "slice of neither 2 nor 3 items");
            }
            return pop_n(c, in, s, a) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_STORE_MAP:
            if ((r = pop_n(c, in, s, 2))) {
                return r;
            }
            if (s->d < 1 || kget(s, s->d) != K_MAP) {
                FAIL(VRF_RULE_STACK, "stores into a slot not made by BUILD_MAP");
            }
            return 0;
        case OP_STORE_COMP: {
            uint32_t idx = a >> 2, kind = a & 3;
            int want = kind == 0 ? K_LIST : kind == 1 ? K_MAP : K_SET;
            if (idx >= s->d || kget(s, s->d - idx) != want) {
                FAIL(VRF_RULE_STACK, "comprehension target is not the collection it needs");
            }
            return pop_n(c, in, s, kind == 1 ? 2 : 1);
        }
        case OP_UNPACK_SEQUENCE:
            if (a > VRF_MAX_DEPTH || (r = pop_n(c, in, s, 1))) {
                return r ? r
                         : vrf_fail(c->res, VRF_RULE_LIMIT, in->off, in->op, "unpacks too many",
                                    "");
            }
            for (uint32_t i = 0; i < a; i++) {
                if ((r = push(c, in, s, K_OBJ))) {
                    return r;
                }
            }
            return 0;
        case OP_UNPACK_EX: {
            uint32_t n = (a & 0xff) + ((a >> 8) & 0xff) + 1;
            if (a > 0xffff) {
                FAIL(VRF_RULE_DECODE, "unpack counts out of range");
            }
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            for (uint32_t i = 0; i < n; i++) {
                if ((r = push(c, in, s, K_OBJ))) {
                    return r;
                }
            }
            return 0;
        }
        case OP_MAKE_FUNCTION:
        case OP_MAKE_FUNCTION_DEFARGS:
        case OP_MAKE_CLOSURE:
        case OP_MAKE_CLOSURE_DEFARGS: {
            if (a >= c->fn->n_children) {
                FAIL(VRF_RULE_DECODE, "child index out of range");
            }
            if (a >= VRF_MAX_CHILDREN) {
                FAIL(VRF_RULE_LIMIT, "more children than the verifier tracks");
            }
            int closure = op == OP_MAKE_CLOSURE || op == OP_MAKE_CLOSURE_DEFARGS;
            uint32_t n_closed = closure ? in->extra : 0;
            if (closure) {
                if (n_closed > s->d) {
                    FAIL(VRF_RULE_STACK, "closes over more cells than are on the stack");
                }
                for (uint32_t i = 0; i < n_closed; i++) {
                    if (kget(s, s->d - i) != K_CELL) {
                        FAIL(VRF_RULE_STACK, "closes over a slot that is not a cell");
                    }
                }
                if (s->d - n_closed < vrf_floor(s, in->off)) {
                    FAIL(VRF_RULE_BLOCK, "pops below the base of its exception block");
                }
                s->d -= n_closed;
                kclear_above(s, s->d);
            }
            vrf_child_t how = { (int16_t)n_closed, 0, 0, 0 };
            if (op == OP_MAKE_FUNCTION_DEFARGS || op == OP_MAKE_CLOSURE_DEFARGS) {
                // (defaults tuple or NULL, keyword-defaults dict or NULL): the VM only
                // asserts their types, and the child's prelude says how many to read.
                int kt = kget(s, s->d - 1), kd = kget(s, s->d);
                int tuple = kt >= K_TUPLE && kt <= K_TUPLE + VRF_MAX_TUPLE;
                if (s->d < 2 || (kt != K_NULL && !tuple) || (kd != K_NULL && kd != K_MAP)) {
                    FAIL(VRF_RULE_STACK, "default arguments are not a tuple and a dict");
                }
                how.n_defaults = (int16_t)(tuple ? kt - K_TUPLE : 0);
                how.kw_defaults = kd == K_MAP;
                kset(s, s->d - 1, K_OBJ);
                kset(s, s->d, K_OBJ);
                if ((r = pop_n(c, in, s, 2))) {
                    return r;
                }
            }
            how.class_body = kget(s, s->d) == K_BUILDCLASS;
            if (!vrf_s_child_made[a]) {
                vrf_s_child[a] = how;
                vrf_s_child_made[a] = 1;
            } else if (memcmp(&vrf_s_child[a], &how, sizeof(how)) != 0) {
                vrf_s_child_made[a] = 2;
            }
            return push(c, in, s, how.class_body ? K_CLASSBODY : K_OBJ);
        }
        case OP_CALL_FUNCTION:
        case OP_CALL_FUNCTION_VAR_KW:
            return call_pops(c, in, s, 0, op == OP_CALL_FUNCTION_VAR_KW);
        case OP_CALL_METHOD:
        case OP_CALL_METHOD_VAR_KW:
            return call_pops(c, in, s, 1, op == OP_CALL_METHOD_VAR_KW);
        case OP_RETURN_VALUE:
            if (c->fn->class_body && kget(s, s->d) != K_NONE && kget(s, s->d) != K_CELL) {
                FAIL(VRF_RULE_STACK, "returns from a class body something but None or a cell");
            }
            // The VM's unwind carries the value down block by block (py/vm.c
            // unwind_return): it cancels an active finally by taking the slot just
            // below the value for that handler's cause (CANCEL_ACTIVE_FINALLY), and
            // runs an inactive one with the value moved just above its base. So the
            // value must sit right above each active handler's cause when the unwind
            // reaches it: nothing of the handler's own (an iterator, a temporary) may
            // lie between. An async-with handler runs no user code: nothing returns
            // from inside it.
            for (uint32_t b = s->blk, p = s->d; b; b = vrf_s_nparent[b - 1]) {
                int bop = node_op(c, b);
                uint32_t base = node_base(b);
                if (vrf_node_async(b) && node_active(b, in->off)) {
                    FAIL(VRF_RULE_BLOCK, "returns from inside an async-with handler");
                }
                if (bop == OP_SETUP_EXCEPT) {
                    continue;
                }
                if (node_active(b, in->off)) {
                    if (p != base + 2 || !is_cause(kget(s, base + 1))) {
                        FAIL(VRF_RULE_BLOCK,
                             "returns from a finally handler without the value right on its cause");
                    }
                    p = base + 1;
                    continue;
                }
                if ((r = vrf_unwind_runs(c, in, b))) {
                    return r;
                }
                // The handler runs with the value at base + 1 and hands it back there;
                // WITH_CLEANUP also drops __exit__ and self, an async-with handler its
                // context manager.
                p = base + 1 - (bop == OP_SETUP_WITH ? 2 : vrf_node_async(b) ? 1 : 0);
            }
            *falls = 0;
            return pop_n(c, in, s, 1);
        case OP_RAISE_OBJ:
            *falls = 0;
            return pop_n(c, in, s, 1);
        case OP_RAISE_FROM:
            *falls = 0;
            return pop_n(c, in, s, 2);
        case OP_RAISE_LAST:
            *falls = 0;
            return 0;
        case OP_YIELD_VALUE:
        case OP_YIELD_FROM:
            if (!c->generator) {
                FAIL(VRF_RULE_PRELUDE, "yields in a function not flagged as a generator");
            }
            if (op == OP_YIELD_VALUE) {
                return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
            }
            return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_JUMP:
            *falls = 0;
            return flow_to(c, in, in->target, s);
        case OP_POP_JUMP_IF_TRUE:
        case OP_POP_JUMP_IF_FALSE:
            return pop_n(c, in, s, 1) || flow_to(c, in, in->target, s) ? c->res->rule : 0;
        case OP_JUMP_IF_TRUE_OR_POP:
        case OP_JUMP_IF_FALSE_OR_POP:
            if (s->d < 1 || !is_object_kind(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "tests a missing or raw slot");
            }
            return flow_to(c, in, in->target, s) || pop_n(c, in, s, 1) ? c->res->rule : 0;
        case OP_SETUP_WITH:
        case OP_SETUP_EXCEPT:
        case OP_SETUP_FINALLY:
        case OP_POP_EXCEPT_JUMP:
        case OP_WITH_CLEANUP:
        case OP_END_FINALLY:
        case OP_UNWIND_JUMP:
            return vrf_block_op(c, in, s, falls);
        case OP_GET_ITER_STACK:
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            for (uint32_t i = 0; i < VRF_ITER_NSLOTS; i++) {
                if ((r = push(c, in, s, K_RAW + (int)i))) {
                    return r;
                }
            }
            return 0;
        case OP_FOR_ITER: {
            if (s->d < VRF_ITER_NSLOTS || s->d - VRF_ITER_NSLOTS < vrf_floor(s, in->off)) {
                FAIL(VRF_RULE_STACK, "iterates without an iterator buffer");
            }
            if (!vrf_is_iter_buf(s, s->d)) {
                FAIL(VRF_RULE_STACK, "iterates over slots that are not an iterator buffer");
            }
            st_t done = *s;
            done.d -= VRF_ITER_NSLOTS;
            kclear_above(&done, done.d);
            if ((r = flow_to(c, in, in->target, &done))) {
                return r;
            }
            return push(c, in, s, K_OBJ);
        }
        default:
            FAIL(VRF_RULE_DECODE, "opcode not handled");
    }
}
