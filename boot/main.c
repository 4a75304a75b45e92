// SPDX-License-Identifier: MIT
// BOOTX64.EFI entry: read, verify, check and load the kernel ELF, gather what the
// kernel needs, hand over. Any refusal is printed, waited on, and returned.
#include <string.h>

#include "loader.h"

EFI_HANDLE g_image;
EFI_SYSTEM_TABLE *g_st;
EFI_BOOT_SERVICES *g_bs;

#define ELF_MSG_MAX 320

static EFI_STATUS new_bootinfo(struct bootinfo **out) {
    UINTN pages = (sizeof(struct bootinfo) + ELF_CHECK_PAGE - 1) / ELF_CHECK_PAGE;
    EFI_PHYSICAL_ADDRESS at = 0xffffffffULL;  // below 4 GiB
    EFI_STATUS s = g_bs->AllocatePages(AllocateMaxAddress, EfiLoaderData, pages, &at);
    if (s != EFI_SUCCESS) {
        return fail(s, "no memory for bootinfo (%llu pages)", (unsigned long long)pages);
    }
    *out = (struct bootinfo *)(uintptr_t)at;
    memset(*out, 0, pages * ELF_CHECK_PAGE);
    return EFI_SUCCESS;
}

static EFI_STATUS boot(uint64_t tsc_start) {
    uint8_t *file;
    uint64_t size;
    EFI_STATUS s = kernel_file_read(&file, &size);
    if (s != EFI_SUCCESS) {
        return s;
    }

    uint8_t digest[32];
    s = seal_verify(file, size, digest);
    if (s != EFI_SUCCESS) {
        return s;
    }
    con_printf("LociOS loader: sha256 ok ");
    for (int i = 0; i < 32; i++) {
        con_printf("%02x", digest[i]);
    }
    con_printf("\n");

    static struct elf_image img;
    char msg[ELF_MSG_MAX];
    int rc = elf_check(file, size, &img, msg, sizeof msg);
    if (rc != ELF_OK) {
        return fail(EFI_LOAD_ERROR, "%s refused: it breaks the kernel ELF rules:\n  %s",
                    LOADER_KERNEL_PATH_STR, msg);
    }
    con_printf("LociOS loader: elf ok: %u segments in [0x%llx, 0x%llx), entry 0x%llx\n", img.count,
               (unsigned long long)img.virt_start, (unsigned long long)img.virt_end,
               (unsigned long long)img.entry);
    s = cpu_check();
    if (s != EFI_SUCCESS) {
        return s;
    }

    struct bootinfo *bi = NULL;
    s = new_bootinfo(&bi);
    if (s != EFI_SUCCESS) {
        return s;
    }
    s = options_file_read(bi->options);
    if (s != EFI_SUCCESS) {
        return s;
    }

    uint64_t phys_base;
    s = elf_load(file, &img, bi->options, &phys_base);
    if (s != EFI_SUCCESS) {
        return s;
    }
    g_bs->FreePool(file);

    bi->magic = BOOTINFO_MAGIC;
    bi->version = BOOTINFO_VERSION;
    bi->size = sizeof *bi;
    bi->acpi_rsdp = sysinfo_rsdp();
    sysinfo_framebuffer(&bi->fb, bi->options);
    memcpy(bi->kernel_sha256, digest, sizeof digest);
    bi->kernel_phys_start = phys_base;
    bi->kernel_phys_end = phys_base + (img.virt_end - img.virt_start);
    bi->kernel_virt_start = img.virt_start;
    bi->efi_system_table = (uint64_t)(uintptr_t)g_st;
    bi->loader_tsc_start = tsc_start;
    int x2apic = cpu_x2apic_wanted(bi->options);

    uint64_t cr3;
    s = boot_page_tables(&img, phys_base, &bi->fb, &cr3);
    if (s != EFI_SUCCESS) {
        return s;
    }
    return handoff(bi, &img, cr3, x2apic);
}

// Called by gnu-efi's crt0 (which converts from the firmware's calling convention).
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
    uint64_t tsc_start = rdtsc();
    g_image = image;
    g_st = st;
    g_bs = st->BootServices;
    con_init();
    con_printf("\nLociOS loader, boot protocol v%u\n", BOOTINFO_VERSION);
    g_bs->SetWatchdogTimer(0, 0, 0, NULL);
    EFI_STATUS s = boot(tsc_start);
    con_wait_key();
    con_printf("LociOS loader: returning %s to the firmware\n", efi_status_name(s));
    return s;
}

// gnu-efi 3.0.18 and later (Debian 13) have crt0 call _entry, which their libefi defines
// to run C constructors and InitializeLib before efi_main. The loader has neither and
// links no libefi, so its _entry only passes on; older crt0 (Debian 12) calls efi_main
// itself and leaves this unused.
EFI_STATUS _entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);
EFI_STATUS _entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
    return efi_main(image, st);
}
