// SPDX-License-Identifier: MIT
// Benchmark driver for the verifier, to be run under callgrind: verifies every function
// of a corpus (see vrf_fuzz.c for the format) once, or only the largest one.
//   vrf_bench CORPUS all|largest  ->  "functions N bytes B largest L"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../verify.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CORPUS all|largest\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)size);
    if (fread(data, 1, (size_t)size, f) != (size_t)size) {
        return 2;
    }
    fclose(f);
    int largest_only = strcmp(argv[2], "largest") == 0;
    uint32_t best = 0;
    long best_at = -1;
    for (long p = 0; p + 32 <= size;) {
        uint32_t hdr[8];
        memcpy(hdr, data + p, 32);
        if (hdr[0] > best) {
            best = hdr[0];
            best_at = p;
        }
        p += 32 + hdr[0];
    }
    static vrf_result_t res;
    unsigned long functions = 0, bytes = 0, failed = 0;
    for (long p = 0; p + 32 <= size;) {
        uint32_t hdr[8];
        memcpy(hdr, data + p, 32);
        if (!largest_only || p == best_at) {
            vrf_fn_t fn = { data + p + 32,
                            hdr[0],
                            hdr[1],
                            hdr[2],
                            hdr[3],
                            hdr[4],
                            NULL,
                            NULL,
                            NULL,
                            0,
                            (uint8_t)hdr[5],
                            (int16_t)(int32_t)hdr[6],
                            (int8_t)(int32_t)hdr[7] };
            if (vrf_verify_fn(&fn, &vrf_profile_trusted, &res) != VRF_OK) {
                failed++;
            }
            functions++;
            bytes += hdr[0];
        }
        p += 32 + hdr[0];
    }
    printf("functions %lu bytes %lu largest %u failed %lu\n", functions, bytes, best, failed);
    free(data);
    return 0;
}
