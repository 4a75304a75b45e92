// SPDX-License-Identifier: MIT
// What the port gets from memory: the main stack (guard page below), one contiguous GC
// heap, the W^X executable arena (RW+NX identity alias, RX alias at KEXEC_RX_BASE) and
// the statistics.
#include "config.h"
#include "kernel.h"

static uintptr_t stack_limit, stack_top;
static uint8_t *exec_rw;   // identity mapping of the arena frames: write here
static uintptr_t exec_rx;  // execute here
static size_t exec_used;
static void *heap_base;
static size_t heap_size;
static uint64_t ram_bytes, kernel_bytes;

void kmem_init(const struct bootinfo *bi) {
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        if (r->kind == BOOTINFO_MEM_USABLE || r->kind == BOOTINFO_MEM_RECLAIMABLE) {
            ram_bytes += r->pages * KPAGE_SIZE;
        }
    }
    kernel_bytes = bi->kernel_phys_end - bi->kernel_phys_start;

    uint64_t pages = KMAIN_STACK_SIZE / KPAGE_SIZE;
    uint64_t base = mm_alloc_frames(pages + 1);
    if (!base) {
        kpanic("no contiguous memory for the 1 MiB main stack");
    }
    paging_add_guard(base, "main stack");
    stack_limit = base + KPAGE_SIZE;
    stack_top = stack_limit + KMAIN_STACK_SIZE;

    uint64_t arena = mm_alloc_frames(KEXEC_ARENA_SIZE / KPAGE_SIZE);
    if (!arena) {
        kpanic("no contiguous memory for the executable arena");
    }
    exec_rw = (uint8_t *)(uintptr_t)arena;
    exec_rx = KEXEC_RX_BASE;
    for (uint64_t off = 0; off < KEXEC_ARENA_SIZE; off += KPAGE_SIZE) {
        paging_map_4k(exec_rx + off, arena + off, 0);  // present, read + execute
    }
    memset(exec_rw, 0xcc, KEXEC_ARENA_SIZE);  // int3 wherever nothing lives
}

bool kexec_contains(uintptr_t addr) {
    return exec_rw && addr - exec_rx < KEXEC_ARENA_SIZE;
}

void kstack_bounds(uintptr_t *limit, uintptr_t *top) {
    *limit = stack_limit;
    *top = stack_top;
}

bool kstack_contains(uintptr_t addr, uintptr_t *top) {
    if (stack_top && addr >= stack_limit && addr < stack_top) {
        *top = stack_top;
        return true;
    }
    return false;
}

void *kmem_take_heap(size_t floor, size_t ceiling, unsigned percent, size_t *size) {
    if (heap_base) {  // a soft reboot asks again: same region
        *size = heap_size;
        return heap_base;
    }
    uint64_t total, free;
    mm_frame_counts(&total, &free);
    uint64_t want = free * percent / 100 * KPAGE_SIZE;
    if (want < floor) {
        want = floor;
    }
    if (want > ceiling) {
        want = ceiling;
    }
    uint64_t run = mm_largest_run_frames() * KPAGE_SIZE;
    if (want > run) {
        want = run;
    }
    *size = 0;
    if (want < floor || want < KPAGE_SIZE) {
        return NULL;
    }
    uint64_t got;
    uint64_t pa = mm_take_largest(want / KPAGE_SIZE, &got);
    if (!pa) {
        return NULL;
    }
    heap_base = (void *)(uintptr_t)pa;
    heap_size = got * KPAGE_SIZE;
    *size = heap_size;
    return heap_base;
}

// Arena offset of the next block of `len` bytes, or SIZE_MAX when it does not fit.
static size_t exec_next_offset(size_t len) {
    size_t start = (exec_used + KEXEC_ALIGN - 1) & ~(size_t)(KEXEC_ALIGN - 1);
    if (!exec_rw || len > KEXEC_ARENA_SIZE || start > KEXEC_ARENA_SIZE - len) {
        return SIZE_MAX;
    }
    return start;
}

void *kexec_next(size_t len) {
    size_t start = exec_next_offset(len);
    return start == SIZE_MAX ? NULL : (void *)(exec_rx + start);
}

void *kexec_commit(const void *code, size_t len) {
    size_t start = exec_next_offset(len);
    if (start == SIZE_MAX) {
        return NULL;
    }
    memcpy(exec_rw + start, code, len);
    exec_used = start + len;
    // Same physical bytes, other linear address: the CPU snoops stores against its
    // instruction stream by physical address, so no flush is needed (SDM vol. 3, 11.6).
    return (void *)(exec_rx + start);
}

void kexec_reset(void) {
    memset(exec_rw, 0xcc, exec_used);
    exec_used = 0;
}

void kmem_get_stats(struct kmem_stats *out) {
    uint64_t total, free;
    mm_frame_counts(&total, &free);
    out->ram_bytes = ram_bytes;
    out->frames_total = total;
    out->frames_free = free;
    out->kernel_bytes = kernel_bytes;
    out->heap_bytes = heap_size;
    out->exec_bytes_total = KEXEC_ARENA_SIZE;
    out->exec_bytes_used = exec_used;
}
