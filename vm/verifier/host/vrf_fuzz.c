// SPDX-License-Identifier: MIT
// Host fuzz driver for the verifier, built with AddressSanitizer: mutates real
// functions (byte flips, truncation, insertion, jump retargeting, prelude corruption)
// and verifies each from an exact-size heap copy, so any out-of-bounds read is caught.
//   vrf_fuzz CORPUS ITERATIONS SEED  ->  prints "cases N accepted A rejected R max_steps S"
// CORPUS records: u32 len, n_qstr, n_obj, n_children, n_free, class_body, i32 n_defaults,
// i32 kw_defaults, then the code (vrf_host.corpus_records).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../verify.h"

typedef struct {
    uint8_t *code;
    uint32_t len, n_qstr, n_obj, n_children, n_free, class_body;
    int32_t n_defaults, kw_defaults;
} seed_t;

static uint64_t rng_state;

static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

// Every qstr index resolves to one of a few names, some of them denied by "locus".
static const char *fuzz_qstr(void *ctx, uint32_t q, size_t *len) {
    static const char *const names[] = { "x", "machine", "__class__", "math", "print" };
    (void)ctx;
    const char *s = names[q % 5];
    *len = strlen(s);
    return s;
}

static int fuzz_obj_kind(void *ctx, uint32_t i) {
    (void)ctx;
    return (int)(i & 1);
}

static seed_t *load(const char *path, size_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 64, n = 0;
    seed_t *seeds = malloc(cap * sizeof(*seeds));
    uint32_t hdr[8];
    while (fread(hdr, sizeof(hdr), 1, f) == 1) {
        if (n == cap) {
            cap *= 2;
            seeds = realloc(seeds, cap * sizeof(*seeds));
        }
        seed_t *s = &seeds[n++];
        s->len = hdr[0];
        s->n_qstr = hdr[1];
        s->n_obj = hdr[2];
        s->n_children = hdr[3];
        s->n_free = hdr[4];
        s->class_body = hdr[5];
        s->n_defaults = (int32_t)hdr[6];
        s->kw_defaults = (int32_t)hdr[7];
        s->code = malloc(s->len ? s->len : 1);
        if (fread(s->code, 1, s->len, f) != s->len) {
            fprintf(stderr, "truncated corpus\n");
            exit(2);
        }
    }
    fclose(f);
    *count = n;
    return seeds;
}

// One mutant of seed s into a fresh exact-size buffer; returns its length.
static uint8_t *mutate(const seed_t *s, uint32_t *out_len) {
    uint32_t len = s->len;
    uint8_t *b = malloc(len + 8);
    memcpy(b, s->code, len);
    int kind = (int)(rnd() % 6);
    uint32_t n = 1 + (uint32_t)(rnd() % 4);
    for (uint32_t i = 0; i < n && len; i++) {
        uint32_t at = (uint32_t)(rnd() % len);
        switch (kind) {
            case 0:
                b[at] ^= (uint8_t)(1u << (rnd() % 8));
                break;  // bit flip
            case 1:
                b[at] = (uint8_t)rnd();
                break;  // byte set
            case 2:
                len = at;
                break;  // truncate
            case 3:     // insert
                memmove(b + at + 1, b + at, len - at);
                b[at] = (uint8_t)rnd();
                len++;
                break;
            case 4:
                b[rnd() % (len < 6 ? len : 6)] = (uint8_t)rnd();
                break;  // prelude
            default:    // retarget
                for (uint32_t j = at; j < len; j++) {
                    if ((b[j] & 0xf0) == 0x40 && j + 1 < len) {
                        b[j + 1] = (uint8_t)rnd();
                        break;
                    }
                }
        }
    }
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, b, len);
    free(b);
    *out_len = len;
    return exact;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s CORPUS ITERATIONS SEED\n", argv[0]);
        return 2;
    }
    size_t count;
    seed_t *seeds = load(argv[1], &count);
    unsigned long iters = strtoul(argv[2], NULL, 0);
    rng_state = strtoull(argv[3], NULL, 0) | 1;
    unsigned long accepted = 0, rejected = 0, max_steps = 0;
    static vrf_result_t res;
    for (unsigned long i = 0; i < iters && count; i++) {
        const seed_t *s = &seeds[rnd() % count];
        uint32_t len;
        uint8_t *code = mutate(s, &len);
        uint32_t n_free = (rnd() & 7) ? s->n_free : (uint32_t)(rnd() % 3);
        vrf_fn_t fn = { code,
                        len,
                        s->n_qstr,
                        s->n_obj,
                        s->n_children,
                        n_free,
                        fuzz_qstr,
                        fuzz_obj_kind,
                        NULL,
                        (uint8_t)((i >> 1) & 1),
                        (uint8_t)(s->class_body ^ ((rnd() & 15) == 0)),
                        (int16_t)s->n_defaults,
                        (int8_t)s->kw_defaults };
        const vrf_profile_t *p = (i & 1) ? &vrf_profile_locus : &vrf_profile_trusted;
        int r = vrf_verify_fn(&fn, p, &res);
        if (res.steps > VRF_STEP_FACTOR * len + 16) {
            fprintf(stderr, "step budget exceeded without rejection\n");
            return 1;
        }
        if (res.steps > max_steps) {
            max_steps = res.steps;
        }
        if (r == VRF_OK) {
            accepted++;
            if (res.msg[0]) {
                fprintf(stderr, "accepted with a message\n");
                return 1;
            }
            // vm.names() reads qstr operands back: each in range, offsets increasing.
            uint32_t off = 0, prev = 0, q;
            int op;
            while (vrf_next_qstr(&fn, &res, &off, &op, &q)) {
                if (q >= fn.n_qstr || off <= prev || off > res.end) {
                    fprintf(stderr, "vrf_next_qstr: operand %u at %u out of bounds\n", q, off);
                    return 1;
                }
                prev = off;
            }
        } else {
            rejected++;
            if (strncmp(res.msg, "verify: offset 0x", 17) != 0) {
                fprintf(stderr, "rejection without a proper message: %s\n", res.msg);
                return 1;
            }
        }
        free(code);
    }
    printf("cases %lu accepted %lu rejected %lu max_steps %lu\n", iters, accepted, rejected,
           max_steps);
    for (size_t i = 0; i < count; i++) {
        free(seeds[i].code);
    }
    free(seeds);
    return 0;
}
