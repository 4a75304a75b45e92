// SPDX-License-Identifier: MIT
// Stack-bound probe for the verifier's soundness oracle (unix port only): for each function
// loaded from a .mpy, the deepest value stack, exception stack and local slot the VM used.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "py/bc.h"
#include "py/bc0.h"
#include "py/objfun.h"
#include "oracle_stack.h"

// One row per bytecode function read from a .mpy, in load order (the raw-code tree in
// preorder, as soundness.py numbers it). A mutant module has a few hundred at most.
#define ORACLE_MAX_FNS 4096

typedef struct {
    const uint8_t *code;
    size_t len;
    long depth, exc, local, low;  // maxima (low: minimum depth) seen so far
} oracle_fn_t;

static oracle_fn_t fns[ORACLE_MAX_FNS];
static size_t n_fns;
static size_t last;  // the row the previous tick used: most ticks stay in one frame
static int log_fd = -2;

// Appends one line to $LOCI_ORACLE_LOG with write(2) as it happens, so a run that dies
// later (signal, sanitizer) still leaves every bound it crossed on record.
static void say(const char *fmt, long a, long b, long c) {
    if (log_fd == -2) {
        const char *path = getenv("LOCI_ORACLE_LOG");
        log_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    }
    if (log_fd < 0) {
        return;
    }
    char line[96];
    int n = snprintf(line, sizeof line, fmt, a, b, c);
    if (n > 0 && write(log_fd, line, (size_t)n) < 0) {
        log_fd = -1;
    }
}

void loci_oracle_loaded(const uint8_t *code, size_t len) {
    if (n_fns == ORACLE_MAX_FNS) {
        say("X %ld %ld %ld\n", (long)n_fns, 0, 0);  // table full: soundness.py fails the run
        return;
    }
    fns[n_fns] = (oracle_fn_t){ code, len, -1, -1, -1, 0 };
    say("L %ld %ld %ld\n", (long)n_fns, (long)len, 0);
    n_fns++;
}

static oracle_fn_t *find(const uint8_t *code) {
    if (last < n_fns && fns[last].code == code) {
        return &fns[last];
    }
    for (size_t i = 0; i < n_fns; i++) {
        if (fns[i].code == code) {
            last = i;
            return &fns[i];
        }
    }
    return NULL;  // compiled by the oracle itself (exec, eval): not a verified function
}

// The local slot index the instruction at ip reads or writes (fastn[-n]), or -1.
static long local_index(const uint8_t *ip) {
    uint8_t op = *ip;
    if (op >= MP_BC_LOAD_FAST_MULTI && op < MP_BC_LOAD_FAST_MULTI + MP_BC_LOAD_FAST_MULTI_NUM) {
        return op - MP_BC_LOAD_FAST_MULTI;
    }
    if (op >= MP_BC_STORE_FAST_MULTI && op < MP_BC_STORE_FAST_MULTI + MP_BC_STORE_FAST_MULTI_NUM) {
        return op - MP_BC_STORE_FAST_MULTI;
    }
    switch (op) {
        case MP_BC_LOAD_FAST_N:
        case MP_BC_STORE_FAST_N:
        case MP_BC_DELETE_FAST:
        case MP_BC_LOAD_DEREF:
        case MP_BC_STORE_DEREF:
        case MP_BC_DELETE_DEREF: {
            long v = 0;
            const uint8_t *p = ip + 1;
            do {
                v = (v << 7) | (*p & 0x7f);
            } while (*p++ & 0x80 && v < (1L << 40));
            return v;
        }
        default:
            return -1;
    }
}

static void note(oracle_fn_t *f, long off, long depth, long exc) {
    if (depth > f->depth) {
        f->depth = depth;
        say("D %ld %ld %ld\n", (long)(f - fns), depth, off);
    }
    if (depth < f->low) {
        f->low = depth;
        say("U %ld %ld %ld\n", (long)(f - fns), depth, off);
    }
    if (exc > f->exc) {
        f->exc = exc;
        say("E %ld %ld %ld\n", (long)(f - fns), exc, off);
    }
}

void loci_oracle_tick(const mp_code_state_t *cs, const uint8_t *ip, const mp_obj_t *sp,
                      const mp_exc_stack_t *exc_sp, const mp_exc_stack_t *exc_stack) {
    oracle_fn_t *f = find(cs->fun_bc->bytecode);
    if (f == NULL) {
        return;
    }
    long off = (long)(ip - f->code);
    note(f, off, (long)(sp - cs->state) + 1, (long)(exc_sp - exc_stack) + 1);
    long n = local_index(ip);
    if (n > f->local) {
        f->local = n;
        say("F %ld %ld %ld\n", (long)(f - fns), n, off);
    }
}

void loci_oracle_scratch(const mp_code_state_t *cs, const uint8_t *ip, const mp_obj_t *top) {
    oracle_fn_t *f = find(cs->fun_bc->bytecode);
    if (f != NULL) {
        note(f, (long)(ip - f->code), (long)(top - cs->state) + 1, f->exc);
    }
}
