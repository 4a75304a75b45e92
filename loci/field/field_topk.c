// SPDX-License-Identifier: MIT
// top-k: the k largest committed values of a flavour, largest first; ties go to the
// lower cell index (grid) or the earlier key (keyed). Zero values are never listed.
#include <string.h>

#include "field_internal.h"

// out[0..*n) is kept sorted; a candidate is inserted where it belongs and the last
// element falls off when the list is full. Candidates arrive in index order, so on
// equal values the one already in the list stays ahead.
static void offer(field_hit_t *out, uint32_t k, uint32_t *n, uint32_t index, float value) {
    if (*n == k && !(value > out[k - 1].value)) {
        return;
    }
    uint32_t pos = *n < k ? *n : k - 1;
    while (pos > 0 && value > out[pos - 1].value) {
        pos--;
    }
    uint32_t end = *n < k ? *n : k - 1;
    memmove(&out[pos + 1], &out[pos], (size_t)(end - pos) * sizeof(field_hit_t));
    memset(&out[pos], 0, sizeof out[pos]);
    out[pos].index = index;
    out[pos].value = value;
    if (*n < k) {
        (*n)++;
    }
}

int field_topk(const field_t *f, uint32_t flavour, uint32_t k, field_hit_t *out, uint32_t *n) {
    const field_flavour_t *fl = field_flavour_c(f, flavour);
    if (!fl) {
        return f ? FIELD_ERR_FLAVOUR : FIELD_ERR_ARG;
    }
    if (!n || (k && !out)) {
        return FIELD_ERR_ARG;
    }
    *n = 0;
    if (k == 0) {
        return FIELD_OK;
    }
    if (fl->kind == FIELD_GRID) {
        for (uint32_t i = 0; i < fl->w * fl->h; i++) {
            if (fl->cells[i] > 0.0f) {
                offer(out, k, n, i, fl->cells[i]);
            }
        }
    } else {
        for (uint32_t i = 0; i < fl->count; i++) {
            if (fl->entries[i].value > 0.0f) {
                offer(out, k, n, i, fl->entries[i].value);
            }
        }
        for (uint32_t j = 0; j < *n; j++) {
            const field_entry_t *e = &fl->entries[out[j].index];
            out[j].keylen = e->len;
            memcpy(out[j].key, e->key, FIELD_KEY_MAX);
        }
    }
    return FIELD_OK;
}
