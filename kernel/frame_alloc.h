// SPDX-License-Identifier: MIT
// Physical frame allocator: two bitmaps (managed, used) over frame numbers. Plain C
// with no kernel or arch dependencies, so tests/host builds it with cffi.
#ifndef LOCIOS_KERNEL_FRAME_ALLOC_H
#define LOCIOS_KERNEL_FRAME_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame_alloc {
    uint64_t *managed;  // bit set: the frame belongs to the allocator
    uint64_t *used;     // bit set: allocated, or not managed at all
    uint64_t nframes;   // frames the bitmaps cover, numbered from 0
    uint64_t total;     // managed frames
    uint64_t free;      // managed frames not allocated
    uint64_t hint;      // no free frame lies below this frame number
};

// 64-bit words one bitmap needs for `nframes`; frame_alloc_init wants twice as many.
size_t frame_alloc_words(uint64_t nframes);
// Start with no managed frames. `words` holds 2 * frame_alloc_words(nframes) entries.
void frame_alloc_init(struct frame_alloc *fa, uint64_t *words, uint64_t nframes);
// Hand frames [first, first+count) to the allocator as free. Frames beyond nframes or
// already managed are skipped. Returns how many were added.
uint64_t frame_alloc_add(struct frame_alloc *fa, uint64_t first, uint64_t count);
// Allocate exactly [first, first+count); false (nothing changed) unless all are free.
bool frame_alloc_take(struct frame_alloc *fa, uint64_t first, uint64_t count);
// Allocate `count` contiguous frames (lowest fit); false when no run is long enough.
bool frame_alloc_alloc(struct frame_alloc *fa, uint64_t count, uint64_t *first);
// Free an allocated run; false (nothing changed) if any frame is unmanaged or free.
bool frame_alloc_free(struct frame_alloc *fa, uint64_t first, uint64_t count);
// Longest run of free frames: its length, and its first frame in *first.
uint64_t frame_alloc_largest_run(const struct frame_alloc *fa, uint64_t *first);
bool frame_alloc_is_free(const struct frame_alloc *fa, uint64_t frame);

#endif
