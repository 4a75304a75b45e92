// SPDX-License-Identifier: MIT
// Double-precision functions that lib/libm_dbl lacks or that are better as one SSE2
// instruction. py/modmath.c takes their addresses, so they must be real functions.
#include <math.h>
#include <stdint.h>

union dbl_bits {
    double d;
    uint64_t u;
};

#define DBL_SIGN_BIT (UINT64_C(1) << 63)

double fabs(double x) {
    union dbl_bits b = { .d = x };
    b.u &= ~DBL_SIGN_BIT;
    return b.d;
}

double copysign(double x, double y) {
    union dbl_bits bx = { .d = x };
    union dbl_bits by = { .d = y };
    bx.u = (bx.u & ~DBL_SIGN_BIT) | (by.u & DBL_SIGN_BIT);
    return bx.d;
}

double sqrt(double x) {
    // With -fno-math-errno this is a single sqrtsd, correctly rounded by IEEE 754.
    return __builtin_sqrt(x);
}

double nan(const char *tag) {
    (void)tag;
    return NAN;
}

double log2(double x) {
    return log(x) * M_LOG2E;
}

float fabsf(float x) {
    return (float)fabs(x);
}

float floorf(float x) {
    return (float)floor(x);
}

float ceilf(float x) {
    return (float)ceil(x);
}

float sqrtf(float x) {
    return __builtin_sqrtf(x);
}
