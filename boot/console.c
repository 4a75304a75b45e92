// SPDX-License-Identifier: MIT
// Loader messages on the UEFI console, mirrored to COM1 only when the firmware's own
// console output does not already go there; the refusal wait.
#include <stdarg.h>

#include "fmt.h"
#include "loader.h"

#define LINE_MAX     512
#define CHUNK        128
#define DP_MESSAGING 0x03
#define DP_SUB_UART  14
#define DP_END       0x7f
#define DP_END_ALL   0xff
#define TICKS_PER_S  10000000ULL  // SetTimer counts 100 ns units

static int mirror_to_uart;

// True if the multi-instance device path in buf[0..len) has a UART node in any instance.
static int devpath_has_uart(const uint8_t *buf, UINTN len) {
    UINTN off = 0;
    while (len - off >= 4) {
        uint8_t type = buf[off], sub = buf[off + 1];
        UINTN node = (UINTN)buf[off + 2] | ((UINTN)buf[off + 3] << 8);
        if (node < 4 || node > len - off) {
            return 0;
        }
        if (type == DP_MESSAGING && sub == DP_SUB_UART) {
            return 1;
        }
        if (type == DP_END && sub == DP_END_ALL) {
            return 0;
        }
        off += node;
    }
    return 0;
}

// The firmware mirrors ConOut to a serial port when the ConOut variable names one.
static int conout_reaches_uart(void) {
    static uint8_t small[1024];
    EFI_GUID global = EFI_GLOBAL_VARIABLE;
    UINTN len = sizeof small;
    uint8_t *buf = small;
    EFI_RUNTIME_SERVICES *rt = g_st->RuntimeServices;
    EFI_STATUS s = rt->GetVariable(L"ConOut", &global, NULL, &len, buf);
    if (s == EFI_BUFFER_TOO_SMALL) {
        if (g_bs->AllocatePool(EfiLoaderData, len, (void **)&buf) != EFI_SUCCESS) {
            return 0;
        }
        s = rt->GetVariable(L"ConOut", &global, NULL, &len, buf);
    }
    int found = (s == EFI_SUCCESS) && devpath_has_uart(buf, len);
    if (buf != small) {
        g_bs->FreePool(buf);
    }
    return found;
}

void con_init(void) {
    if (!conout_reaches_uart() && uart_present()) {
        uart_init();
        mirror_to_uart = 1;
    }
}

static void con_write(const char *s, size_t len) {
    CHAR16 out[CHUNK + 2];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n') {
            out[n++] = L'\r';
        }
        out[n++] = (CHAR16)(unsigned char)s[i];
        if (n >= CHUNK || i + 1 == len) {
            out[n] = 0;
            if (g_st->ConOut != NULL) {
                g_st->ConOut->OutputString(g_st->ConOut, out);
            }
            n = 0;
        }
    }
    if (mirror_to_uart) {
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '\n') {
                uart_write("\r", 1);
            }
            uart_write(&s[i], 1);
        }
    }
}

static void con_vprintf(const char *fmt, va_list ap) {
    char line[LINE_MAX];
    size_t n = fmt_vsnprintf(line, sizeof line, fmt, ap);
    con_write(line, n);
}

void con_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    con_vprintf(fmt, ap);
    va_end(ap);
}

EFI_STATUS fail(EFI_STATUS status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    con_printf("LociOS loader: error: ");
    con_vprintf(fmt, ap);
    con_printf("\n");
    va_end(ap);
    return status;
}

void con_wait_key(void) {
    con_printf("LociOS loader: press a key, or wait %u s, to return to the firmware.\n",
               LOADER_REFUSAL_WAIT_S);
    EFI_EVENT events[2];
    UINTN n = 0;
    EFI_EVENT timer = NULL;
    if (g_bs->CreateEvent(EVT_TIMER, 0, NULL, NULL, &timer) == EFI_SUCCESS &&
        g_bs->SetTimer(timer, TimerRelative, LOADER_REFUSAL_WAIT_S * TICKS_PER_S) == EFI_SUCCESS) {
        events[n++] = timer;
    }
    if (g_st->ConIn != NULL) {
        events[n++] = g_st->ConIn->WaitForKey;
    }
    if (n > 0) {
        UINTN index;
        g_bs->WaitForEvent(n, events, &index);
    } else {
        g_bs->Stall(LOADER_REFUSAL_WAIT_S * 1000000ULL);
    }
    if (g_st->ConIn != NULL) {
        EFI_INPUT_KEY key;
        g_st->ConIn->ReadKeyStroke(g_st->ConIn, &key);
    }
    if (timer != NULL) {
        g_bs->CloseEvent(timer);
    }
}

const char *efi_status_name(EFI_STATUS s) {
    switch (s) {
        case EFI_SUCCESS:
            return "EFI_SUCCESS";
        case EFI_LOAD_ERROR:
            return "EFI_LOAD_ERROR";
        case EFI_INVALID_PARAMETER:
            return "EFI_INVALID_PARAMETER";
        case EFI_UNSUPPORTED:
            return "EFI_UNSUPPORTED";
        case EFI_BUFFER_TOO_SMALL:
            return "EFI_BUFFER_TOO_SMALL";
        case EFI_NOT_READY:
            return "EFI_NOT_READY";
        case EFI_DEVICE_ERROR:
            return "EFI_DEVICE_ERROR";
        case EFI_OUT_OF_RESOURCES:
            return "EFI_OUT_OF_RESOURCES";
        case EFI_VOLUME_CORRUPTED:
            return "EFI_VOLUME_CORRUPTED";
        case EFI_NOT_FOUND:
            return "EFI_NOT_FOUND";
        case EFI_ACCESS_DENIED:
            return "EFI_ACCESS_DENIED";
        case EFI_SECURITY_VIOLATION:
            return "EFI_SECURITY_VIOLATION";
        case EFI_COMPROMISED_DATA:
            return "EFI_COMPROMISED_DATA";
        default:
            return "EFI error";
    }
}
