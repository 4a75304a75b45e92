// SPDX-License-Identifier: MIT
// Layout of the .ksymtab blob that tools/build/symtab.py builds: a header, function entries
// sorted by address, then NUL-terminated names. All little-endian.
#ifndef LOCIOS_KERNEL_KSYMTAB_H
#define LOCIOS_KERNEL_KSYMTAB_H

#include <stdint.h>

#define KSYMTAB_MAGIC   0x4d59534bu  // "KSYM"
#define KSYMTAB_VERSION 1

struct ksymtab_header {
    uint32_t magic;
    uint32_t version;
    uint32_t count;       // entries that follow the header
    uint32_t strtab_off;  // byte offset of the names, from the start of the header
};

struct ksymtab_entry {
    uint64_t addr;
    uint32_t size;      // 0 when the ELF symbol had none: covers up to the next entry
    uint32_t name_off;  // byte offset into the names
};

#endif
