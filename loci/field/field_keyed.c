// SPDX-License-Identifier: MIT
// The table of a keyed flavour: a sorted array with binary search. Sorted rather than
// hashed so that iteration, top-k ties, snapshots and digests follow key order alone,
// whatever order the keys arrived in.
#include <string.h>

#include "field_internal.h"

int field_key_check(const uint8_t *key, size_t keylen) {
    if (!key && keylen) {
        return FIELD_ERR_ARG;
    }
    return keylen == 0 || keylen > FIELD_KEY_MAX ? FIELD_ERR_KEY : FIELD_OK;
}

// Order: the zero-padded key bytes compared as unsigned, then the length.
int field_key_cmp(const uint8_t *ka, uint8_t la, const uint8_t *kb, uint8_t lb) {
    uint8_t pa[FIELD_KEY_MAX] = { 0 }, pb[FIELD_KEY_MAX] = { 0 };
    memcpy(pa, ka, la);
    memcpy(pb, kb, lb);
    int c = memcmp(pa, pb, FIELD_KEY_MAX);
    if (c) {
        return c < 0 ? -1 : 1;
    }
    return la < lb ? -1 : la > lb;
}

int field_keyed_find(const field_flavour_t *fl, const uint8_t *key, uint8_t keylen, uint32_t *pos) {
    uint32_t lo = 0, hi = fl->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const field_entry_t *e = &fl->entries[mid];
        int c = field_key_cmp(e->key, e->len, key, keylen);
        if (c == 0) {
            *pos = mid;
            return 1;
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *pos = lo;
    return 0;
}

void field_keyed_insert(field_flavour_t *fl, uint32_t pos, const uint8_t *key, uint8_t keylen) {
    memmove(&fl->entries[pos + 1], &fl->entries[pos],
            (size_t)(fl->count - pos) * sizeof(field_entry_t));
    field_entry_t *e = &fl->entries[pos];
    memset(e, 0, sizeof *e);
    e->len = keylen;
    memcpy(e->key, key, keylen);
    fl->count++;
}
