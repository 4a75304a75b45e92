// SPDX-License-Identifier: MIT
// Bulk-Only Transport framing and SCSI command blocks (usb_msc_bot.h). Multi-byte fields
// of the wrappers are little-endian (USB); those of SCSI command blocks and their data
// are big-endian. Bytes are assembled one at a time, so nothing here depends on the
// host's byte order or alignment.
#include "usb_msc_bot.h"

static void put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}
static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
}
static uint32_t get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void zero(uint8_t *p, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        p[i] = 0;
    }
}

bool bot_cbw(uint8_t *out, uint32_t tag, uint32_t data_len, bool data_in, uint8_t lun,
             const uint8_t *cdb, uint8_t cdb_len) {
    if (cdb_len < 1 || cdb_len > BOT_CDB_MAX || lun > 15) {
        return false;
    }
    zero(out, BOT_CBW_LEN);
    put_le32(out, BOT_CBW_SIG);
    put_le32(out + 4, tag);
    put_le32(out + 8, data_len);
    out[12] = data_in ? 0x80 : 0x00;  // bmCBWFlags: direction of the data, if any
    out[13] = lun;
    out[14] = cdb_len;
    for (unsigned i = 0; i < cdb_len; i++) {
        out[15 + i] = cdb[i];
    }
    return true;
}

int bot_csw_check(const uint8_t *csw, uint32_t got, uint32_t tag, uint32_t data_len,
                  uint32_t *residue) {
    *residue = 0;
    if (got != BOT_CSW_LEN || get_le32(csw) != BOT_CSW_SIG || get_le32(csw + 4) != tag) {
        return BOT_CSW_INVALID;
    }
    uint32_t r = get_le32(csw + 8);
    uint8_t status = csw[12];
    if (status == BOT_CSW_PHASE) {
        return BOT_CSW_PHASE;  // the residue means nothing then (§6.3.1)
    }
    if (status > BOT_CSW_FAILED || r > data_len) {
        return BOT_CSW_MEANINGLESS;
    }
    *residue = r;
    return status;
}

// ---- SCSI command blocks ---------------------------------------------------------------

uint8_t scsi_test_unit_ready(uint8_t *cdb) {
    zero(cdb, BOT_CDB_MAX);
    return 6;
}

uint8_t scsi_request_sense(uint8_t *cdb, uint8_t alloc_len) {
    zero(cdb, BOT_CDB_MAX);
    cdb[0] = SCSI_REQUEST_SENSE;
    cdb[4] = alloc_len;
    return 6;
}

uint8_t scsi_inquiry(uint8_t *cdb, uint8_t alloc_len) {
    zero(cdb, BOT_CDB_MAX);
    cdb[0] = SCSI_INQUIRY;
    cdb[4] = alloc_len;  // the 6-byte form's allocation length: one byte of two
    return 6;
}

uint8_t scsi_read_capacity10(uint8_t *cdb) {
    zero(cdb, BOT_CDB_MAX);
    cdb[0] = SCSI_READ_CAPACITY10;
    return 10;
}

uint8_t scsi_read_capacity16(uint8_t *cdb, uint32_t alloc_len) {
    zero(cdb, BOT_CDB_MAX);
    cdb[0] = SCSI_SERVICE_IN16;
    cdb[1] = 0x10;
    put_be32(cdb + 10, alloc_len);
    return 16;
}

uint8_t scsi_sync_cache(uint8_t *cdb) {
    zero(cdb, BOT_CDB_MAX);
    cdb[0] = SCSI_SYNC_CACHE10;  // LBA 0, 0 blocks: the whole medium
    return 10;
}

uint8_t scsi_rw(uint8_t *cdb, bool write, uint64_t lba, uint32_t count) {
    zero(cdb, BOT_CDB_MAX);
    if (count == 0 || count - 1 > UINT64_MAX - lba) {  // the last block is lba + count - 1
        return 0;
    }
    if (count <= 0xffffu && lba <= 0x100000000ull - count) {  // never computes lba + count
        cdb[0] = write ? SCSI_WRITE10 : SCSI_READ10;
        put_be32(cdb + 2, (uint32_t)lba);
        cdb[7] = (uint8_t)(count >> 8);
        cdb[8] = (uint8_t)count;
        return 10;
    }
    cdb[0] = write ? SCSI_WRITE16 : SCSI_READ16;
    put_be32(cdb + 2, (uint32_t)(lba >> 32));
    put_be32(cdb + 6, (uint32_t)lba);
    put_be32(cdb + 10, count);
    return 16;
}

