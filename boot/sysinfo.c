// SPDX-License-Identifier: MIT
// What the kernel needs from the firmware besides memory: the ACPI RSDP and the GOP
// framebuffer. Both are optional; their absence is reported, not refused.
#include <string.h>

#include "loader.h"

uint64_t sysinfo_rsdp(void) {
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
    const EFI_GUID *wanted[] = { &acpi20, &acpi10 };
    for (unsigned w = 0; w < 2; w++) {
        for (UINTN i = 0; i < g_st->NumberOfTableEntries; i++) {
            EFI_CONFIGURATION_TABLE *t = &g_st->ConfigurationTable[i];
            if (memcmp(&t->VendorGuid, wanted[w], sizeof(EFI_GUID)) == 0) {
                con_printf("LociOS loader: ACPI %s RSDP at 0x%llx\n", w == 0 ? "2.0" : "1.0",
                           (unsigned long long)(uintptr_t)t->VendorTable);
                return (uint64_t)(uintptr_t)t->VendorTable;
            }
        }
    }
    con_printf("LociOS loader: note: the firmware publishes no ACPI RSDP\n");
    return 0;
}

void sysinfo_framebuffer(struct bootinfo_framebuffer *fb) {
    EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
    memset(fb, 0, sizeof *fb);
    if (g_bs->LocateProtocol(&gop_guid, NULL, (void **)&gop) != EFI_SUCCESS || gop == NULL ||
        gop->Mode == NULL || gop->Mode->Info == NULL) {
        con_printf("LociOS loader: note: no graphics output; fb.base = 0\n");
        return;
    }
    EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = gop->Mode->Info;
    if (info->PixelFormat != PixelRedGreenBlueReserved8BitPerColor &&
        info->PixelFormat != PixelBlueGreenRedReserved8BitPerColor) {
        con_printf("LociOS loader: note: GOP pixel format %u has no linear 32-bit "
                   "framebuffer we support; fb.base = 0\n",
                   (unsigned)info->PixelFormat);
        return;
    }
    fb->base = gop->Mode->FrameBufferBase;
    fb->size = gop->Mode->FrameBufferSize;
    fb->width = info->HorizontalResolution;
    fb->height = info->VerticalResolution;
    fb->stride = info->PixelsPerScanLine;
    fb->format = info->PixelFormat == PixelRedGreenBlueReserved8BitPerColor ? 0 : 1;
    con_printf("LociOS loader: framebuffer %ux%u stride %u at 0x%llx\n", fb->width, fb->height,
               fb->stride, (unsigned long long)fb->base);
}
