// SPDX-License-Identifier: MIT
// Rejection messages without libc formatting: "verify: offset 0x2a LOAD_GLOBAL
// 'machine' not permitted by profile 'locus' (rule 7: profile)".
#include <string.h>

#include "vrf_internal.h"

static const char *const rule_names[] = {
    "ok", "decode", "prelude", "flow", "stack", "block", "interrupt", "profile", "limit",
};

const char *vrf_rule_name(int rule) {
    if (rule < 0 || rule > VRF_RULE_LIMIT) {
        return "?";
    }
    return rule_names[rule];
}

size_t vrf_strlcat_n(char *dst, const char *src, size_t n, size_t cap) {
    size_t d = strlen(dst);
    size_t i = 0;
    while (i < n && src[i] && d + 1 < cap) {
        dst[d++] = src[i++];
    }
    dst[d] = 0;
    return d;
}

size_t vrf_strlcat(char *dst, const char *src, size_t cap) {
    return vrf_strlcat_n(dst, src, strlen(src), cap);
}

void vrf_append_hex(char *dst, uint32_t v, size_t cap) {
    char buf[12];
    int n = 0;
    do {
        buf[n++] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v);
    char out[14] = "0x";
    for (int i = 0; i < n; i++) {
        out[2 + i] = buf[n - 1 - i];
    }
    out[2 + n] = 0;
    vrf_strlcat(dst, out, cap);
}

void vrf_append_dec(char *dst, uint32_t v, size_t cap) {
    char buf[12];
    int n = 0;
    do {
        buf[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char out[12];
    for (int i = 0; i < n; i++) {
        out[i] = buf[n - 1 - i];
    }
    out[n] = 0;
    vrf_strlcat(dst, out, cap);
}

int vrf_streq_n(const char *a, const char *b, size_t blen) {
    return strlen(a) == blen && memcmp(a, b, blen) == 0;
}

int vrf_fail(vrf_result_t *res, int rule, uint32_t off, int op, const char *what,
             const char *detail) {
    res->rule = rule;
    res->offset = off;
    res->opcode = op;
    res->msg[0] = 0;
    vrf_strlcat(res->msg, "verify: offset ", sizeof(res->msg));
    vrf_append_hex(res->msg, off, sizeof(res->msg));
    if (op >= 0) {
        vrf_strlcat(res->msg, " ", sizeof(res->msg));
        vrf_strlcat(res->msg, vrf_opcode_name(op), sizeof(res->msg));
    }
    if (detail && detail[0]) {
        vrf_strlcat(res->msg, " ", sizeof(res->msg));
        vrf_strlcat(res->msg, detail, sizeof(res->msg));
    }
    vrf_strlcat(res->msg, " ", sizeof(res->msg));
    vrf_strlcat(res->msg, what, sizeof(res->msg));
    vrf_strlcat(res->msg, " (rule ", sizeof(res->msg));
    vrf_append_dec(res->msg, (uint32_t)rule, sizeof(res->msg));
    vrf_strlcat(res->msg, ": ", sizeof(res->msg));
    vrf_strlcat(res->msg, vrf_rule_name(rule), sizeof(res->msg));
    vrf_strlcat(res->msg, ")", sizeof(res->msg));
    return rule;
}
