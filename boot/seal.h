// SPDX-License-Identifier: MIT
// Layout of the seal record that tools/build/seal.py finds and fills in BOOTX64.EFI.
#ifndef LOCIOS_BOOT_SEAL_H
#define LOCIOS_BOOT_SEAL_H

#include <stdint.h>

// 16 bytes: "LOCIOS-SEAL-v1" and two NULs. It must occur exactly once in the loader
// file, so no other string in the loader may contain it followed by two NULs.
#define SEAL_MAGIC_LEN  16
#define SEAL_DIGEST_LEN 32

struct seal_record {
    char magic[SEAL_MAGIC_LEN];
    uint8_t digest[SEAL_DIGEST_LEN];  // SHA-256 of \LOCIOS\KERNEL.ELF; zero = unsealed
};

#endif
