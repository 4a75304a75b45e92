// SPDX-License-Identifier: MIT
// Where native code went: the port notes each block it commits to the executable arena
// (mp_port_commit_exec), so the journal can digest a native twin's machine code.
#include <string.h>

#include "rw_exec.h"

#define RW_EXEC_KEEP (64)
static struct {
    const void *at;
    size_t len;
} rw_exec[RW_EXEC_KEEP];
static size_t rw_exec_next;

void rw_exec_note(const void *at, size_t len) {
    rw_exec[rw_exec_next].at = at;
    rw_exec[rw_exec_next].len = len;
    rw_exec_next = (rw_exec_next + 1) % RW_EXEC_KEEP;
}

// The machine code of a native function (its whole committed block), or NULL.
const void *rw_exec_block(const void *start, size_t *len) {
    for (size_t i = 0; i < RW_EXEC_KEEP; i++) {
        if (rw_exec[i].at == start && rw_exec[i].len) {
            *len = rw_exec[i].len;
            return start;
        }
    }
    return NULL;
}

// Soft reset: the executable arena starts again.
void rw_exec_deinit(void) {
    memset(rw_exec, 0, sizeof(rw_exec));
    rw_exec_next = 0;
}
