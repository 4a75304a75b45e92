// SPDX-License-Identifier: MIT
// USB mass storage over the Bulk-Only Transport (usb_msc.h), from USB MSC BOT 1.0:
// each command is a CBW on bulk OUT, its data on bulk IN or OUT, and a CSW on bulk IN
// (§5); a stalled data phase is cleared and the CSW still read, a stalled CSW read once
// more (§6.7.2); anything else unexpected (a timeout, a CSW that is not valid or not
// meaningful, a phase error) ends in reset recovery: Bulk-Only Mass Storage Reset, then
// CLEAR_FEATURE(ENDPOINT_HALT) on both endpoints (§5.3.4). A command that fails (CSW
// status 1) is followed by REQUEST SENSE, whose key decides what happens next.
#include "usb_msc.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "blk.h"
#include "usb.h"
#include "usb_msc_bot.h"

#define BOUNCE_PAGES 16u   // 64 KiB: the most one command moves
#define REQ_RESET    0xff  // Bulk-Only Mass Storage Reset (§3.1)
#define REQ_MAX_LUN  0xfe  // Get Max LUN (§3.2)

// What one command came to.
#define CMD_OK     0
#define CMD_FAILED 1     // CSW status 1: the sense data says why (m->sense)
#define CMD_ERROR  (-1)  // the transport failed; reset recovery was done

struct msc {
    bool registered;         // blk holds a name in the registry (kept across re-plugs)
    struct usb_device *dev;  // NULL: unplugged
    struct blk_dev blk;
    uint8_t iface, ep_in, ep_out;
    uint32_t tag;
    bool no_sync;  // SYNCHRONIZE CACHE refused as unknown: nothing to flush
    uint32_t max_blocks;
    struct scsi_sense sense;
    uint8_t *bounce, *small;  // 64 KiB of data; a page for the CBW, CSW and small replies
    uint64_t bounce_phys, small_phys;
};

#define CBW_AT   0
#define CSW_AT   64
#define REPLY_AT 128  // INQUIRY, READ CAPACITY, REQUEST SENSE data

static struct msc disks[USB_MSC_MAX];

static void pause_ms(unsigned ms) {
    uint64_t end = arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
    while (arch_rdtsc() < end) {
        arch_pause();
    }
}

static void reset_recovery(struct msc *m) {
    struct usb_device *d = m->dev;
    usb_control(d, USB_REQ_CLASS | USB_REQ_INTERFACE, REQ_RESET, 0, m->iface, NULL, 0);
    usb_clear_halt(d, m->ep_in);
    usb_clear_halt(d, m->ep_out);
}

// One command through the transport. `data` is m->bounce or the reply area; *moved
// is what its data phase moved (as the CSW residue corrects it).
static int transport(struct msc *m, const uint8_t *cdb, uint8_t cdb_len, bool in, uint64_t data,
                     uint32_t len, uint32_t *moved) {
    struct usb_device *d = m->dev;
    *moved = 0;
    if (!d) {
        return CMD_ERROR;
    }
    uint32_t tag = ++m->tag, got;
    bot_cbw(m->small + CBW_AT, tag, len, in, 0, cdb, cdb_len);
    int r = usb_bulk(d, m->ep_out, m->small_phys + CBW_AT, BOT_CBW_LEN, KMSC_XFER_MS, &got);
    if (r != USB_XFER_OK || got != BOT_CBW_LEN) {
        reset_recovery(m);  // a CBW the device will not take (§6.6.1)
        return CMD_ERROR;
    }
    uint32_t data_got = 0;
    if (len) {
        r = usb_bulk(d, in ? m->ep_in : m->ep_out, data, len, KMSC_XFER_MS, &data_got);
        if (r == USB_XFER_STALL) {
            usb_clear_halt(d, in ? m->ep_in : m->ep_out);  // the CSW comes after (§6.7.2)
        } else if (r != USB_XFER_OK) {
            reset_recovery(m);
            return CMD_ERROR;
        }
    }
    uint8_t *csw = m->small + CSW_AT;
    memset(csw, 0, BOT_CSW_LEN);
    r = usb_bulk(d, m->ep_in, m->small_phys + CSW_AT, BOT_CSW_LEN, KMSC_XFER_MS, &got);
    if (r == USB_XFER_STALL) {
        usb_clear_halt(d, m->ep_in);
        r = usb_bulk(d, m->ep_in, m->small_phys + CSW_AT, BOT_CSW_LEN, KMSC_XFER_MS, &got);
    }
    uint32_t residue;
    int status = r == USB_XFER_OK ? bot_csw_check(csw, got, tag, len, &residue) : BOT_CSW_INVALID;
    if (status != BOT_CSW_PASSED && status != BOT_CSW_FAILED) {
        reset_recovery(m);
        return CMD_ERROR;
    }
    // The device's residue is what it did not process; the bytes that arrived bound it.
    uint32_t done = len - residue;
    *moved = done < data_got ? done : data_got;
    return status == BOT_CSW_PASSED ? CMD_OK : CMD_FAILED;
}

