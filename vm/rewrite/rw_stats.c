// SPDX-License-Identifier: MIT
// Guard-miss table of the rewritten opcodes: RW_MISS_SLOTS direct-mapped {ip, count}
// entries, no allocation. Counts are a hint for rollback, not an exact census.
#include "rw_stats.h"

typedef struct {
    const uint8_t *ip;
    uint32_t count;
} rw_miss_slot_t;

// Not a GC root on purpose: an ip is only compared, never followed. A head whose code was
// freed and reused can inherit a stale count until its slot is taken or reset.
static rw_miss_slot_t rw_miss_table[RW_MISS_SLOTS];

static size_t rw_miss_index(const uint8_t *ip) {
    uintptr_t a = (uintptr_t)ip;
    // Heads of one function are a few bytes apart: keep the low bits, fold in the page.
    return (size_t)((a ^ (a >> 8) ^ (a >> 16)) & (RW_MISS_SLOTS - 1));
}

void rw_miss(const uint8_t *ip) {
    rw_miss_slot_t *s = &rw_miss_table[rw_miss_index(ip)];
    if (s->ip != ip) {
        // Direct-mapped: a newcomer evicts the old head (a slot shared by two heads that
        // both keep missing swaps between them, and neither count grows large).
        s->ip = ip;
        s->count = 0;
    }
    if (s->count != UINT32_MAX) {
        s->count++;
    }
}

uint32_t rw_misses_between(const uint8_t *lo, const uint8_t *hi) {
    uint64_t sum = 0;
    for (size_t i = 0; i < RW_MISS_SLOTS; i++) {
        const rw_miss_slot_t *s = &rw_miss_table[i];
        if (s->count && (uintptr_t)s->ip >= (uintptr_t)lo && (uintptr_t)s->ip < (uintptr_t)hi) {
            sum += s->count;
        }
    }
    return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

void rw_misses_reset(void) {
    for (size_t i = 0; i < RW_MISS_SLOTS; i++) {
        rw_miss_table[i].ip = NULL;
        rw_miss_table[i].count = 0;
    }
}
