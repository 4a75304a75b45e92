// SPDX-License-Identifier: MIT
// Block devices: what every disk driver (virtio-blk, NVMe, USB mass storage)
// registers, so the port sees them all the same way. Requests are synchronous and
// bounded: each returns 0 or a negative BLK_E* code, never waits forever.
#ifndef LOCIOS_KERNEL_DEV_BLK_H
#define LOCIOS_KERNEL_DEV_BLK_H

#include <stdbool.h>
#include <stdint.h>

#define BLK_MAX_DEVICES 8
#define BLK_EIO         (-5)   // the device failed the request or did not answer in time
#define BLK_EINVAL      (-22)  // blocks outside the device
#define BLK_EROFS       (-30)  // write to a read-only device

struct blk_dev {
    char name[16];     // "virtio0", ...
    const char *kind;  // "virtio-blk", ...
    uint32_t block_size;
    uint64_t block_count;
    bool read_only;
    bool guarded;  // read_only is the driver's policy (NVMe), not the medium: liftable
    void *priv;
    int (*read)(struct blk_dev *d, uint64_t block, uint32_t count, void *buf);
    int (*write)(struct blk_dev *d, uint64_t block, uint32_t count, const void *buf);
    int (*flush)(struct blk_dev *d);  // NULL when the device has no write cache to flush
};

// Adds a driver's device; false when the table is full.
bool blk_register(struct blk_dev *d);
unsigned blk_count(void);
struct blk_dev *blk_get(unsigned i);
struct blk_dev *blk_find(const char *name);  // NULL if there is none by that name

// Range-checked entry points: every caller goes through these, never the pointers.
int blk_read(struct blk_dev *d, uint64_t block, uint32_t count, void *buf);
int blk_write(struct blk_dev *d, uint64_t block, uint32_t count, const void *buf);
int blk_flush(struct blk_dev *d);

// Lifts (writable) or sets the write guard for this boot. Lifting it works only on a
// guarded device: a medium that is read-only stays so (BLK_EROFS). Any device can be
// made read-only, and one made so this way can be made writable again.
int blk_set_writable(struct blk_dev *d, bool writable);

#endif
