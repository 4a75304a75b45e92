// SPDX-License-Identifier: MIT
// Reads files from the FAT volume BOOTX64.EFI was started from: \LOCIOS\KERNEL.ELF, whole,
// and the optional boot options file \LOCIOS\OPTIONS.TXT.
#include "loader.h"
#include "options.h"

#define INFO_BUF 512

// Opens `path` on the boot volume. EFI_NOT_FOUND is returned without a message, so the
// caller decides whether a missing file is an error.
static EFI_STATUS open_on_boot_volume(CHAR16 *path, const char *path_str, EFI_FILE_HANDLE *file) {
    EFI_GUID li_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
    EFI_GUID fs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
    EFI_LOADED_IMAGE *li;
    EFI_STATUS s = g_bs->HandleProtocol(g_image, &li_guid, (void **)&li);
    if (s != EFI_SUCCESS) {
        return fail(s, "no LoadedImage protocol on our own image (%s)", efi_status_name(s));
    }
    EFI_FILE_IO_INTERFACE *fs;
    s = g_bs->HandleProtocol(li->DeviceHandle, &fs_guid, (void **)&fs);
    if (s != EFI_SUCCESS) {
        return fail(s,
                    "the device this loader was started from has no file system (%s); "
                    "boot it from the FAT ESP that tools/build/mkimage.py writes",
                    efi_status_name(s));
    }
    EFI_FILE_HANDLE root;
    s = fs->OpenVolume(fs, &root);
    if (s != EFI_SUCCESS) {
        return fail(s, "cannot open the boot volume (%s)", efi_status_name(s));
    }
    s = root->Open(root, file, path, EFI_FILE_MODE_READ, 0);
    root->Close(root);
    if (s != EFI_SUCCESS && s != EFI_NOT_FOUND) {
        return fail(s, "cannot open %s (%s)", path_str, efi_status_name(s));
    }
    return s;
}

static EFI_STATUS open_kernel(EFI_FILE_HANDLE *file) {
    EFI_STATUS s = open_on_boot_volume(LOADER_KERNEL_PATH, LOADER_KERNEL_PATH_STR, file);
    if (s == EFI_NOT_FOUND) {
        return fail(s,
                    "%s not found on the volume BOOTX64.EFI was started from; "
                    "nothing to boot. Rebuild the image with tools/build/mkimage.py, which puts "
                    "the kernel there",
                    LOADER_KERNEL_PATH_STR);
    }
    return s;
}

static EFI_STATUS file_size(EFI_FILE_HANDLE file, const char *path_str, uint64_t *size) {
    EFI_GUID info_guid = EFI_FILE_INFO_ID;
    UINT64 buf[INFO_BUF / sizeof(UINT64)];
    UINTN len = sizeof buf;
    EFI_STATUS s = file->GetInfo(file, &info_guid, &len, buf);
    if (s != EFI_SUCCESS) {
        return fail(s, "cannot stat %s (%s)", path_str, efi_status_name(s));
    }
    *size = ((EFI_FILE_INFO *)buf)->FileSize;
    return EFI_SUCCESS;
}

EFI_STATUS kernel_file_read(uint8_t **data, uint64_t *size) {
    EFI_FILE_HANDLE file;
    EFI_STATUS s = open_kernel(&file);
    if (s != EFI_SUCCESS) {
        return s;
    }
    s = file_size(file, LOADER_KERNEL_PATH_STR, size);
    if (s != EFI_SUCCESS) {
        goto out;
    }
    con_printf("LociOS loader: reading %s (%llu bytes)\n", LOADER_KERNEL_PATH_STR,
               (unsigned long long)*size);
    if (*size == 0 || *size > ELF_CHECK_MAX_SPAN) {
        s = fail(EFI_LOAD_ERROR, "%s is %llu bytes; a kernel is 1 byte to %llu MiB",
                 LOADER_KERNEL_PATH_STR, (unsigned long long)*size, ELF_CHECK_MAX_SPAN >> 20);
        goto out;
    }
    s = g_bs->AllocatePool(EfiLoaderData, *size, (void **)data);
    if (s != EFI_SUCCESS) {
        s = fail(s, "no memory for a %llu-byte kernel file (%s)", (unsigned long long)*size,
                 efi_status_name(s));
        goto out;
    }
    uint64_t done = 0;
    while (done < *size) {
        UINTN chunk = *size - done;
        s = file->Read(file, &chunk, *data + done);
        if (s != EFI_SUCCESS || chunk == 0) {
            s = fail(s != EFI_SUCCESS ? s : EFI_END_OF_FILE,
                     "reading %s stopped at byte %llu of %llu (%s)", LOADER_KERNEL_PATH_STR,
                     (unsigned long long)done, (unsigned long long)*size, efi_status_name(s));
            g_bs->FreePool(*data);
            goto out;
        }
        done += chunk;
    }
out:
    file->Close(file);
    return s;
}

EFI_STATUS options_file_read(char out[BOOTINFO_OPTIONS_MAX]) {
    out[0] = '\0';
    EFI_FILE_HANDLE file;
    EFI_STATUS s = open_on_boot_volume(LOADER_OPTIONS_PATH, LOADER_OPTIONS_PATH_STR, &file);
    if (s == EFI_NOT_FOUND) {
        return EFI_SUCCESS;
    }
    if (s != EFI_SUCCESS) {
        return s;
    }
    uint64_t size;
    s = file_size(file, LOADER_OPTIONS_PATH_STR, &size);
    if (s == EFI_SUCCESS) {
        uint8_t text[BOOTINFO_OPTIONS_MAX];
        UINTN len = size < sizeof text ? (UINTN)size : sizeof text;
        s = file->Read(file, &len, text);
        size_t bad_at;
        int rc =
            size >= sizeof text ? OPTIONS_ERR_TOO_LONG : options_normalise(text, len, out, &bad_at);
        if (s != EFI_SUCCESS) {
            s = fail(s, "cannot read %s (%s)", LOADER_OPTIONS_PATH_STR, efi_status_name(s));
        } else if (rc == OPTIONS_ERR_TOO_LONG) {
            s = fail(EFI_LOAD_ERROR, "%s refused: %llu bytes, at most %u are allowed",
                     LOADER_OPTIONS_PATH_STR, (unsigned long long)size,
                     (unsigned)BOOTINFO_OPTIONS_MAX - 1);
        } else if (rc != OPTIONS_OK) {
            s = fail(EFI_LOAD_ERROR,
                     "%s refused: byte 0x%02x at offset %llu is not "
                     "printable ASCII; options are words like heap_percent=50",
                     LOADER_OPTIONS_PATH_STR, text[bad_at], (unsigned long long)bad_at);
        } else {
            con_printf("LociOS loader: options: %s\n", out[0] ? out : "(none)");
        }
    }
    file->Close(file);
    return s;
}
