// SPDX-License-Identifier: MIT
// The bytecode verifier: proves a MicroPython 1.25.0 bytecode function (and its
// children) well-formed, stack- and block-safe, interruptible and within a profile.
#ifndef LOCIOS_VM_VERIFIER_VERIFY_H
#define LOCIOS_VM_VERIFIER_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "vrf_config.h"

// The rule groups of issue 5; a rejection names one of them.
enum vrf_rule {
    VRF_OK = 0,
    VRF_RULE_DECODE,     // 1. operands in bounds, known opcodes, indices in range
    VRF_RULE_PRELUDE,    // 2. signature, sizes, names, cells; replacement equality
    VRF_RULE_FLOW,       // 3. jump targets on boundaries, no fall-through off the end
    VRF_RULE_STACK,      // 4. depth, merges, raw/NULL slots, n_state bound
    VRF_RULE_BLOCK,      // 5. SETUP_* / POP_EXCEPT_JUMP / END_FINALLY / WITH_CLEANUP
    VRF_RULE_INTERRUPT,  // 6. every cycle polls pending exceptions
    VRF_RULE_PROFILE,    // 7. capability profile; replacement names subset
    VRF_RULE_LIMIT,      // 8. code size, step budget, nesting
};

// Resolves a qstr operand to its text (for profiles and messages). Returns NULL when
// q is not a valid qstr; *len receives the length.
typedef const char *(*vrf_qstr_fn)(void *ctx, uint32_t q, size_t *len);

// Type of constant i (LOAD_CONST_OBJ), as far as the verifier cares.
// VRF_OBJ_INVALID: no constant in that slot (e.g. the slack of a heap table);
// VRF_OBJ_TUPLE + n: a tuple of n <= VRF_MAX_TUPLE items (positional defaults).
enum {
    VRF_OBJ_INVALID = -1,
    VRF_OBJ_OTHER = 0,
    VRF_OBJ_TUPLE = 1
};
#define VRF_MAX_TUPLE (64)
typedef int (*vrf_obj_kind_fn)(void *ctx, uint32_t i);

// One function as the verifier sees it. code/len cover the whole fun_data (prelude
// and opcodes); offsets in messages are from code[0], like ip - fun->bytecode.
typedef struct vrf_fn {
    const uint8_t *code;
    size_t len;
    uint32_t n_qstr;      // qstr operands must be < n_qstr (table size, or qstr count)
    uint32_t n_obj;       // LOAD_CONST_OBJ index bound
    uint32_t n_children;  // MAKE_FUNCTION/MAKE_CLOSURE index bound
    uint32_t n_free;      // locals 0..n_free-1 hold cells passed by the parent's closure
    vrf_qstr_fn qstr;
    vrf_obj_kind_fn obj_kind;  // may be NULL: no constant is known to be a tuple
    void *ctx;
    // 0: len is exact and every byte must decode (rule 1 in full). 1: len is only an
    // upper bound (frozen code, whose arrays are not sized at run time): only bytes
    // reachable from the entry are decoded, each in at most one instruction.
    uint8_t len_is_bound;
    // 1: the parent passes this function to __build_class__, which stores the new class
    // in whatever it returns: it may only return None or a cell.
    uint8_t class_body;
    // What the parent's MAKE_* gives the function object, which the VM indexes by the
    // prelude's counts: n_defaults positional defaults, a keyword-defaults dict or not.
    // -1: not known (a root function), not checked.
    int16_t n_defaults;
    int8_t kw_defaults;
} vrf_fn_t;

// How a parent makes child i (see vrf_child).
typedef struct vrf_child {
    int16_t n_free;      // cells passed by MAKE_CLOSURE (0 for MAKE_FUNCTION)
    int16_t n_defaults;  // positional defaults passed
    int8_t kw_defaults;  // a keyword-defaults dict passed
    uint8_t class_body;  // made on top of LOAD_BUILD_CLASS
} vrf_child_t;

// Capability profile. All pointers may be NULL (no restriction of that kind).
typedef struct vrf_profile {
    const char *name;
    uint8_t op_deny[32];            // bit (op & 7) of op_deny[op >> 3]: opcode refused
    const char *const *imports;     // allowed import names, NULL-terminated; NULL: any
    const char *const *names_deny;  // global/builtin names refused, NULL-terminated
    uint8_t deny_private_attrs;     // refuse every attribute name starting with '_'
    uint8_t deny_closures;          // refuse MAKE_CLOSURE*, LOAD/STORE_DEREF
} vrf_profile_t;

// What was proved (or why not).
typedef struct vrf_result {
    int rule;               // enum vrf_rule
    uint32_t offset;        // of the offending instruction, from code[0]
    int opcode;             // offending opcode, or -1
    uint32_t max_depth;     // deepest value stack reached (objects + raw slots)
    uint32_t max_blocks;    // deepest exception-block nesting
    uint32_t n_locals;      // highest local index used + 1 (incl. args and cells)
    uint32_t n_state;       // from the prelude
    uint32_t n_exc_stack;   // from the prelude
    uint32_t code_offset;   // where the opcodes start
    uint32_t n_insns;       // instructions decoded
    uint32_t steps;         // worklist steps taken
    uint32_t end;           // offset one past the last opcode (trailing zeros excluded)
    uint32_t n_bytes;       // prelude plus the bytes of every decoded instruction
    char msg[VRF_MSG_MAX];  // "verify: offset 0x2a LOAD_GLOBAL 'machine' ..." or ""
} vrf_result_t;

// Built-in profiles: "trusted" (structure only) and "locus" (no hardware, no imports
// outside a short allow-list, no attribute named '_...', no eval/exec/compile).
extern const vrf_profile_t vrf_profile_trusted;
extern const vrf_profile_t vrf_profile_locus;
const vrf_profile_t *vrf_profile_find(const char *name);

// Verifies one function (children are the caller's to walk, see vrf_child).
// Not reentrant: uses static tables sized by vrf_config.h. Returns VRF_OK or a rule.
int vrf_verify_fn(const vrf_fn_t *fn, const vrf_profile_t *profile, vrf_result_t *res);

// Verifies a replacement: new must verify under profile, keep orig's prelude
// (signature, names, cells), and use only qstr and constant operands orig uses.
int vrf_verify_replacement(const vrf_fn_t *new_fn, const vrf_fn_t *orig,
                           const vrf_profile_t *profile, vrf_result_t *res);

// After a successful vrf_verify_fn: how the function makes child i. Returns 0 and
// fills *out, -1 if it never makes child i (it cannot run), -2 if it makes it in two
// different ways (refused: one child, one proof).
int vrf_child(uint32_t child, vrf_child_t *out);

// After a successful vrf_verify_fn(fn, ..., res), before the next call: the next
// instruction at or after *off with a qstr operand (LOAD_NAME, LOAD_ATTR, IMPORT_NAME,
// ...), among those reachable from the entry (dead code cannot run and is skipped).
// Returns 1 with *op and *q (< fn->n_qstr) set and *off moved past it, or 0 when there
// is none. Start with *off = 0.
int vrf_next_qstr(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op, uint32_t *q);
// The same walk over the cell accesses (LOAD_DEREF, STORE_DEREF, DELETE_DEREF): *local is
// the local the cell is in.
int vrf_next_deref(const vrf_fn_t *fn, const vrf_result_t *res, uint32_t *off, int *op,
                   uint32_t *local);

// Name of an opcode ("LOAD_GLOBAL", "BINARY_OP"), or "?" for bytes the VM lacks.
const char *vrf_opcode_name(int op);
const char *vrf_rule_name(int rule);

#endif
