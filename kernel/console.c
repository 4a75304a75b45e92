// SPDX-License-Identifier: MIT
// The console mux: one input ring fed by every input device (the UART, keyboards) from
// interrupt or tick context, the interrupt character (Ctrl-C) taken out of the stream
// the moment it arrives, and output written to every end that registered (the serial
// line, the screen). Devices that are polled rather than interrupt-driven register a
// poll function the timer tick calls.
#include "arch.h"
#include "config.h"
#include "kernel.h"

static uint8_t ring[KCON_RX_RING_SIZE];
static volatile uint32_t head;  // written by interrupt context only
static volatile uint32_t tail;  // written by kcon_read only
static uint64_t ring_full;      // bytes a device had to keep because the ring was full
static volatile int intr_char = -1;
static void (*volatile intr_hook)(void);

static const struct kcon_output *outputs[KCON_MAX_OUTPUTS];
static unsigned n_outputs;
static void (*polls[KCON_MAX_POLLS])(void);
static unsigned n_polls;

bool kcon_input_room(void) {
    if (head - tail >= KCON_RX_RING_SIZE) {
        ring_full++;
        return false;
    }
    return true;
}

// Interrupts off (ISR or tick), so the ring has one producer at a time.
void kcon_input(uint8_t b) {
    void (*hook)(void) = intr_hook;
    if (hook && b == intr_char) {
        hook();
        return;
    }
    uint32_t h = head;
    if (h - tail >= KCON_RX_RING_SIZE) {
        ring_full++;
        return;
    }
    ring[h & (KCON_RX_RING_SIZE - 1)] = b;
    __atomic_store_n(&head, h + 1, __ATOMIC_RELEASE);
}

int kcon_read(void) {
    uint32_t t = tail;
    if (__atomic_load_n(&head, __ATOMIC_ACQUIRE) == t) {
        return -1;
    }
    int b = ring[t & (KCON_RX_RING_SIZE - 1)];
    __atomic_store_n(&tail, t + 1, __ATOMIC_RELEASE);
    return b;
}

size_t kcon_pending(void) {
    return __atomic_load_n(&head, __ATOMIC_ACQUIRE) - tail;
}

uint64_t kcon_rx_ring_full(void) {
    return ring_full;
}

void kcon_set_interrupt_char(int c, void (*on_char)(void)) {
    uint64_t f = arch_save_flags_cli();
    intr_char = c;
    intr_hook = c < 0 ? NULL : on_char;
    arch_restore_flags(f);
}

void kcon_add_output(const struct kcon_output *out) {
    if (n_outputs < KCON_MAX_OUTPUTS) {
        outputs[n_outputs++] = out;
    }
}

void kcon_write(const char *s, size_t len) {
    for (unsigned i = 0; i < n_outputs; i++) {
        outputs[i]->write(s, len);
    }
}

void kcon_flush(void) {
    for (unsigned i = 0; i < n_outputs; i++) {
        if (outputs[i]->flush) {
            outputs[i]->flush();
        }
    }
}

unsigned kcon_outputs(const struct kcon_output *const **out) {
    *out = outputs;
    return n_outputs;
}

void kdev_add_poll(void (*fn)(void)) {
    uint64_t f = arch_save_flags_cli();
    if (n_polls < KCON_MAX_POLLS) {
        polls[n_polls++] = fn;
    }
    arch_restore_flags(f);
}

void kdev_poll_all(void) {
    for (unsigned i = 0; i < n_polls; i++) {
        polls[i]();
    }
}
