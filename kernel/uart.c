// SPDX-License-Identifier: MIT
// The serial console on a 16550: COM1 at boot (if it answers), then the UART the ACPI
// SPCR table names (I/O port or MMIO) when there is one. Polled output, interrupt-fed
// receive ring (drained again from the timer tick, which is all a UART without a routed
// interrupt gets). With no UART at all, output goes nowhere and nothing waits.
#include "arch.h"
#include "config.h"
#include "kernel.h"

enum {
    UART_DATA = 0,
    UART_IER = 1,
    UART_FCR = 2,
    UART_IIR = 2,
    UART_LCR = 3,
    UART_MCR = 4,
    UART_LSR = 5,
};
#define LSR_DATA_READY      0x01
#define LSR_OVERRUN         0x02
#define LSR_THR_EMPTY       0x20
#define LCR_DLAB            0x80
#define LCR_8N1             0x03
#define FCR_ENABLE_CLEAR_14 0xc7  // enable FIFOs, clear both, RX trigger at 14 bytes
#define MCR_DTR_RTS_OUT2    0x0b  // OUT2 gates the IRQ line on PC UARTs
#define IER_RX_AVAILABLE    0x01
enum {
    UART_SCRATCH = 7
};
#define SCRATCH_PROBE         0x5a
#define UART_CLOCK_DIV_115200 1  // divisors from the PC's 1.8432 MHz UART clock

static uint64_t rx_overruns;  // bytes the UART itself lost (LSR overrun error)
static uint64_t rx_bytes;     // bytes handed to the console mux
static bool present;
static uint16_t io_base = KCON_COM1_PORT;  // I/O port UART
static volatile uint8_t *mmio_base;        // or memory-mapped, registers `stride` apart
static unsigned mmio_stride = 1;
static bool mmio_32bit;
static char where[48] = "none";

static void com_out(unsigned reg, uint8_t v) {
    if (!mmio_base) {
        arch_out8((uint16_t)(io_base + reg), v);
    } else if (mmio_32bit) {
        *(volatile uint32_t *)(mmio_base + reg * mmio_stride) = v;
    } else {
        mmio_base[reg * mmio_stride] = v;
    }
}
static uint8_t com_in(unsigned reg) {
    if (!mmio_base) {
        return arch_in8((uint16_t)(io_base + reg));
    }
    if (mmio_32bit) {
        return (uint8_t)*(volatile uint32_t *)(mmio_base + reg * mmio_stride);
    }
    return mmio_base[reg * mmio_stride];
}

// A UART answers when its scratch register keeps what was written (a missing I/O port
// reads 0xff whatever is written).
static bool probe(void) {
    com_out(UART_SCRATCH, SCRATCH_PROBE);
    if (com_in(UART_SCRATCH) != SCRATCH_PROBE) {
        return false;
    }
    com_out(UART_SCRATCH, (uint8_t)~SCRATCH_PROBE);
    return com_in(UART_SCRATCH) == (uint8_t)~SCRATCH_PROBE;
}

// divisor 0: keep the line speed the firmware set.
static void program(uint16_t divisor) {
    com_out(UART_IER, 0);
    if (divisor) {
        com_out(UART_LCR, LCR_DLAB);
        com_out(UART_DATA, divisor & 0xff);
        com_out(UART_IER, divisor >> 8);
    }
    com_out(UART_LCR, LCR_8N1);
    com_out(UART_FCR, FCR_ENABLE_CLEAR_14);
    com_out(UART_MCR, MCR_DTR_RTS_OUT2);
    while (com_in(UART_LSR) & LSR_DATA_READY) {
        (void)com_in(UART_DATA);  // whatever the firmware left behind
    }
}

void uart_init(void) {
    present = probe();
    if (present) {
        program(KCON_BAUD_DIVISOR);
        ksnprintf(where, sizeof where, "COM1 (port 0x%x)", KCON_COM1_PORT);
    }
}

const char *uart_where(void) {
    return where;
}

// The SPCR's UART replaces COM1 when it answers. Returns true when it did.
bool uart_use_spcr(const struct acpi_info *a) {
    if (!a->have_spcr) {
        return false;
    }
    bool saved_present = present;
    uint16_t saved_io = io_base;
    volatile uint8_t *saved_mmio = mmio_base;
    if (a->spcr_uart.space == ACPI_SPACE_IO) {
        io_base = (uint16_t)a->spcr_uart.addr;
        mmio_base = NULL;
    } else {
        mmio_32bit = a->spcr_uart.bit_width == 32;
        mmio_stride = mmio_32bit ? 4 : 1;
        uint64_t page = a->spcr_uart.addr & ~(KPAGE_SIZE - 1);
        paging_map_4k(page, page, PTE_W | PTE_PCD | paging_nx_flag());
        mmio_base = (volatile uint8_t *)(uintptr_t)a->spcr_uart.addr;
    }
    if (!probe()) {
        kprintf("kernel: SPCR names a UART at %s 0x%lx that does not answer; keeping %s\n",
                a->spcr_uart.space == ACPI_SPACE_IO ? "port" : "address", a->spcr_uart.addr, where);
        present = saved_present;
        io_base = saved_io;
        mmio_base = saved_mmio;
        return false;
    }
    uint16_t divisor = a->spcr_baud == 7   ? 1
                       : a->spcr_baud == 6 ? 2
                       : a->spcr_baud == 4 ? 6
                       : a->spcr_baud == 3 ? 12
                                           : 0;
    present = true;
    program(divisor);
    ksnprintf(where, sizeof where, "SPCR UART (%s 0x%lx)",
              a->spcr_uart.space == ACPI_SPACE_IO ? "port" : "mmio", a->spcr_uart.addr);
    return true;
}

bool uart_present(void) {
    return present;
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

// Only ever called with interrupts off (ISR or timer tick). When the console's ring is
// full, bytes stay in the UART: the next timer tick takes them once the reader made
// room, so a long paste is throttled instead of losing characters (QEMU holds back its
// input while the UART's FIFO is full; real hardware without flow control overruns the
// FIFO, which LSR reports and we count).
void uart_drain_rx(void) {
    for (;;) {
        uint8_t lsr = present ? com_in(UART_LSR) : 0;
        if (lsr & LSR_OVERRUN) {
            rx_overruns++;
        }
        if (!(lsr & LSR_DATA_READY) || !kcon_input_room()) {
            return;
        }
        uint8_t b = com_in(UART_DATA);
        rx_bytes++;
        kcon_input(b);
    }
}

uint64_t kcon_rx_overruns(void) {
    return rx_overruns;
}

uint64_t kcon_rx_bytes(void) {
    return rx_bytes;
}

static void uart_write(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        uart_putc(s[i]);
    }
}

const struct kcon_output uart_console = { "serial", uart_write, NULL };
