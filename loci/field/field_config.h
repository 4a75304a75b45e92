// SPDX-License-Identifier: MIT
// Tunables of the trace field: every size limit and numeric bound in one place.
// The MicroPython module (later) and the host tests read these, never copies of them.
#ifndef LOCIOS_LOCI_FIELD_FIELD_CONFIG_H
#define LOCIOS_LOCI_FIELD_FIELD_CONFIG_H

#define FIELD_MAX_FLAVOURS  16       // flavours per field
#define FIELD_NAME_MAX      15       // bytes in a flavour name
#define FIELD_KEY_MAX       15       // bytes in a key of a keyed flavour
#define FIELD_GRID_MAX_SIDE 4096     // W and H of a grid flavour
#define FIELD_KEYED_MAX_CAP 65536    // entries of a keyed flavour
#define FIELD_CAP_MAX       1.0e30f  // largest saturation cap; keeps every sum finite
#define FIELD_ALIGN         16       // arena carve alignment in bytes
#define FIELD_INVARIANT_TOL 1.0e-5   // default relative tolerance of the mass invariant

#define FIELD_SNAP_MAGIC   "LOCIFLD"  // 7 bytes + NUL = 8 bytes at offset 0
#define FIELD_SNAP_VERSION 1
#define FIELD_SNAP_HEADER  72  // header bytes (see FORMAT.md)
#define FIELD_SNAP_DESC    44  // flavour descriptor bytes
#define FIELD_SNAP_ENTRY   24  // keyed entry bytes: len, key[15], value, pending
#define FIELD_DIGEST_SIZE  32  // SHA-256

// The journal export (FORMAT.md, "Journal export").
#define FIELD_JRN_MAGIC   "LOCIJRN"  // 7 bytes + NUL = 8 bytes at offset 0
#define FIELD_JRN_VERSION 1
#define FIELD_JRN_HEADER  80  // header bytes
#define FIELD_JRN_RECORD  40  // bytes per record

#endif
