// SPDX-License-Identifier: MIT
// The block device registry and its range checks (blk.h).
#include "blk.h"

static struct blk_dev *devs[BLK_MAX_DEVICES];
static unsigned ndevs;

bool blk_register(struct blk_dev *d) {
    if (ndevs == BLK_MAX_DEVICES) {
        return false;
    }
    devs[ndevs++] = d;
    return true;
}

unsigned blk_count(void) {
    return ndevs;
}

struct blk_dev *blk_get(unsigned i) {
    return i < ndevs ? devs[i] : 0;
}

struct blk_dev *blk_find(const char *name) {
    for (unsigned i = 0; i < ndevs; i++) {
        const char *a = devs[i]->name, *b = name;
        while (*a && *a == *b) {
            a++, b++;
        }
        if (*a == *b) {
            return devs[i];
        }
    }
    return 0;
}

// Written so that block + count cannot overflow.
static bool in_range(const struct blk_dev *d, uint64_t block, uint32_t count) {
    return block <= d->block_count && count <= d->block_count - block;
}

int blk_read(struct blk_dev *d, uint64_t block, uint32_t count, void *buf) {
    if (!in_range(d, block, count)) {
        return BLK_EINVAL;
    }
    return count ? d->read(d, block, count, buf) : 0;
}

int blk_write(struct blk_dev *d, uint64_t block, uint32_t count, const void *buf) {
    if (d->read_only) {
        return BLK_EROFS;
    }
    if (!in_range(d, block, count)) {
        return BLK_EINVAL;
    }
    return count ? d->write(d, block, count, buf) : 0;
}

int blk_flush(struct blk_dev *d) {
    return d->flush && !d->read_only ? d->flush(d) : 0;
}

int blk_set_writable(struct blk_dev *d, bool writable) {
    if (!writable) {
        d->guarded = d->guarded || !d->read_only;
        d->read_only = true;
        return 0;
    }
    if (d->read_only && !d->guarded) {
        return BLK_EROFS;
    }
    d->read_only = false;
    return 0;
}
