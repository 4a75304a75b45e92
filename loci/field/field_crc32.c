// SPDX-License-Identifier: MIT
// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib.crc32) with a 16-entry
// nibble table: small enough for the kernel image, fast enough for snapshots.
#include "field_internal.h"

static const uint32_t nibble[16] = {
    0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4, 0x4DB26158, 0x5005713C,
    0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C, 0x9B64C2B0, 0x86D3D2D4, 0xA00AE278, 0xBDBDF21C,
};

// Pass 0 to start; feed the result back in to continue.
uint32_t field_crc32(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ nibble[crc & 15];
        crc = (crc >> 4) ^ nibble[crc & 15];
    }
    return ~crc;
}
