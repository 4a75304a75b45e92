// SPDX-License-Identifier: MIT
// The `disk` module: the kernel's block devices (kernel/dev/blk.h) as objects with
// MicroPython's extended block protocol (readblocks/writeblocks with a byte offset,
// ioctl), so vfs.VfsLfs2 and vfs.VfsFat can sit on them directly.
#include <string.h>

#include "extmod/vfs.h"
#include "py/mperrno.h"
#include "py/runtime.h"

#include "kapi.h"

typedef struct {
    mp_obj_base_t base;
    struct blk_dev *dev;
} disk_obj_t;

static NORETURN void raise_vstr(int err, vstr_t *msg) {
    mp_obj_t args[2] = { MP_OBJ_NEW_SMALL_INT(err), mp_obj_new_str_from_vstr(msg) };
    nlr_raise(mp_obj_new_exception_args(&mp_type_OSError, 2, args));
}

static NORETURN void disk_error(struct blk_dev *d, int err, uint64_t block, const char *what) {
    vstr_t msg;
    vstr_init(&msg, 64);
    vstr_printf(&msg, "%s: %s at block %u", d->name, what, (unsigned)block);
    raise_vstr(err, &msg);
}

static void check(struct blk_dev *d, int r, uint64_t block, uint64_t count) {
    if (r == BLK_EINVAL) {
        vstr_t msg;
        vstr_init(&msg, 64);
        vstr_printf(&msg, "%s: blocks %u..%u outside 0..%u", d->name, (unsigned)block,
                    (unsigned)(block + count - 1), (unsigned)(d->block_count - 1));
        mp_obj_t args[2] = { MP_OBJ_NEW_SMALL_INT(MP_EINVAL), mp_obj_new_str_from_vstr(&msg) };
        nlr_raise(mp_obj_new_exception_args(&mp_type_OSError, 2, args));
    } else if (r == BLK_EROFS && d->guarded) {
        vstr_t msg;
        vstr_init(&msg, 96);
        vstr_printf(&msg,
                    "%s: read-only until made writable (disk.Disk('%s').writable(True)), "
                    "write refused at block %u",
                    d->name, d->name, (unsigned)block);
        raise_vstr(MP_EROFS, &msg);
    } else if (r == BLK_EROFS) {
        disk_error(d, MP_EROFS, block, "read-only device, write refused");
    } else if (r) {
        disk_error(d, MP_EIO, block, "device error or timeout");
    }
}

static mp_obj_t disk_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw,
                              const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 1, 1, false);
    const char *name = mp_obj_str_get_str(args[0]);
    struct blk_dev *d = blk_find(name);
    if (!d) {
        mp_raise_msg_varg(&mp_type_OSError, MP_ERROR_TEXT("no disk named '%s'"), name);
    }
    disk_obj_t *o = mp_obj_malloc(disk_obj_t, type);
    o->dev = d;
    return MP_OBJ_FROM_PTR(o);
}

static void disk_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    disk_obj_t *o = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<Disk %s %u x %u%s>", o->dev->name, (unsigned)o->dev->block_count,
              (unsigned)o->dev->block_size, o->dev->read_only ? " ro" : "");
}

// One transfer of `len` bytes at byte `offset` into block `block`. Whole blocks go
// straight to the driver; a partial first or last block is read (and for writes,
// merged and written back) through a one-block scratch buffer.
static void rw(struct blk_dev *d, uint64_t block, uint8_t *buf, size_t len, size_t offset,
               bool write) {
    uint32_t bs = d->block_size;
    if (len == 0) {
        return;
    }
    if (write && d->read_only) {
        check(d, BLK_EROFS, block, 1);
    }
    block += offset / bs;
    offset %= bs;
    uint64_t count = (offset + len + bs - 1) / bs;
    if (block > d->block_count || count > d->block_count - block) {
        check(d, BLK_EINVAL, block, count);
    }
    uint8_t *scratch = NULL;
    while (len) {
        if (offset == 0 && len >= bs) {
            uint32_t n = (uint32_t)(len / bs);
            int r = write ? blk_write(d, block, n, buf) : blk_read(d, block, n, buf);
            check(d, r, block, n);
            block += n, buf += (size_t)n * bs, len -= (size_t)n * bs;
            continue;
        }
        if (!scratch) {
            scratch = m_new(uint8_t, bs);
        }
        size_t part = bs - offset < len ? bs - offset : len;
        check(d, blk_read(d, block, 1, scratch), block, 1);
        if (write) {
            memcpy(scratch + offset, buf, part);
            check(d, blk_write(d, block, 1, scratch), block, 1);
        } else {
            memcpy(buf, scratch + offset, part);
        }
        block++, buf += part, len -= part, offset = 0;
    }
    if (scratch) {
        m_del(uint8_t, scratch, bs);
    }
}

