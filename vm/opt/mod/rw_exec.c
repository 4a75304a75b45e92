// SPDX-License-Identifier: MIT
// Where native code went: the port notes each block it commits to the executable arena
// (mp_port_commit_exec), so the journal can digest a native twin's machine code.
#include <string.h>

#include "rw_exec.h"
#include "rw_native_heat.h"
#include "rw_source.h"

// The newest blocks: enough for every native function of a program of some size, so
// the optimiser can digest an original @micropython.native def as well as a twin.
#define RW_EXEC_KEEP (1024)
static struct {
    const void *at;
    size_t len;
    uint32_t src;  // the kept source text it was compiled from (rw_source.c), 0 = none
} rw_exec[RW_EXEC_KEEP];
static size_t rw_exec_next;

void rw_exec_note(const void *at, size_t len) {
    rw_exec[rw_exec_next].at = at;
    rw_exec[rw_exec_next].len = len;
    rw_exec[rw_exec_next].src = rw_src_current;
    rw_exec_next = (rw_exec_next + 1) % RW_EXEC_KEEP;
}

// The machine code of a native function (its whole committed block), or NULL.
const void *rw_exec_block(const void *start, size_t *len) {
    return rw_exec_block_src(start, len, NULL);
}

const void *rw_exec_block_src(const void *start, size_t *len, uint32_t *src) {
    for (size_t i = 0; i < RW_EXEC_KEEP; i++) {
        if (rw_exec[i].at == start && rw_exec[i].len) {
            *len = rw_exec[i].len;
            if (src != NULL) {
                *src = rw_exec[i].src;
            }
            return start;
        }
    }
    return NULL;
}

// Soft reset: the executable arena starts again (and the heat counted in it goes).
void rw_exec_deinit(void) {
    memset(rw_exec, 0, sizeof(rw_exec));
    rw_exec_next = 0;
    rw_native_heat_reset();
}
