// SPDX-License-Identifier: MIT
// Polled output on the COM1 16550, for machines whose firmware console does not
// already include the serial port (see PROTOCOL.md, "Console").
#include "loader.h"

#define REG_DATA       0
#define REG_IER        1
#define REG_FCR        2
#define REG_LCR        3
#define REG_MCR        4
#define REG_LSR        5
#define REG_SCRATCH    7
#define LSR_THRE       0x20
#define LCR_DLAB       0x80
#define LCR_8N1        0x03
#define DIVISOR_115200 1
#define THRE_SPINS     100000

static void outb(uint16_t port, uint8_t v) {
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static uint8_t inb(uint16_t port) {
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

// A UART answers on its scratch register; an empty ISA bus reads back 0xff.
int uart_present(void) {
    static const uint8_t probes[] = { 0x5a, 0xa5 };
    for (unsigned i = 0; i < sizeof probes; i++) {
        outb(LOADER_UART_PORT + REG_SCRATCH, probes[i]);
        if (inb(LOADER_UART_PORT + REG_SCRATCH) != probes[i]) {
            return 0;
        }
    }
    return 1;
}

void uart_init(void) {
    outb(LOADER_UART_PORT + REG_IER, 0);
    outb(LOADER_UART_PORT + REG_LCR, LCR_DLAB);
    outb(LOADER_UART_PORT + REG_DATA, DIVISOR_115200);
    outb(LOADER_UART_PORT + REG_IER, 0);
    outb(LOADER_UART_PORT + REG_LCR, LCR_8N1);
    outb(LOADER_UART_PORT + REG_FCR, 0x07);  // enable and clear the FIFOs
    outb(LOADER_UART_PORT + REG_MCR, 0x03);  // DTR, RTS
}

void uart_write(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        for (unsigned spin = 0; spin < THRE_SPINS; spin++) {
            if (inb(LOADER_UART_PORT + REG_LSR) & LSR_THRE) {
                break;
            }
        }
        outb(LOADER_UART_PORT + REG_DATA, (uint8_t)s[i]);
    }
}
