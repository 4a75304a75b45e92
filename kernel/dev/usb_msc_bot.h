// SPDX-License-Identifier: MIT
// USB mass storage, Bulk-Only Transport (USB MSC BOT 1.0) and the SCSI commands a disk
// driver needs (SPC-4, SBC-3): building command blocks and checking what the device
// sends back. Everything the device returns is untrusted: each check takes the byte
// count that actually arrived. No hardware access, so the host tests it (cffi).
#ifndef LOCIOS_KERNEL_DEV_USB_MSC_BOT_H
#define LOCIOS_KERNEL_DEV_USB_MSC_BOT_H

#include <stdbool.h>
#include <stdint.h>

#define BOT_CBW_LEN 31
#define BOT_CSW_LEN 13
#define BOT_CBW_SIG 0x43425355u  // "USBC", little-endian
#define BOT_CSW_SIG 0x53425355u  // "USBS"
#define BOT_CDB_MAX 16

// Command Block Wrapper (BOT §5.1) into out[BOT_CBW_LEN]. False when the command block
// length is outside 1..16 or the LUN above 15.
bool bot_cbw(uint8_t *out, uint32_t tag, uint32_t data_len, bool data_in, uint8_t lun,
             const uint8_t *cdb, uint8_t cdb_len);

// What a Command Status Wrapper says (BOT §5.3, §6.3): the command passed or failed
// (its data phase is over either way), a phase error, or a CSW that is not valid (short,
// bad signature, another tag) or not meaningful (a residue above what was asked, an
// unknown status). The last three all call for reset recovery (§5.3.4).
#define BOT_CSW_PASSED      0
#define BOT_CSW_FAILED      1
#define BOT_CSW_PHASE       2
#define BOT_CSW_INVALID     (-1)
#define BOT_CSW_MEANINGLESS (-2)
int bot_csw_check(const uint8_t *csw, uint32_t got, uint32_t tag, uint32_t data_len,
                  uint32_t *residue);

// SCSI command blocks into cdb[BOT_CDB_MAX]; each returns the block's length.
#define SCSI_TEST_UNIT_READY 0x00
#define SCSI_REQUEST_SENSE   0x03
#define SCSI_INQUIRY         0x12
#define SCSI_READ_CAPACITY10 0x25
#define SCSI_READ10          0x28
#define SCSI_WRITE10         0x2a
#define SCSI_SYNC_CACHE10    0x35
#define SCSI_READ16          0x88
#define SCSI_WRITE16         0x8a
#define SCSI_SERVICE_IN16    0x9e  // with service action 0x10: READ CAPACITY(16)

#define SCSI_INQUIRY_LEN    36
#define SCSI_SENSE_LEN      18
#define SCSI_CAPACITY10_LEN 8
#define SCSI_CAPACITY16_LEN 32

uint8_t scsi_test_unit_ready(uint8_t *cdb);
uint8_t scsi_request_sense(uint8_t *cdb, uint8_t alloc_len);
uint8_t scsi_inquiry(uint8_t *cdb, uint8_t alloc_len);
uint8_t scsi_read_capacity10(uint8_t *cdb);
uint8_t scsi_read_capacity16(uint8_t *cdb, uint32_t alloc_len);
uint8_t scsi_sync_cache(uint8_t *cdb);
// READ or WRITE of `count` blocks at `lba`: the 10-byte form when the range fits its
// 32-bit address and 16-bit count, else the 16-byte form. 0 when count is 0 or a block
// of the range would lie at 2^64 or beyond (nothing to send).
uint8_t scsi_rw(uint8_t *cdb, bool write, uint64_t lba, uint32_t count);

// READ CAPACITY data. Returns the block count and sets *block_size; 0 when the data is
// short or names no block. For (10), 0xFFFFFFFF as the last block means the disk is too
// big for it: it then returns 0 and sets *need16.
uint64_t scsi_capacity10(const uint8_t *data, uint32_t got, uint32_t *block_size, bool *need16);
uint64_t scsi_capacity16(const uint8_t *data, uint32_t got, uint32_t *block_size);

// Sense data, fixed (0x70/0x71) or descriptor (0x72/0x73) format. False when it is
// neither or too short to hold the sense key.
struct scsi_sense {
    uint8_t key, asc, ascq;
};
bool scsi_sense_parse(const uint8_t *data, uint32_t got, struct scsi_sense *s);

#define SCSI_KEY_NO_SENSE        0x0
#define SCSI_KEY_RECOVERED       0x1
#define SCSI_KEY_NOT_READY       0x2
#define SCSI_KEY_MEDIUM_ERROR    0x3
#define SCSI_KEY_HARDWARE_ERROR  0x4
#define SCSI_KEY_ILLEGAL_REQUEST 0x5
#define SCSI_KEY_UNIT_ATTENTION  0x6
#define SCSI_KEY_DATA_PROTECT    0x7
#define SCSI_ASC_NO_MEDIUM       0x3a

// After TEST UNIT READY failed: whether waiting may help (becoming ready, a unit
// attention after power-on or a medium change).
bool scsi_sense_transient(const struct scsi_sense *s);
// A short lower-case name of the sense key for messages ("not ready", ...).
const char *scsi_sense_name(uint8_t key);

// INQUIRY data: peripheral device type (0 = direct access block device), removable
// medium, and vendor and product as printable text (control and non-ASCII bytes become
// '?', trailing blanks dropped) into text[cap] ("VENDOR PRODUCT"). False when too short.
struct scsi_inquiry_info {
    uint8_t type;
    bool qualifier_ok;  // peripheral qualifier 0: a device is attached at this LUN
    bool removable;
};
bool scsi_inquiry_parse(const uint8_t *data, uint32_t got, struct scsi_inquiry_info *info,
                        char *text, uint32_t cap);

#endif
