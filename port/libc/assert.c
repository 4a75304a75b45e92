// SPDX-License-Identifier: MIT
// What a failed C assert or a call to abort/exit does in ring 0: say where, then stop
// the machine through the kernel (there is no process to end).
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include "kapi.h"

void __assert_func(const char *file, int line, const char *func, const char *expr) {
    printf("\nassertion failed: %s\n  at %s:%d in %s()\n", expr, file, line, func);
    kpanic("C assertion failed in the MicroPython port");
}

void abort(void) {
    kpanic("abort() called in the MicroPython port");
}

void exit(int status) {
    printf("\nexit(%d) called in the MicroPython port\n", status);
    kpanic("exit() called in the MicroPython port");
}

int abs(int x) {
    return x < 0 ? -x : x;
}

long labs(long x) {
    return x < 0 ? -x : x;
}

long long llabs(long long x) {
    return x < 0 ? -x : x;
}
