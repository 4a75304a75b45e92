// SPDX-License-Identifier: MIT
// Feeds the frame allocator from the boot memory map: usable RAM first (bitmap placed
// in it), loader and boot-services memory later, once nothing uses it any more.
#include "config.h"
#include "frame_alloc.h"
#include "kernel.h"

static struct frame_alloc frames;

static bool is_ram_kind(uint32_t kind) {
    return kind == BOOTINFO_MEM_USABLE || kind == BOOTINFO_MEM_RECLAIMABLE;
}

// Add [base, base+len) minus low memory and the kernel image.
static void add_clipped(const struct bootinfo *bi, uint64_t base, uint64_t len) {
    uint64_t end = base + len;
    if (base < KFRAME_LOW_LIMIT) {
        base = KFRAME_LOW_LIMIT;
    }
    if (end <= base) {
        return;
    }
    uint64_t ks = bi->kernel_phys_start & ~(KPAGE_SIZE - 1);
    uint64_t ke = (bi->kernel_phys_end + KPAGE_SIZE - 1) & ~(KPAGE_SIZE - 1);
    if (ke > ks && base < ke && end > ks) {
        if (base < ks) {
            frame_alloc_add(&frames, base / KPAGE_SIZE, (ks - base) / KPAGE_SIZE);
        }
        if (end > ke) {
            frame_alloc_add(&frames, ke / KPAGE_SIZE, (end - ke) / KPAGE_SIZE);
        }
        return;
    }
    frame_alloc_add(&frames, base / KPAGE_SIZE, (end - base) / KPAGE_SIZE);
}

void mm_init_early(const struct bootinfo *bi) {
    uint64_t top = 0;
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        if (is_ram_kind(r->kind) && r->base + r->pages * KPAGE_SIZE > top) {
            top = r->base + r->pages * KPAGE_SIZE;
        }
    }
    uint64_t nframes = top / KPAGE_SIZE;
    uint64_t bitmap_bytes = 2 * frame_alloc_words(nframes) * sizeof(uint64_t);
    uint64_t bitmap_pages = (bitmap_bytes + KPAGE_SIZE - 1) / KPAGE_SIZE;

    uint64_t *bitmap = NULL;
    for (uint32_t i = 0; i < bi->region_count && !bitmap; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        uint64_t end = r->base + r->pages * KPAGE_SIZE;
        uint64_t start = r->base < KFRAME_LOW_LIMIT ? KFRAME_LOW_LIMIT : r->base;
        if (r->kind == BOOTINFO_MEM_USABLE && end > start &&
            (end - start) / KPAGE_SIZE >= bitmap_pages &&
            (start >= bi->kernel_phys_end || start + bitmap_bytes <= bi->kernel_phys_start)) {
            bitmap = (uint64_t *)(uintptr_t)start;
        }
    }
    if (!bitmap) {
        kpanic("no usable memory region can hold the frame bitmap; "
               "the loader's memory map has no usable RAM above 1 MiB");
    }
    frame_alloc_init(&frames, bitmap, nframes);
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        if (r->kind == BOOTINFO_MEM_USABLE) {
            add_clipped(bi, r->base, r->pages * KPAGE_SIZE);
        }
    }
    if (!frame_alloc_take(&frames, (uintptr_t)bitmap / KPAGE_SIZE, bitmap_pages)) {
        kpanic("frame bitmap overlaps memory the allocator does not own");
    }
}

void mm_reclaim(const struct bootinfo *bi) {
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        if (r->kind == BOOTINFO_MEM_RECLAIMABLE) {
            add_clipped(bi, r->base, r->pages * KPAGE_SIZE);
        }
    }
}

uint64_t mm_alloc_frames(uint64_t count) {
    uint64_t first;
    return frame_alloc_alloc(&frames, count, &first) ? first * KPAGE_SIZE : 0;
}

// Take the largest free run, at most `max_frames` long; returns its address.
uint64_t mm_take_largest(uint64_t max_frames, uint64_t *got_frames) {
    uint64_t first, run = frame_alloc_largest_run(&frames, &first);
    if (run > max_frames) {
        run = max_frames;
    }
    *got_frames = 0;
    if (run == 0 || !frame_alloc_take(&frames, first, run)) {
        return 0;
    }
    *got_frames = run;
    return first * KPAGE_SIZE;
}

uint64_t mm_largest_run_frames(void) {
    uint64_t first;
    return frame_alloc_largest_run(&frames, &first);
}

void mm_frame_counts(uint64_t *total, uint64_t *free) {
    *total = frames.total;
    *free = frames.free;
}