// ---- Data from the device ------------------------------------------------------------

uint64_t scsi_capacity10(const uint8_t *data, uint32_t got, uint32_t *block_size, bool *need16) {
    *block_size = 0;
    *need16 = false;
    if (got < SCSI_CAPACITY10_LEN) {
        return 0;
    }
    uint32_t last = get_be32(data);
    *block_size = get_be32(data + 4);
    if (last == 0xffffffffu) {
        *need16 = true;
        return 0;
    }
    return (uint64_t)last + 1;
}

uint64_t scsi_capacity16(const uint8_t *data, uint32_t got, uint32_t *block_size) {
    *block_size = 0;
    if (got < 12) {  // the last block and the block length; the rest is not needed
        return 0;
    }
    uint64_t last = (uint64_t)get_be32(data) << 32 | get_be32(data + 4);
    *block_size = get_be32(data + 8);
    return last == UINT64_MAX ? 0 : last + 1;
}

bool scsi_sense_parse(const uint8_t *data, uint32_t got, struct scsi_sense *s) {
    s->key = s->asc = s->ascq = 0;
    if (got < 1) {
        return false;
    }
    uint8_t code = data[0] & 0x7f;
    if (code == 0x70 || code == 0x71) {  // fixed: key at 2, ASC/ASCQ at 12/13 if sent
        if (got < 3) {
            return false;
        }
        s->key = data[2] & 0xf;
        if (got >= 14 && data[7] >= 6) {  // additional length covers bytes 8..13
            s->asc = data[12];
            s->ascq = data[13];
        }
        return true;
    }
    if (code == 0x72 || code == 0x73) {  // descriptor: key, ASC, ASCQ at 1, 2, 3
        if (got < 4) {
            return false;
        }
        s->key = data[1] & 0xf;
        s->asc = data[2];
        s->ascq = data[3];
        return true;
    }
    return false;
}

bool scsi_sense_transient(const struct scsi_sense *s) {
    if (s->key == SCSI_KEY_UNIT_ATTENTION) {
        return true;
    }
    // NOT READY: logical unit becoming ready (04/01) or an operation in progress (04/xx),
    // except "initializing command required" (04/02) and manual intervention (04/03).
    return s->key == SCSI_KEY_NOT_READY && s->asc == 0x04 && s->ascq != 0x02 && s->ascq != 0x03;
}

const char *scsi_sense_name(uint8_t key) {
    static const char *const names[] = {
        "no sense",       "recovered error", "not ready",      "medium error",
        "hardware error", "illegal request", "unit attention", "data protect",
        "blank check",    "vendor specific", "copy aborted",   "aborted command",
        "reserved",       "volume overflow", "miscompare",     "completed",
    };
    return names[key & 0xf];
}

// Vendor (8..15) and product (16..31), each trimmed, joined by one blank.
static uint32_t put_field(const uint8_t *f, unsigned n, char *text, uint32_t at, uint32_t cap) {
    while (n && (f[n - 1] == ' ' || f[n - 1] == 0)) {
        n--;
    }
    unsigned start = 0;
    while (start < n && f[start] == ' ') {
        start++;
    }
    if (start < n && at && at + 1 < cap) {
        text[at++] = ' ';
    }
    for (unsigned i = start; i < n && at + 1 < cap; i++) {
        uint8_t c = f[i];
        text[at++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    return at;
}

bool scsi_inquiry_parse(const uint8_t *data, uint32_t got, struct scsi_inquiry_info *info,
                        char *text, uint32_t cap) {
    if (cap) {
        text[0] = 0;
    }
    if (got < SCSI_INQUIRY_LEN) {
        return false;
    }
    info->type = data[0] & 0x1f;
    info->qualifier_ok = (data[0] >> 5) == 0;
    info->removable = data[1] & 0x80;
    if (cap) {
        uint32_t at = put_field(data + 8, 8, text, 0, cap);
        at = put_field(data + 16, 16, text, at, cap);
        text[at] = 0;
    }
    return true;
}
