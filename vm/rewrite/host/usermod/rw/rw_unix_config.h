// SPDX-License-Identifier: MIT
// Forced into every file of the unix oracle build (-include, vm/rewrite.mk): vm's hooks
// (vm/vm_hooks.h) as the image has them, less what this build lacks: no budgeted calls,
// no profiler, and the unix port's own soft reset and lexer.
#define LOCIOS_BUDGET_HOOKS (0)
#define LOCIOS_PROF         (0)
#define LOCIOS_VM_IMAGE     (0)
#include "vm_hooks.h"
