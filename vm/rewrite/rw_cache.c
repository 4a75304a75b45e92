// SPDX-License-Identifier: MIT
// Storage of the per-site caches (rw_cache.h). Not a GC root on purpose: ip and map are
// only compared with live pointers, never followed.
#include "rw_cache.h"

rw_cache_t rw_cache[RW_CACHE_SLOTS];
