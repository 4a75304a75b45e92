// SPDX-License-Identifier: MIT
// The i8042 PS/2 controller and its first port's keyboard (i8042.h). Scancode set 1 when
// the controller translates (the usual case), set 2 when it will not; both become HID
// usages through keymap.c. The second (mouse) port is disabled.
#include "i8042.h"

#include "../arch.h"
#include "../config.h"
#include "../kernel.h"
#include "keymap.h"

#define I8042_DATA   0x60
#define I8042_STATUS 0x64  // read: status; write: command

#define ST_OUT_FULL 0x01  // a byte waits in the data port
#define ST_IN_FULL  0x02  // the controller has not taken the last byte yet
#define ST_AUX      0x20  // the waiting byte is from the second port

#define CMD_READ_CONFIG   0x20
#define CMD_WRITE_CONFIG  0x60
#define CMD_AUX_DISABLE   0xa7
#define CMD_SELF_TEST     0xaa
#define CMD_PORT1_TEST    0xab
#define CMD_PORT1_DISABLE 0xad
#define CMD_PORT1_ENABLE  0xae

#define CFG_PORT1_IRQ   0x01
#define CFG_PORT2_IRQ   0x02
#define CFG_PORT1_CLOCK 0x10  // set: clock off
#define CFG_PORT2_CLOCK 0x20
#define CFG_TRANSLATE   0x40

#define KBD_RESET  0xff
#define KBD_ENABLE 0xf4
#define KBD_ACK    0xfa
#define KBD_BAT_OK 0xaa

static bool present;
static bool set2;
static const char *state = "not probed";
static struct keymap_state keys;
static uint8_t prefix;  // 0xe0 seen (set 1 and 2), 0xf0 seen (set 2)
static bool released;
static unsigned skip;  // bytes of a Pause sequence still to drop

static bool wait_status(uint8_t mask, bool set, unsigned ms) {
    uint64_t end = arch_rdtsc() + ktime_tsc_hz() / 1000 * ms;
    do {
        uint8_t s = arch_in8(I8042_STATUS);
        if (s == 0xff) {
            return false;  // nothing decodes the port
        }
        if (((s & mask) != 0) == set) {
            return true;
        }
        arch_pause();
    } while (arch_rdtsc() < end);
    return false;
}

static bool write_cmd(uint8_t cmd) {
    if (!wait_status(ST_IN_FULL, false, KKBD_I8042_WAIT_MS)) {
        return false;
    }
    arch_out8(I8042_STATUS, cmd);
    return true;
}

static bool write_data(uint8_t b) {
    if (!wait_status(ST_IN_FULL, false, KKBD_I8042_WAIT_MS)) {
        return false;
    }
    arch_out8(I8042_DATA, b);
    return true;
}

static int read_data(unsigned ms) {
    if (!wait_status(ST_OUT_FULL, true, ms)) {
        return -1;
    }
    return arch_in8(I8042_DATA);
}

static void flush_output(void) {
    for (unsigned i = 0; i < 32 && (arch_in8(I8042_STATUS) & ST_OUT_FULL); i++) {
        (void)arch_in8(I8042_DATA);
    }
}

// One byte from the keyboard, in interrupt or tick context.
static void scancode(uint8_t b) {
    if (skip) {
        skip--;
        return;
    }
    if (b == 0xe1) {  // Pause: a fixed sequence with no release, dropped
        skip = set2 ? 7 : 5;
        return;
    }
    if (b == 0xe0) {
        prefix = 0xe0;
        return;
    }
    if (set2 && b == 0xf0) {
        released = true;
        return;
    }
    bool ext = prefix == 0xe0;
    bool up = released;
    prefix = 0;
    released = false;
    uint8_t usage;
    if (set2) {
        usage = keymap_set2_usage(b, ext);
    } else {
        up = b & 0x80;
        usage = keymap_set1_usage(b & 0x7f, ext);
    }
    if (usage) {
        keymap_key(&keys, usage, !up);
    }
}

static void drain(void) {
    for (unsigned i = 0; i < 16; i++) {
        uint8_t s = arch_in8(I8042_STATUS);
        if (s == 0xff || !(s & ST_OUT_FULL)) {
            return;
        }
        uint8_t b = arch_in8(I8042_DATA);
        if (!(s & ST_AUX)) {
            scancode(b);
        }
    }
}

static void kbd_irq(struct int_frame *f) {
    (void)f;
    drain();
}

static void skip_with(const char *why) {
    state = why;
    kprintf("kernel: ps/2: %s; skipped\n", why);
}

void i8042_init(void) {
    if (arch_in8(I8042_STATUS) == 0xff) {
        state = "no controller";
        kprintf("kernel: ps/2: no i8042 controller (port 0x64 reads 0xff)\n");
        return;
    }
    if (!write_cmd(CMD_PORT1_DISABLE) || !write_cmd(CMD_AUX_DISABLE)) {
        skip_with("the i8042 does not take commands");
        return;
    }
    flush_output();
    int cfg;
    if (!write_cmd(CMD_READ_CONFIG) || (cfg = read_data(KKBD_I8042_WAIT_MS)) < 0) {
        skip_with("the i8042 does not answer a configuration read");
        return;
    }
    cfg &= ~(CFG_PORT1_IRQ | CFG_PORT2_IRQ);
    cfg |= CFG_PORT2_CLOCK | CFG_TRANSLATE;
    write_cmd(CMD_WRITE_CONFIG);
    write_data((uint8_t)cfg);
    // Some controllers reset their configuration during the self-test: write it after.
    if (!write_cmd(CMD_SELF_TEST) || read_data(KKBD_I8042_WAIT_MS * 5) != 0x55) {
        skip_with("the i8042 failed its self-test");
        return;
    }
    write_cmd(CMD_WRITE_CONFIG);
    write_data((uint8_t)cfg);
    if (!write_cmd(CMD_PORT1_TEST) || read_data(KKBD_I8042_WAIT_MS * 5) != 0x00) {
        skip_with("the i8042's keyboard port failed its interface test");
        return;
    }
    if (!write_cmd(CMD_READ_CONFIG) || (cfg = read_data(KKBD_I8042_WAIT_MS)) < 0) {
        skip_with("the i8042 does not answer a configuration read");
        return;
    }
    set2 = !(cfg & CFG_TRANSLATE);
    write_cmd(CMD_PORT1_ENABLE);
    bool kbd = write_data(KBD_RESET) && read_data(KKBD_I8042_WAIT_MS * 5) == KBD_ACK &&
               read_data(KKBD_I8042_RESET_MS) == KBD_BAT_OK;
    flush_output();
    kbd = kbd && write_data(KBD_ENABLE) && read_data(KKBD_I8042_WAIT_MS * 5) == KBD_ACK;

    const struct acpi_info *a = acpi_get();
    irq_set_handler(KVEC_KBD, kbd_irq);
    apic_route_irq(a->kbd_gsi, a->kbd_flags, KVEC_KBD);
    write_cmd(CMD_WRITE_CONFIG);
    write_data((uint8_t)((cfg & ~CFG_PORT1_CLOCK) | CFG_PORT1_IRQ));
    kdev_add_poll(drain);
    present = true;
    state = kbd ? (set2 ? "keyboard (scancode set 2)" : "keyboard (scancode set 1)")
                : "controller, no keyboard answered";
    kprintf("kernel: ps/2: i8042 %s, irq 1 at gsi %u\n", state, a->kbd_gsi);
}

bool i8042_present(void) {
    return present;
}

const char *i8042_state(void) {
    return state;
}
