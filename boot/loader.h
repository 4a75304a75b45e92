// SPDX-License-Identifier: MIT
// Private interface between the loader's UEFI-side files, and the loader's tunables.
// The pure modules (elf_check, memmap, fmt) have their own headers and no UEFI types.
#ifndef LOCIOS_BOOT_LOADER_H
#define LOCIOS_BOOT_LOADER_H

#include <efi.h>
#include <stdint.h>

#include "bootinfo.h"
#include "elf_check.h"

// ---- Tunables -------------------------------------------------------------------------
#define LOADER_KERNEL_PATH      L"\\LOCIOS\\KERNEL.ELF"
#define LOADER_KERNEL_PATH_STR  "\\LOCIOS\\KERNEL.ELF"
#define LOADER_OPTIONS_PATH     L"\\LOCIOS\\OPTIONS.TXT"
#define LOADER_OPTIONS_PATH_STR "\\LOCIOS\\OPTIONS.TXT"
#define LOADER_REFUSAL_WAIT_S   10            // wait for a key this long after a refusal
#define LOADER_MAP_SPARE_DESC   16            // memory map buffer padding, in descriptors
#define LOADER_REGION_MARGIN    16            // regions kept free for map changes at exit
#define LOADER_EXIT_TRIES       8             // ExitBootServices attempts
#define LOADER_UART_PORT        0x3f8         // COM1
#define LOADER_PLACE_MIN        0x100000      // the kernel is never placed below 1 MiB
#define LOADER_IDENTITY_MAX     (1ULL << 46)  // identity map at most this much (64 TiB)

// ---- Firmware handles (main.c) --------------------------------------------------------
extern EFI_HANDLE g_image;
extern EFI_SYSTEM_TABLE *g_st;
extern EFI_BOOT_SERVICES *g_bs;

// ---- console.c ------------------------------------------------------------------------
void con_init(void);
void con_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Prints "LociOS loader: error: <message>" and returns `status`, for `return fail(...)`.
EFI_STATUS fail(EFI_STATUS status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Waits for a key press or LOADER_REFUSAL_WAIT_S seconds, whichever comes first.
void con_wait_key(void);
// Short name of an EFI_STATUS, e.g. "EFI_NOT_FOUND".
const char *efi_status_name(EFI_STATUS s);

// ---- uart.c: raw 16550, used only where the firmware console does not reach it ----------
int uart_present(void);
void uart_init(void);
void uart_write(const char *s, size_t len);

// ---- kernel_file.c --------------------------------------------------------------------
EFI_STATUS kernel_file_read(uint8_t **data, uint64_t *size);
// Reads the optional \LOCIOS\OPTIONS.TXT into out ("" when absent); refuses a file that
// is too long or not printable text.
EFI_STATUS options_file_read(char out[BOOTINFO_OPTIONS_MAX]);

// ---- seal.c ---------------------------------------------------------------------------
// Hashes the file into digest[] and compares it with the sealed value.
EFI_STATUS seal_verify(const uint8_t *data, uint64_t size, uint8_t digest[32]);

// ---- elf_load.c -----------------------------------------------------------------------
// Allocates one block for the kernel's pages (where `options` says, else anywhere) and
// copies the segments into it; *phys_base is where the block starts.
EFI_STATUS elf_load(const uint8_t *file, const struct elf_image *img, const char *options,
                    uint64_t *phys_base);

// ---- pagetables.c ---------------------------------------------------------------------
// Builds the page tables the kernel is entered on; *cr3 is their root.
EFI_STATUS boot_page_tables(const struct elf_image *img, uint64_t phys_base,
                            const struct bootinfo_framebuffer *fb, uint64_t *cr3);

// ---- cpu_prep.c -----------------------------------------------------------------------
EFI_STATUS cpu_check(void);                  // refuses what the hand-off cannot handle
int cpu_x2apic_wanted(const char *options);  // loader_x2apic=1 and the CPU has x2APIC
void cpu_x2apic_on(void);                    // after ExitBootServices only

// ---- pci_quiesce.c --------------------------------------------------------------------
unsigned pci_quiesce_bridges(void);  // returns how many bridges it stopped

// ---- sysinfo.c ------------------------------------------------------------------------
uint64_t sysinfo_rsdp(void);
// Chooses and sets the screen's graphics mode (boot option loader_screen=WxH; see
// gop_mode.h), then describes its framebuffer (base 0 when it has no linear one).
void sysinfo_framebuffer(struct bootinfo_framebuffer *fb, const char *options);

// ---- handoff.c ------------------------------------------------------------------------
// Exits boot services, loads the page tables at `cr3` and jumps to the kernel's entry;
// returns only if it could not exit.
EFI_STATUS handoff(struct bootinfo *bi, const struct elf_image *img, uint64_t cr3, int x2apic);

static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

#endif