// A command into the reply area (or with no data); a failed one fetches its sense.
static int command(struct msc *m, const uint8_t *cdb, uint8_t cdb_len, bool in, uint64_t data,
                   uint32_t len, uint32_t *moved) {
    int r = transport(m, cdb, cdb_len, in, data, len, moved);
    if (r != CMD_FAILED) {
        return r;
    }
    uint8_t sense_cdb[BOT_CDB_MAX];
    uint8_t n = scsi_request_sense(sense_cdb, SCSI_SENSE_LEN);
    uint32_t got;
    memset(m->small + REPLY_AT, 0, SCSI_SENSE_LEN);
    m->sense = (struct scsi_sense){ SCSI_KEY_HARDWARE_ERROR, 0, 0 };  // if none arrives
    if (transport(m, sense_cdb, n, true, m->small_phys + REPLY_AT, SCSI_SENSE_LEN, &got) ==
        CMD_OK) {
        scsi_sense_parse(m->small + REPLY_AT, got, &m->sense);
    }
    return CMD_FAILED;
}

static int reply(struct msc *m, const uint8_t *cdb, uint8_t cdb_len, uint32_t len, uint32_t *got) {
    memset(m->small + REPLY_AT, 0, len);
    return command(m, cdb, cdb_len, true, m->small_phys + REPLY_AT, len, got);
}

// ---- Block device ---------------------------------------------------------------------

static int io(struct msc *m, bool write, uint64_t block, uint32_t n) {
    uint8_t cdb[BOT_CDB_MAX];
    uint8_t len = scsi_rw(cdb, write, block, n);
    uint32_t bytes = n * m->blk.block_size, moved = 0;
    int r = CMD_ERROR;
    for (unsigned attempt = 0; attempt < 2; attempt++) {
        uint64_t flags = arch_save_flags_cli();
        r = command(m, cdb, len, !write, m->bounce_phys, bytes, &moved);
        arch_restore_flags(flags);
        if (r != CMD_FAILED || m->sense.key != SCSI_KEY_UNIT_ATTENTION) {
            break;  // a unit attention (a reset, say) is reported once: try again
        }
    }
    if (r == CMD_OK && moved == bytes) {
        return 0;
    }
    const char *what = write ? "write" : "read";
    if (r == CMD_OK) {
        kprintf("kernel: %s: %s of %u blocks at %lu moved %u of %u bytes\n", m->blk.name, what, n,
                block, moved, bytes);
    } else if (r == CMD_FAILED) {
        kprintf("kernel: %s: %s of %u blocks at %lu failed: %s (asc 0x%02x/0x%02x)\n", m->blk.name,
                what, n, block, scsi_sense_name(m->sense.key), m->sense.asc, m->sense.ascq);
        if (m->sense.key == SCSI_KEY_DATA_PROTECT) {
            return BLK_EROFS;
        }
    } else {
        kprintf("kernel: %s: %s of %u blocks at %lu: %s\n", m->blk.name, what, n, block,
                m->dev ? "the device did not answer; it was reset" : "the device is gone");
    }
    return BLK_EIO;
}

static int msc_read(struct blk_dev *b, uint64_t block, uint32_t count, void *buf) {
    struct msc *m = b->priv;
    uint8_t *out = buf;
    while (count) {
        uint32_t n = count < m->max_blocks ? count : m->max_blocks;
        int r = io(m, false, block, n);
        if (r) {
            return r;
        }
        memcpy(out, m->bounce, (size_t)n * b->block_size);
        out += (size_t)n * b->block_size, block += n, count -= n;
    }
    return 0;
}

