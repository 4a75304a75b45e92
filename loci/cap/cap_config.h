// SPDX-License-Identifier: MIT
// Tunables of the capability table and its audit log: every size limit in one place.
// The binding (loci/mod/modcap.c) and the host tests read these, never copies of them.
#ifndef LOCIOS_LOCI_CAP_CAP_CONFIG_H
#define LOCIOS_LOCI_CAP_CAP_CONFIG_H

#define CAP_MAX_KEYS     4            // key prefixes per capability
#define CAP_KEY_MAX      15           // bytes in one key prefix (= FIELD_KEY_MAX)
#define CAP_MAX_CAPACITY 1048576      // capability slots per table
#define CAP_MAX_AUDIT    16777216     // audit records per table
#define CAP_REC_SIZE     88           // bytes of one audit record (README.md: layout)
#define CAP_REC_VERSION  1            // byte 17 of every record
#define CAP_HASH_SIZE    32           // SHA-256
#define CAP_ALIGN        16           // arena carve alignment in bytes
#define CAP_NONE         0xffffffffu  // "no slot" (a root's parent, a refused grant)

#endif
