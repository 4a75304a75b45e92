// SPDX-License-Identifier: MIT
// What the kernel needs from the firmware besides memory: the ACPI RSDP and the GOP
// framebuffer in the mode chosen for the screen console. Both are optional; their
// absence is reported, not refused.
#include <string.h>

#include "gop_mode.h"
#include "loader.h"
#include "options.h"

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

// ---- the screen ----------------------------------------------------------------------

static int linear_format(EFI_GRAPHICS_PIXEL_FORMAT f) {
    return f == PixelRedGreenBlueReserved8BitPerColor || f == PixelBlueGreenRedReserved8BitPerColor;
}

// The display's preferred resolution from an EDID protocol on any GOP handle.
static int edid_native(uint32_t *w, uint32_t *h) {
    EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
    EFI_GUID active = EFI_EDID_ACTIVE_PROTOCOL_GUID, discovered = EFI_EDID_DISCOVERED_PROTOCOL_GUID;
    EFI_GUID *kinds[] = { &active, &discovered };
    UINTN count = 0;
    EFI_HANDLE *handles = NULL;
    if (g_bs->LocateHandleBuffer(ByProtocol, &gop_guid, NULL, &count, &handles) != EFI_SUCCESS) {
        return 0;
    }
    int found = 0;
    for (unsigned k = 0; k < 2 && !found; k++) {
        for (UINTN i = 0; i < count && !found; i++) {
            EFI_EDID_ACTIVE_PROTOCOL *e = NULL;  // both protocols have the same layout
            if (g_bs->HandleProtocol(handles[i], kinds[k], (void **)&e) == EFI_SUCCESS && e &&
                e->Edid) {
                found = gop_edid_preferred(e->Edid, e->SizeOfEdid, w, h);
            }
        }
    }
    g_bs->FreePool(handles);
    return found;
}

static const char *why_name(enum gop_why why) {
    switch (why) {
        case GOP_ASKED:
            return "asked for by loader_screen=";
        case GOP_NATIVE:
            return "the display's preferred size";
        case GOP_CURRENT:
            return "the firmware's mode";
        case GOP_FITS:
            return "the largest that fits";
        case GOP_SMALLEST:
            return "the smallest there is";
        default:
            return "none";
    }
}

// Chooses and sets the graphics mode (gop_mode.h), before the final memory map; reports
// a GOP without a linear framebuffer here, on the firmware's console, because after the
// hand-off only the serial line will speak.
void sysinfo_framebuffer(struct bootinfo_framebuffer *fb, const char *options) {
    EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
    memset(fb, 0, sizeof *fb);
    if (g_bs->LocateProtocol(&gop_guid, NULL, (void **)&gop) != EFI_SUCCESS || gop == NULL ||
        gop->Mode == NULL || gop->Mode->Info == NULL) {
        con_printf("LociOS loader: note: no graphics output; fb.base = 0 (after the hand-off "
                   "the console is on the serial line only)\n");
        return;
    }
    unsigned n = gop->Mode->MaxMode;
    struct gop_mode_info *modes = NULL;
    if (n == 0 ||
        g_bs->AllocatePool(EfiLoaderData, n * sizeof *modes, (void **)&modes) != EFI_SUCCESS) {
        n = 0;
    }
    for (unsigned i = 0; i < n; i++) {
        EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = NULL;
        UINTN size = 0;
        modes[i] = (struct gop_mode_info){ 0, 0, 0 };
        if (gop->QueryMode(gop, i, &size, &info) == EFI_SUCCESS && info) {
            modes[i].width = info->HorizontalResolution;
            modes[i].height = info->VerticalResolution;
            modes[i].linear = linear_format(info->PixelFormat);
            g_bs->FreePool(info);
        }
    }
    uint32_t want_w = 0, want_h = 0, native_w = 0, native_h = 0;
    size_t len;
    const char *v = options_value(options, "loader_screen", &len);
    if (v && !gop_parse_size(v, len, &want_w, &want_h)) {
        con_printf("LociOS loader: note: loader_screen=%.*s is not WIDTHxHEIGHT (e.g. "
                   "1280x800); ignored\n",
                   (int)len, v);
    }
    int have_native = edid_native(&native_w, &native_h);
    unsigned current = gop->Mode->Mode;
    struct gop_choice c =
        gop_mode_choose(modes, n, current, want_w, want_h, native_w, native_h, GOP_MAX_PIXELS);
    if (c.asked_missing) {
        con_printf("LociOS loader: note: loader_screen=%ux%u: the firmware offers no such "
                   "mode with a linear framebuffer\n",
                   want_w, want_h);
    }
    if (c.index < 0) {
        con_printf("LociOS loader: the graphics output has no linear framebuffer (pixel "
                   "format %u, %u modes; a Blt-only GOP such as virtio-gpu): the screen "
                   "stays as it is after the hand-off and the console is on the serial line "
                   "only\n",
                   (unsigned)gop->Mode->Info->PixelFormat, n);
        if (modes) {
            g_bs->FreePool(modes);
        }
        return;
    }
    const char *why = why_name(c.why);
    if ((unsigned)c.index != current) {
        EFI_STATUS s = gop->SetMode(gop, (UINT32)c.index);
        if (s != EFI_SUCCESS) {
            con_printf("LociOS loader: note: SetMode %ux%u failed (%s); keeping the "
                       "firmware's mode\n",
                       modes[c.index].width, modes[c.index].height, efi_status_name(s));
            why = "the firmware's mode (SetMode failed)";
        }
    }
    con_printf("LociOS loader: graphics: %u modes, firmware's %ux%u, display's preferred %s", n,
               current < n ? modes[current].width : 0, current < n ? modes[current].height : 0,
               have_native ? "" : "unknown (no EDID)");
    if (have_native) {
        con_printf("%ux%u", native_w, native_h);
    }
    con_printf("\n");
    if (modes) {
        g_bs->FreePool(modes);
    }
    // Whatever was set, describe what is set now: the mode's information and the
    // framebuffer's address can both change with SetMode.
    EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = gop->Mode->Info;
    if (!linear_format(info->PixelFormat)) {
        con_printf("LociOS loader: the graphics mode's pixel format %u has no linear "
                   "framebuffer: the console is on the serial line only after the "
                   "hand-off\n",
                   (unsigned)info->PixelFormat);
        return;
    }
    fb->base = gop->Mode->FrameBufferBase;
    fb->size = gop->Mode->FrameBufferSize;
    fb->width = info->HorizontalResolution;
    fb->height = info->VerticalResolution;
    fb->stride = info->PixelsPerScanLine;
    fb->format = info->PixelFormat == PixelRedGreenBlueReserved8BitPerColor ? 0 : 1;
    con_printf("LociOS loader: framebuffer %ux%u stride %u at 0x%llx (%s)\n", fb->width, fb->height,
               fb->stride, (unsigned long long)fb->base, why);
}
