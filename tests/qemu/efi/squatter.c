// SPDX-License-Identifier: MIT
// A test-only UEFI application: it takes the physical range a kernel linked at a fixed
// low address used to need (as firmware on real boards does with its own runtime
// code), then starts the real loader, \LOCIOS\LOADER.EFI, with LoadImage/StartImage.
// The kernel must still boot: the loader places it wherever there is room.
#include <efi.h>
#include <efilib.h>

#define SQUAT_START 0x200000ULL
#define SQUAT_END   0x1000000ULL
#define PAGE        4096ULL

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
    InitializeLib(image, st);
    EFI_BOOT_SERVICES *bs = st->BootServices;
    UINTN taken = 0;
    for (UINT64 a = SQUAT_START; a < SQUAT_END; a += PAGE) {
        EFI_PHYSICAL_ADDRESS at = a;
        if (uefi_call_wrapper(bs->AllocatePages, 4, AllocateAddress, EfiRuntimeServicesCode, 1,
                              &at) == EFI_SUCCESS) {
            taken++;
        }
    }
    Print(L"squatter: took %lu of %lu pages in [0x%lx, 0x%lx)\n", taken,
          (SQUAT_END - SQUAT_START) / PAGE, SQUAT_START, SQUAT_END);

    EFI_LOADED_IMAGE *self = NULL;
    EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
    EFI_STATUS s = uefi_call_wrapper(bs->HandleProtocol, 3, image, &lip, (void **)&self);
    if (EFI_ERROR(s)) {
        Print(L"squatter: no loaded image protocol: %r\n", s);
        return s;
    }
    EFI_DEVICE_PATH *path = FileDevicePath(self->DeviceHandle, L"\\LOCIOS\\LOADER.EFI");
    EFI_HANDLE loader = NULL;
    s = uefi_call_wrapper(bs->LoadImage, 6, FALSE, image, path, NULL, 0, &loader);
    if (EFI_ERROR(s)) {
        Print(L"squatter: LoadImage of \\LOCIOS\\LOADER.EFI failed: %r\n", s);
        return s;
    }
    s = uefi_call_wrapper(bs->StartImage, 3, loader, NULL, NULL);
    Print(L"squatter: the loader returned %r\n", s);
    return s;
}
