// SPDX-License-Identifier: MIT
// Unix oracle only: LOCIOS_RW_AGGRESSIVE=1 in the environment turns aggressive mode on
// before main, so every function of a test is rewritten at its first call; with
// LOCIOS_RW_STATS=<file>, the counters are appended to that file at exit (one line).
// LOCIOS_NATIVE_TIER=1 compiles all native code as the optimiser's second tier compiles
// its twins (direct calls and iteration, vm/patches/0021; make native-suite), and
// LOCIOS_NATIVE_COUNT=1 as it compiles a Locus step's twin (every jump polls, the entry
// charges an op: vm/patches/0023). LOCIOS_NATIVE_FLOAT=3 gives every float site its fast
// path, guarded as floats (vm/patches/0029). LOCIOS_NATIVE_INLINE=2 inlines every call of
// a small def of the same text (vm/patches/0030); with LOCIOS_NATIVE_STATS=<file>, the
// calls inlined and the float fast paths made are appended to that file at exit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py/nativeglue.h"
#include "rw_aggr.h"
#include "rw_native_heat.h"

__attribute__((constructor)) static void rw_unix_tier_from_env(void) {
    const char *v = getenv("LOCIOS_NATIVE_TIER");
    if (v != NULL && strcmp(v, "1") == 0) {
        rw_native_tier_init();
        mp_native_direct_calls = true;
    }
    v = getenv("LOCIOS_NATIVE_COUNT");
    if (v != NULL && strcmp(v, "1") == 0) {
        mp_native_count_ops = true;
    }
#ifdef MP_NATIVE_FLOAT_ALL
    v = getenv("LOCIOS_NATIVE_FLOAT");
    if (v != NULL && strcmp(v, "3") == 0) {
        mp_native_float_mode = MP_NATIVE_FLOAT_ALL;
    }
    v = getenv("LOCIOS_NATIVE_INLINE");
    if (v != NULL && strcmp(v, "2") == 0) {
        mp_native_inline_mode = MP_NATIVE_INLINE_ALL;
    }
#endif
}

__attribute__((constructor)) static void rw_unix_aggressive_from_env(void) {
    const char *v = getenv("LOCIOS_RW_AGGRESSIVE");
    if (v != NULL && strcmp(v, "1") == 0) {
        rw_enter_flags = RW_ENTER_AGGRESSIVE;  // rw_aggr_set would allocate: the heap is not up yet
    }
}

__attribute__((destructor)) static void rw_unix_stats_at_exit(void) {
    const char *path = getenv("LOCIOS_RW_STATS");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f == NULL) {
        return;
    }
    const rw_aggr_stats_t *s = rw_aggr_stats();
    fprintf(f, "seen=%u rewritten=%u refused=%u too_big=%u frozen=%u unchanged=%u",
            (unsigned)s->seen, (unsigned)s->rewritten, (unsigned)s->refused, (unsigned)s->too_big,
            (unsigned)s->frozen, (unsigned)s->unchanged);
    for (int k = 0; k < RW_KIND_N; k++) {
        fprintf(f, " %s=%u", rw_kind_name(k), (unsigned)s->edits[k]);
    }
    fprintf(f, " last_refusal=%s\n", s->last_refusal[0] ? s->last_refusal : "-");
    fclose(f);
}

__attribute__((destructor)) static void rw_unix_native_stats_at_exit(void) {
#ifdef MP_NATIVE_FLOAT_ALL
    const char *path = getenv("LOCIOS_NATIVE_STATS");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f == NULL) {
        return;
    }
    fprintf(f, "inlined=%zu float_fast=%zu unboxed=%zu\n", mp_native_inline_made,
            mp_native_float_made, mp_native_float_unboxed);
    fclose(f);
#endif
}