static mp_obj_t disk_transfer(size_t n_args, const mp_obj_t *args, bool write) {
    disk_obj_t *o = MP_OBJ_TO_PTR(args[0]);
    mp_int_t block = mp_obj_get_int(args[1]);
    mp_buffer_info_t bi;
    mp_get_buffer_raise(args[2], &bi, write ? MP_BUFFER_READ : MP_BUFFER_WRITE);
    mp_int_t offset = n_args > 3 ? mp_obj_get_int(args[3]) : 0;
    if (block < 0 || offset < 0) {
        check(o->dev, BLK_EINVAL, block < 0 ? 0 : (uint64_t)block, 1);
    }
    if (n_args <= 3 && bi.len % o->dev->block_size) {
        vstr_t msg;
        vstr_init(&msg, 64);
        vstr_printf(&msg, "%s: buffer of %u bytes is not a multiple of the %u-byte block",
                    o->dev->name, (unsigned)bi.len, (unsigned)o->dev->block_size);
        mp_obj_t e[2] = { MP_OBJ_NEW_SMALL_INT(MP_EINVAL), mp_obj_new_str_from_vstr(&msg) };
        nlr_raise(mp_obj_new_exception_args(&mp_type_OSError, 2, e));
    }
    rw(o->dev, (uint64_t)block, bi.buf, bi.len, (size_t)offset, write);
    return mp_const_none;
}

static mp_obj_t disk_readblocks(size_t n_args, const mp_obj_t *args) {
    return disk_transfer(n_args, args, false);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(disk_readblocks_obj, 3, 4, disk_readblocks);

static mp_obj_t disk_writeblocks(size_t n_args, const mp_obj_t *args) {
    return disk_transfer(n_args, args, true);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(disk_writeblocks_obj, 3, 4, disk_writeblocks);

static mp_obj_t disk_ioctl(mp_obj_t self_in, mp_obj_t op_in, mp_obj_t arg_in) {
    (void)arg_in;
    disk_obj_t *o = MP_OBJ_TO_PTR(self_in);
    switch (mp_obj_get_int(op_in)) {
        case MP_BLOCKDEV_IOCTL_INIT:
        case MP_BLOCKDEV_IOCTL_DEINIT:
        case MP_BLOCKDEV_IOCTL_BLOCK_ERASE:  // nothing to erase: blocks are rewritten
            return MP_OBJ_NEW_SMALL_INT(0);
        case MP_BLOCKDEV_IOCTL_SYNC:
            check(o->dev, blk_flush(o->dev), 0, 1);
            return MP_OBJ_NEW_SMALL_INT(0);
        case MP_BLOCKDEV_IOCTL_BLOCK_COUNT:
            return mp_obj_new_int_from_uint(o->dev->block_count);
        case MP_BLOCKDEV_IOCTL_BLOCK_SIZE:
            return MP_OBJ_NEW_SMALL_INT(o->dev->block_size);
        default:
            return mp_const_none;
    }
}
static MP_DEFINE_CONST_FUN_OBJ_3(disk_ioctl_obj, disk_ioctl);

static mp_obj_t disk_info(mp_obj_t self_in) {
    disk_obj_t *o = MP_OBJ_TO_PTR(self_in);
    mp_obj_t t[4] = {
        mp_obj_new_str_from_cstr(o->dev->kind),
        MP_OBJ_NEW_SMALL_INT(o->dev->block_size),
        mp_obj_new_int_from_uint(o->dev->block_count),
        mp_obj_new_bool(o->dev->read_only),
    };
    return mp_obj_new_tuple(4, t);
}
static MP_DEFINE_CONST_FUN_OBJ_1(disk_info_obj, disk_info);

// writable() tells whether writes are allowed; writable(flag) sets it for this boot.
// Lifting the guard of a device that starts read-only by policy (NVMe) is the user's
// deliberate act; a read-only medium refuses with EROFS.
static mp_obj_t disk_writable(size_t n_args, const mp_obj_t *args) {
    disk_obj_t *o = MP_OBJ_TO_PTR(args[0]);
    if (n_args > 1 && blk_set_writable(o->dev, mp_obj_is_true(args[1])) != 0) {
        vstr_t msg;
        vstr_init(&msg, 64);
        vstr_printf(&msg, "%s: read-only medium, cannot be made writable", o->dev->name);
        raise_vstr(MP_EROFS, &msg);
    }
    return mp_obj_new_bool(!o->dev->read_only);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(disk_writable_obj, 1, 2, disk_writable);

static const mp_rom_map_elem_t disk_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_readblocks), MP_ROM_PTR(&disk_readblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_writeblocks), MP_ROM_PTR(&disk_writeblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_ioctl), MP_ROM_PTR(&disk_ioctl_obj) },
    { MP_ROM_QSTR(MP_QSTR_info), MP_ROM_PTR(&disk_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_writable), MP_ROM_PTR(&disk_writable_obj) },
};
static MP_DEFINE_CONST_DICT(disk_locals, disk_locals_table);

static MP_DEFINE_CONST_OBJ_TYPE(disk_type, MP_QSTR_Disk, MP_TYPE_FLAG_NONE, make_new, disk_make_new,
                                print, disk_print, locals_dict, &disk_locals);

static mp_obj_t disk_devices(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (unsigned i = 0; i < blk_count(); i++) {
        mp_obj_list_append(list, mp_obj_new_str_from_cstr(blk_get(i)->name));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(disk_devices_obj, disk_devices);

static const mp_rom_map_elem_t disk_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_disk) },
    { MP_ROM_QSTR(MP_QSTR_devices), MP_ROM_PTR(&disk_devices_obj) },
    { MP_ROM_QSTR(MP_QSTR_Disk), MP_ROM_PTR(&disk_type) },
};
static MP_DEFINE_CONST_DICT(disk_globals, disk_globals_table);

const mp_obj_module_t mp_module_disk = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&disk_globals,
};

MP_REGISTER_MODULE(MP_QSTR_disk, mp_module_disk);
