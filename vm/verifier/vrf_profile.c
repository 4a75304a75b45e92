// SPDX-License-Identifier: MIT
// Capability profiles: which opcodes, global names, attribute names and imports a
// piece of code may use. "trusted" checks structure only; "locus" is for spawned Loci.
#include <string.h>

#include "vrf_internal.h"

// Pure modules without shared state or unbounded C loops: not `time` (sleep stops the
// whole mesh where no budget hook runs), `random` (one global state: a channel between
// Loci, and runs no longer reproducible from the mesh seed) or `re` (backtracking in C).
static const char *const locus_imports[] = {
    "math", "struct", "collections", "heapq", "json", "binascii", "errno", "array", NULL,
};

// Names that reach hardware, the kernel, the import machinery or dynamic code.
static const char *const locus_names_deny[] = {
    "machine",    "kernel", "micropython", "gc",      "sys",     "uctypes",
    "__import__", "eval",   "exec",        "compile", "globals", "locals",
    "vars",       "open",   "getattr",     "setattr", "delattr", "__build_class__",
    NULL,
};

const vrf_profile_t vrf_profile_trusted = {
    .name = "trusted",
};

// No opcode is denied: IMPORT_STAR and LOAD_SUPER_METHOD, which the unpatched VM
// trusted with their operands, check them since vm/patches/0002.
// Attributes: none starting with '_', so that private fields of the objects handed to
// a Locus (its ctx) and every dunder chain (__class__, __globals__, __dict__) are out
// of reach. No exception list: calling super().__init__() or x.__init__ re-runs a
// constructor on a live object, and nothing a Locus needs is spelled with '_'.
const vrf_profile_t vrf_profile_locus = {
    .name = "locus",
    .imports = locus_imports,
    .names_deny = locus_names_deny,
    .deny_private_attrs = 1,
};

const vrf_profile_t *vrf_profile_find(const char *name) {
    size_t n = strlen(name);
    if (vrf_streq_n(vrf_profile_trusted.name, name, n)) {
        return &vrf_profile_trusted;
    }
    if (vrf_streq_n(vrf_profile_locus.name, name, n)) {
        return &vrf_profile_locus;
    }
    return NULL;
}

static int in_list(const char *const *list, const char *s, size_t n) {
    for (; *list; list++) {
        if (vrf_streq_n(*list, s, n)) {
            return 1;
        }
    }
    return 0;
}

static void quote(char *detail, size_t cap, const char *s, size_t n) {
    detail[0] = 0;
    vrf_strlcat(detail, "'", cap);
    vrf_strlcat_n(detail, s, n, cap);
    vrf_strlcat(detail, "'", cap);
}

const char *vrf_profile_check(const vrf_fn_t *fn, const vrf_profile_t *prof, const vrf_insn_t *in,
                              char *detail, size_t cap) {
    detail[0] = 0;
    if (prof->op_deny[in->op >> 3] & (1u << (in->op & 7))) {
        return "opcode not permitted by profile";
    }
    int op = in->op;
    if (prof->deny_closures &&
        (op == OP_MAKE_CLOSURE || op == OP_MAKE_CLOSURE_DEFARGS || op == OP_LOAD_DEREF ||
         op == OP_STORE_DEREF || op == OP_DELETE_DEREF)) {
        return "closures not permitted by profile";
    }
    if (in->fmt != FMT_QSTR || op == OP_LOAD_CONST_STRING) {
        return 0;
    }
    size_t n = 0;
    const char *s = fn->qstr ? fn->qstr(fn->ctx, in->arg, &n) : NULL;
    if (s == NULL) {
        // Without names no name-based rule can be proved: refuse unless unrestricted.
        if (prof->names_deny || prof->imports || prof->deny_private_attrs) {
            return "qstr has no text to check against the profile";
        }
        return 0;
    }
    quote(detail, cap, s, n);
    switch (op) {
        case OP_LOAD_NAME:
        case OP_LOAD_GLOBAL:
        case OP_STORE_NAME:
        case OP_STORE_GLOBAL:
        case OP_DELETE_NAME:
        case OP_DELETE_GLOBAL:
        case OP_IMPORT_FROM:
            // `from m import _x` reads an attribute of module m.
            if (op == OP_IMPORT_FROM && prof->deny_private_attrs && n > 0 && s[0] == '_') {
                return "not permitted by profile";
            }
            if (prof->names_deny && in_list(prof->names_deny, s, n)) {
                return "not permitted by profile";
            }
            // Async-with handlers tell an exception from an unwind by the global
            // BaseException (vrf_block.c): a restricted profile may not rebind it.
            if (prof->names_deny && op != OP_LOAD_NAME && op != OP_LOAD_GLOBAL &&
                op != OP_IMPORT_FROM && vrf_streq_n("BaseException", s, n)) {
                return "rebinding not permitted by profile";
            }
            return 0;
        case OP_IMPORT_NAME: {
            if (!prof->imports) {
                return 0;
            }
            // A dotted import is allowed when its first component is.
            size_t head = 0;
            while (head < n && s[head] != '.') {
                head++;
            }
            if (!in_list(prof->imports, s, head)) {
                return "not permitted by profile";
            }
            return 0;
        }
        // STORE_ATTR also deletes (del x.a stores NULL): the opcodes that take an
        // attribute name are these four.
        case OP_LOAD_ATTR:
        case OP_STORE_ATTR:
        case OP_LOAD_METHOD:
        case OP_LOAD_SUPER_METHOD:
            if (prof->deny_private_attrs && n > 0 && s[0] == '_') {
                return "not permitted by profile";
            }
            if (prof->names_deny && in_list(prof->names_deny, s, n)) {
                return "not permitted by profile";
            }
            return 0;
        default:
            return 0;
    }
}