static int msc_write(struct blk_dev *b, uint64_t block, uint32_t count, const void *buf) {
    struct msc *m = b->priv;
    const uint8_t *in = buf;
    while (count) {
        uint32_t n = count < m->max_blocks ? count : m->max_blocks;
        memcpy(m->bounce, in, (size_t)n * b->block_size);
        int r = io(m, true, block, n);
        if (r) {
            return r;
        }
        in += (size_t)n * b->block_size, block += n, count -= n;
    }
    return 0;
}

static int msc_flush(struct blk_dev *b) {
    struct msc *m = b->priv;
    if (m->no_sync) {
        return 0;
    }
    uint8_t cdb[BOT_CDB_MAX];
    uint8_t len = scsi_sync_cache(cdb);
    uint32_t moved;
    uint64_t flags = arch_save_flags_cli();
    int r = command(m, cdb, len, false, 0, 0, &moved);
    arch_restore_flags(flags);
    if (r == CMD_FAILED && m->sense.key == SCSI_KEY_ILLEGAL_REQUEST) {
        m->no_sync = true;  // a stick with no cache to flush may not know the command
        return 0;
    }
    if (r != CMD_OK) {
        kprintf("kernel: %s: flush failed\n", b->name);
        return BLK_EIO;
    }
    return 0;
}

// ---- Attach ---------------------------------------------------------------------------

// TEST UNIT READY until it passes, a sense says waiting will not help, or the time is up.
static const char *wait_ready(struct msc *m) {
    uint8_t cdb[BOT_CDB_MAX];
    uint8_t n = scsi_test_unit_ready(cdb);
    uint64_t end = arch_rdtsc() + ktime_tsc_hz() / 1000 * KMSC_READY_MS;
    uint32_t got;
    for (;;) {
        int r = command(m, cdb, n, false, 0, 0, &got);
        if (r == CMD_OK) {
            return NULL;
        }
        if (r == CMD_FAILED && m->sense.key == SCSI_KEY_NOT_READY &&
            m->sense.asc == SCSI_ASC_NO_MEDIUM) {
            return "no medium";
        }
        if (r == CMD_FAILED && !scsi_sense_transient(&m->sense)) {
            return "it did not become ready";
        }
        if (arch_rdtsc() > end) {
            return r == CMD_ERROR ? "it did not answer TEST UNIT READY"
                                  : "it was still not ready after the wait";
        }
        pause_ms(KMSC_READY_STEP_MS);
    }
}

static const char *capacity(struct msc *m) {
    uint8_t cdb[BOT_CDB_MAX];
    uint32_t got, bs = 0;
    bool need16 = false;
    uint64_t blocks = 0;
    int r = CMD_ERROR;
    for (unsigned attempt = 0; attempt < 3 && r != CMD_OK; attempt++) {
        uint8_t n = scsi_read_capacity10(cdb);
        r = reply(m, cdb, n, SCSI_CAPACITY10_LEN, &got);
        if (r == CMD_OK) {
            blocks = scsi_capacity10(m->small + REPLY_AT, got, &bs, &need16);
        }
    }
    if (r != CMD_OK) {
        return "READ CAPACITY failed";
    }
    if (need16) {
        uint8_t n = scsi_read_capacity16(cdb, SCSI_CAPACITY16_LEN);
        if (reply(m, cdb, n, SCSI_CAPACITY16_LEN, &got) != CMD_OK) {
            return "READ CAPACITY(16) failed";
        }
        blocks = scsi_capacity16(m->small + REPLY_AT, got, &bs);
    }
    if (!blocks) {
        return "it reports no blocks";
    }
    if (bs < 512 || bs > 4096 || (bs & (bs - 1))) {
        return "its block size is not 512..4096 bytes";
    }
    m->blk.block_size = bs;
    m->blk.block_count = blocks;
    m->max_blocks = BOUNCE_PAGES * KPAGE_SIZE / bs;
    return NULL;
}

static struct msc *free_disk(void) {
    for (unsigned i = 0; i < USB_MSC_MAX; i++) {  // a name used before, unplugged, first
        if (disks[i].registered && !disks[i].dev) {
            return &disks[i];
        }
    }
    for (unsigned i = 0; i < USB_MSC_MAX; i++) {
        if (!disks[i].registered) {
            return &disks[i];
        }
    }
    return NULL;
}

