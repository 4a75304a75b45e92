// SPDX-License-Identifier: MIT
// The ROM filesystem: the sources of the image's frozen modules (tools/build/mkromfs.py
// makes locios_romfs from port/manifest.py), served read-only to `vfs.rom_ioctl`, whose
// one segment mp_init (py/runtime.c) mounts at /rom each time the VM starts.
#include <stddef.h>
#include <stdint.h>

#include "extmod/vfs.h"
#include "py/mperrno.h"
#include "py/runtime.h"

extern const uint8_t locios_romfs[];
extern const size_t locios_romfs_len;

// vfs.rom_ioctl(1) -> 1 segment; vfs.rom_ioctl(2, 0) -> a read-only memoryview of it.
// Every other request (erasing and writing a segment among them) is -EINVAL: the image's
// memory is read-only.
mp_obj_t mp_vfs_rom_ioctl(size_t n_args, const mp_obj_t *args) {
    switch (mp_obj_get_int(args[0])) {
        case MP_VFS_ROM_IOCTL_GET_NUMBER_OF_SEGMENTS:
            return MP_OBJ_NEW_SMALL_INT(1);
        case MP_VFS_ROM_IOCTL_GET_SEGMENT:
            if (n_args < 2 || mp_obj_get_int(args[1]) != 0) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            // Without MP_OBJ_ARRAY_TYPECODE_FLAG_RW the view refuses writes.
            return mp_obj_new_memoryview('B', locios_romfs_len, (void *)locios_romfs);
        default:
            return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
    }
}
