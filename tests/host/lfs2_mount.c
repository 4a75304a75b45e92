// SPDX-License-Identifier: MIT
// Mounts a littlefs region of a disk image with the lfs2 MicroPython 1.25 carries and the
// configuration the guest mounts /data with (port/modules/storage.py: 512-byte read and
// program units; VfsLfs2 makes the cache 4 of them), then prints every file's
// path, size and first bytes, so tests/host/test_datafs.py can check that what the host
// writes is what the guest reads.  Usage: lfs2_mount IMAGE OFFSET SIZE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfs2.h"

static FILE *disk;
static long base;

static int bd_read(const struct lfs2_config *c, lfs2_block_t b, lfs2_off_t off, void *buf,
                   lfs2_size_t n) {
    if (fseek(disk, base + (long)b * (long)c->block_size + (long)off, SEEK_SET) != 0) {
        return LFS2_ERR_IO;
    }
    return fread(buf, 1, n, disk) == n ? 0 : LFS2_ERR_IO;
}

static int bd_prog(const struct lfs2_config *c, lfs2_block_t b, lfs2_off_t off, const void *buf,
                   lfs2_size_t n) {
    (void)c, (void)b, (void)off, (void)buf, (void)n;
    return LFS2_ERR_IO;  // read-only: the check must not change the image
}

static int bd_erase(const struct lfs2_config *c, lfs2_block_t b) {
    (void)c, (void)b;
    return LFS2_ERR_IO;
}

static int bd_sync(const struct lfs2_config *c) {
    (void)c;
    return 0;
}

static lfs2_t fs;

static int walk(const char *dir) {
    lfs2_dir_t d;
    struct lfs2_info info;
    if (lfs2_dir_open(&fs, &d, dir) < 0) {
        return -1;
    }
    while (lfs2_dir_read(&fs, &d, &info) > 0) {
        if (!strcmp(info.name, ".") || !strcmp(info.name, "..")) {
            continue;
        }
        char path[600];
        snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", info.name);
        if (info.type == LFS2_TYPE_DIR) {
            if (walk(path) < 0) {
                return -1;
            }
            continue;
        }
        static uint8_t fbuf[128];
        lfs2_file_t f;
        struct lfs2_file_config fc = { .buffer = fbuf };
        char head[17] = { 0 };
        if (lfs2_file_opencfg(&fs, &f, path, LFS2_O_RDONLY, &fc) < 0) {
            return -1;
        }
        lfs2_ssize_t got = lfs2_file_read(&fs, &f, head, 16);
        lfs2_file_close(&fs, &f);
        if (got < 0) {
            return -1;
        }
        printf("%s %lu %s\n", path, (unsigned long)info.size, head);
    }
    lfs2_dir_close(&fs, &d);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4 || !(disk = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: lfs2_mount IMAGE OFFSET SIZE\n");
        return 2;
    }
    base = atol(argv[2]);
    static uint8_t rbuf[2048], pbuf[2048], look[32];
    struct lfs2_config cfg = {
        .read = bd_read,
        .prog = bd_prog,
        .erase = bd_erase,
        .sync = bd_sync,
        .read_size = 512,
        .prog_size = 512,
        .block_size = 4096,
        .block_count = (lfs2_size_t)(atol(argv[3]) / 4096),
        .block_cycles = 100,
        .cache_size = 2048,
        .lookahead_size = 32,
        .read_buffer = rbuf,
        .prog_buffer = pbuf,
        .lookahead_buffer = look,
    };
    int err = lfs2_mount(&fs, &cfg);
    if (err < 0) {
        printf("mount failed: %d\n", err);
        return 1;
    }
    if (walk("/") < 0) {
        printf("walk failed\n");
        return 1;
    }
    lfs2_unmount(&fs);
    return 0;
}