static const char *start(struct msc *m, struct usb_device *d, const uint8_t *intf,
                         const uint8_t *end, char *ident, unsigned cap) {
    const uint8_t *in = NULL, *out = NULL;
    for (const uint8_t *ep = usb_next_desc(intf, end, USB_DESC_ENDPOINT, true); ep;
         ep = usb_next_desc(ep, end, USB_DESC_ENDPOINT, true)) {
        if (ep[0] >= 7 && (ep[3] & 3) == 2) {
            if (ep[2] & 0x80) {
                in = in ? in : ep;
            } else {
                out = out ? out : ep;
            }
        }
    }
    if (!in || !out) {
        return "no bulk IN and OUT endpoints";
    }
    if (!m->bounce) {
        m->bounce_phys = mm_alloc_frames(BOUNCE_PAGES);
        m->small_phys = mm_alloc_frames(1);
        if (!m->bounce_phys || !m->small_phys) {
            return "out of memory";
        }
        m->bounce = (uint8_t *)(uintptr_t)m->bounce_phys;
        m->small = (uint8_t *)(uintptr_t)m->small_phys;
    }
    m->dev = d;
    m->iface = intf[2];
    m->ep_in = in[2];
    m->ep_out = out[2];
    m->no_sync = false;
    // The controller's endpoints first, then the device's configuration (xHCI §4.3.5).
    if (!usb_open_bulk(d, in, end) || !usb_open_bulk(d, out, end)) {
        return "its bulk endpoints could not be opened";
    }
    if (!usb_set_configuration(d)) {
        return "SET_CONFIGURATION failed";
    }
    // Get Max LUN: a device with one LUN may stall it (§3.2); LUN 0 is used either way.
    uint8_t max_lun = 0;
    usb_control(d, USB_REQ_IN | USB_REQ_CLASS | USB_REQ_INTERFACE, REQ_MAX_LUN, 0, m->iface,
                &max_lun, 1);
    uint8_t cdb[BOT_CDB_MAX];
    uint32_t got;
    struct scsi_inquiry_info info;
    if (reply(m, cdb, scsi_inquiry(cdb, SCSI_INQUIRY_LEN), SCSI_INQUIRY_LEN, &got) != CMD_OK ||
        !scsi_inquiry_parse(m->small + REPLY_AT, got, &info, ident, cap)) {
        return "INQUIRY failed";
    }
    if (!info.qualifier_ok || info.type != 0) {
        return "LUN 0 is not a direct-access block device";
    }
    const char *why = wait_ready(m);
    return why ? why : capacity(m);
}

static bool msc_attach(struct usb_device *d, const uint8_t *intf, const uint8_t *end) {
    if (intf[5] != 0x08 || intf[6] != 0x06 || intf[7] != 0x50) {
        return false;  // mass storage, SCSI transparent command set, Bulk-Only
    }
    char at[40], ident[48];
    usb_where(d, at, sizeof(at));
    struct msc *m = free_disk();
    if (!m) {
        kprintf("kernel: usb: %s: disk not used: more than %u USB disks\n", at, USB_MSC_MAX);
        return false;
    }
    const char *why = start(m, d, intf, end, ident, sizeof(ident));
    if (why) {
        m->dev = NULL;
        kprintf("kernel: usb: %s: disk not used: %s\n", at, why);
        return false;
    }
    d->priv = m;
    bool again = m->registered;
    if (!m->registered) {
        unsigned i = (unsigned)(m - disks);
        ksnprintf(m->blk.name, sizeof(m->blk.name), "usb%u", i);
        m->blk.kind = "usb";
        m->blk.priv = m;
        m->blk.read = msc_read;
        m->blk.write = msc_write;
        m->blk.flush = msc_flush;
        if (!blk_register(&m->blk)) {
            m->dev = NULL;
            kprintf("kernel: usb: %s: disk not used: the block device table is full\n", at);
            return false;
        }
        m->registered = true;
    }
    m->blk.read_only = false;
    m->blk.guarded = false;
    kprintf("kernel: usb: %s: disk %s%s, %lu MiB (%lu blocks of %u bytes), '%s'\n", at, m->blk.name,
            again ? " again" : "", (m->blk.block_count * m->blk.block_size) >> 20,
            m->blk.block_count, m->blk.block_size, ident);
    return true;
}

static void msc_detach(struct usb_device *d) {
    struct msc *m = d->priv;
    m->dev = NULL;  // the name stays registered; requests fail until it is back
}

const struct usb_driver usb_msc_driver = { "mass storage", msc_attach, msc_detach, NULL };
