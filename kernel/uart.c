// SPDX-License-Identifier: MIT
// COM1 16550 console: polled output, interrupt-fed receive ring (IRQ4 via the IOAPIC,
// drained again from the timer tick in case an interrupt is ever missed).
#include "arch.h"
#include "config.h"
#include "kernel.h"

enum {
    UART_DATA = 0, UART_IER = 1, UART_FCR = 2, UART_IIR = 2, UART_LCR = 3, UART_MCR = 4,
    UART_LSR = 5,
};
#define LSR_DATA_READY  0x01
#define LSR_OVERRUN     0x02
#define LSR_THR_EMPTY   0x20
#define LCR_DLAB        0x80
#define LCR_8N1         0x03
#define FCR_ENABLE_CLEAR_14 0xc7     // enable FIFOs, clear both, RX trigger at 14 bytes
#define MCR_DTR_RTS_OUT2 0x0b        // OUT2 gates the IRQ line on PC UARTs
#define IER_RX_AVAILABLE 0x01

static uint8_t rx_ring[KCON_RX_RING_SIZE];
static uint64_t rx_overruns;   // bytes the UART itself lost (LSR overrun error)
static uint64_t rx_bytes;      // bytes moved into the ring (or to the interrupt hook)
static uint64_t rx_ring_full;  // drains that stopped with bytes left in the UART
static volatile uint32_t rx_head;   // written by interrupt context only
static volatile uint32_t rx_tail;   // written by kcon_read only
static volatile int intr_char = -1;
static void (*volatile intr_hook)(void);
static bool present;

static void com_out(unsigned reg, uint8_t v) { arch_out8(KCON_COM1_PORT + reg, v); }
static uint8_t com_in(unsigned reg) { return arch_in8(KCON_COM1_PORT + reg); }

void uart_init(void) {
    com_out(UART_IER, 0);
    com_out(UART_LCR, LCR_DLAB);
    com_out(UART_DATA, KCON_BAUD_DIVISOR & 0xff);
    com_out(UART_IER, KCON_BAUD_DIVISOR >> 8);
    com_out(UART_LCR, LCR_8N1);
    com_out(UART_FCR, FCR_ENABLE_CLEAR_14);
    com_out(UART_MCR, MCR_DTR_RTS_OUT2);
    // A missing UART reads back 0xff from every register.
    present = com_in(UART_LSR) != 0xff;
    while (present && (com_in(UART_LSR) & LSR_DATA_READY)) {
        (void)com_in(UART_DATA);   // whatever the firmware left behind
    }
}

void uart_enable_rx_irq(void) {
    com_out(UART_IER, IER_RX_AVAILABLE);
}

void uart_putc(char c) {
    if (!present) {
        return;
    }
    while (!(com_in(UART_LSR) & LSR_THR_EMPTY)) {
        arch_pause();
    }
    com_out(UART_DATA, (uint8_t)c);
}

// Only ever called with interrupts off (ISR or timer tick), so the ring has one
// producer at a time. When the ring is full, bytes stay in the UART: the next timer
// tick takes them once the reader made room, so a long paste is throttled instead of
// losing characters (QEMU holds back its input while the UART's FIFO is full; real
// hardware without flow control overruns the FIFO, which LSR reports and we count).
void uart_drain_rx(void) {
    for (;;) {
        uint8_t lsr = present ? com_in(UART_LSR) : 0;
        if (lsr & LSR_OVERRUN) {
            rx_overruns++;
        }
        if (!(lsr & LSR_DATA_READY)) {
            return;
        }
        uint32_t head = rx_head;
        if (head - rx_tail >= KCON_RX_RING_SIZE) {
            rx_ring_full++;
            return;
        }
        uint8_t b = com_in(UART_DATA);
        rx_bytes++;
        void (*hook)(void) = intr_hook;
        if (hook && b == intr_char) {
            hook();
            continue;
        }
        rx_ring[head & (KCON_RX_RING_SIZE - 1)] = b;
        __atomic_store_n(&rx_head, head + 1, __ATOMIC_RELEASE);
    }
}

uint64_t kcon_rx_overruns(void) {
    return rx_overruns;
}

uint64_t kcon_rx_bytes(void) {
    return rx_bytes;
}

uint64_t kcon_rx_ring_full(void) {
    return rx_ring_full;
}

void kcon_write(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        uart_putc(s[i]);
    }
}

int kcon_read(void) {
    uint32_t tail = rx_tail;
    if (__atomic_load_n(&rx_head, __ATOMIC_ACQUIRE) == tail) {
        return -1;
    }
    int b = rx_ring[tail & (KCON_RX_RING_SIZE - 1)];
    __atomic_store_n(&rx_tail, tail + 1, __ATOMIC_RELEASE);
    return b;
}

size_t kcon_pending(void) {
    return __atomic_load_n(&rx_head, __ATOMIC_ACQUIRE) - rx_tail;
}

void kcon_set_interrupt_char(int c, void (*on_char)(void)) {
    uint64_t f = arch_save_flags_cli();
    intr_char = c;
    intr_hook = c < 0 ? NULL : on_char;
    arch_restore_flags(f);
}
