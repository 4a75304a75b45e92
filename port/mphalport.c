// SPDX-License-Identifier: MIT
// MicroPython's HAL on LociOS: serial console I/O and the REPL's idle hook, Ctrl-C, time
// and delays, and committing emitted machine code to the kernel's executable arena.
#include "py/mphal.h"
#include "py/persistentcode.h"
#include "py/runtime.h"
#include "py/stream.h"
#include "shared/runtime/pyexec.h"
#include "shared/timeutils/timeutils.h"

#include <string.h>

#include "port.h"
#include "rw_exec.h"  // rw_exec_note (vm/opt/mod/rw_exec.c)

// ---- Idle hook (kernel.idle) -------------------------------------------------------------

// The function kernel.idle registered, or MP_OBJ_NULL.
MP_REGISTER_ROOT_POINTER(mp_obj_t idle_fn);

static bool idle_running;

void mp_hal_idle_reset(void) {
    MP_STATE_PORT(idle_fn) = MP_OBJ_NULL;
    idle_running = false;
}

// Only the friendly REPL's own wait counts as idle: there the interrupt char is off
// (Python code running input() has it on) and nothing drives a protocol over the line
// (the raw REPL does). Never while fn itself runs.
static bool idle_wanted(void) {
    return MP_STATE_PORT(idle_fn) != MP_OBJ_NULL && !idle_running && mp_interrupt_char < 0 &&
           pyexec_mode_kind == PYEXEC_MODE_FRIENDLY_REPL;
}

// One call of fn. An exception that escapes it is printed once and unregisters fn, so a
// broken fn cannot flood the console.
static void idle_call(void) {
    idle_running = true;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_call_function_0(MP_STATE_PORT(idle_fn));
        nlr_pop();
    } else {
        MP_STATE_PORT(idle_fn) = MP_OBJ_NULL;
        mp_printf(&mp_plat_print, "\nkernel.idle: the idle function raised; unregistered it:\n");
        mp_obj_print_exception(&mp_plat_print, MP_OBJ_FROM_PTR(nlr.ret_val));
    }
    idle_running = false;
}

// ---- Console ------------------------------------------------------------------------------

// Console output capture (kernel.capture): the optimiser's equivalence gate runs old and
// new code and compares what they print. While capturing, output goes to a fixed buffer
// instead of the console; what does not fit is counted, not written.
static char capture_buf[LOCIOS_CAPTURE_BYTES];
static size_t capture_len;
static size_t capture_lost;
static bool capturing;

void port_capture_start(void) {
    capture_len = 0;
    capture_lost = 0;
    capturing = true;
}

bool port_capture_stop(const char **buf, size_t *len, size_t *lost) {
    bool was = capturing;
    capturing = false;
    *buf = capture_buf;
    *len = capture_len;
    *lost = capture_lost;
    return was;
}

mp_uint_t mp_hal_stdout_tx_strn(const char *str, size_t len) {
    if (capturing) {
        size_t room = sizeof(capture_buf) - capture_len;
        size_t n = len < room ? len : room;
        memcpy(capture_buf + capture_len, str, n);
        capture_len += n;
        capture_lost += len - n;
        return len;
    }
    kcon_write(str, len);
    return len;
}

// Waits for a byte. While the REPL waits with no input pending, the idle function runs
// over and over (input is looked at between calls); otherwise run pending callbacks
// (which may raise, e.g. KeyboardInterrupt scheduled from the console interrupt), then
// halt until the next interrupt.
int mp_hal_stdin_rx_chr(void) {
    for (;;) {
        int c = kcon_read();
        if (c >= 0) {
            return c;
        }
        kcon_flush();  // what is on its way to a screen shows before we wait
        if (idle_wanted()) {
            idle_call();
            mp_event_handle_nowait();
            continue;
        }
        mp_event_wait_indefinite();
    }
}

uintptr_t mp_hal_stdio_poll(uintptr_t poll_flags) {
    uintptr_t ret = 0;
    if ((poll_flags & MP_STREAM_POLL_RD) && kcon_pending() > 0) {
        ret |= MP_STREAM_POLL_RD;
    }
    // kcon_write blocks until the UART has taken every byte, so writing never fails.
    ret |= poll_flags & MP_STREAM_POLL_WR;
    return ret;
}

// ---- Interrupt character (Ctrl-C) -----------------------------------------------------------

int mp_interrupt_char = -1;

// Called by the console's receive interrupt: only flag the exception, the VM raises it
// at its next check (bytecode jumps, mp_handle_pending).
static void on_interrupt_char(void) {
    mp_sched_keyboard_interrupt();
}

// The REPL turns the interrupt char off while it reads raw input (so 0x03 arrives as a
// byte) and on while Python code runs.
void mp_hal_set_interrupt_char(int c) {
    mp_interrupt_char = c;
    if (c >= 0) {
        kcon_set_interrupt_char(c, on_interrupt_char);
    } else {
        kcon_set_interrupt_char(-1, NULL);
    }
}

// ---- Time ------------------------------------------------------------------------------------

mp_uint_t mp_hal_ticks_ms(void) {
    return (mp_uint_t)ktime_ms();
}

mp_uint_t mp_hal_ticks_us(void) {
    return (mp_uint_t)ktime_us();
}

// There is no RTC driver yet: the epoch is kernel entry.
uint64_t mp_hal_time_ns(void) {
    uint64_t cycles = ktime_tsc() - ktime_entry_tsc();
    return (uint64_t)(((unsigned __int128)cycles * 1000000000u) / ktime_tsc_hz());
}

// Sleep until `deadline_us` (ktime_us clock). Whole timer periods are spent halted
// (waking on every interrupt to run pending callbacks and check for Ctrl-C); only the
// last fraction of a period, which no interrupt can time, is spent polling the clock.
static void delay_until_us(uint64_t deadline_us) {
    uint64_t period_us = 1000000u / ktime_tick_hz();
    for (;;) {
        uint64_t now = ktime_us();
        if (now >= deadline_us) {
            return;
        }
        if (deadline_us - now > period_us) {
            mp_event_wait_ms((deadline_us - now) / 1000);
        } else {
            mp_event_handle_nowait();
        }
    }
}

void mp_hal_delay_us(mp_uint_t us) {
    delay_until_us(ktime_us() + us);
}

void mp_hal_delay_ms(mp_uint_t ms) {
    delay_until_us(ktime_us() + (uint64_t)ms * 1000u);
}

// FAT timestamps: there is no RTC driver yet, so files are stamped with the time since
// kernel entry counted from MicroPython's epoch (2000-01-01).
uint32_t get_fattime(void) {
    timeutils_struct_time_t tm;
    timeutils_seconds_since_2000_to_struct_time(mp_hal_time_ns() / 1000000000u, &tm);
    return ((uint32_t)(tm.tm_year - 1980) << 25) | ((uint32_t)tm.tm_mon << 21) |
           ((uint32_t)tm.tm_mday << 16) | ((uint32_t)tm.tm_hour << 11) |
           ((uint32_t)tm.tm_min << 5) | ((uint32_t)tm.tm_sec / 2);
}

uint32_t mp_hal_random_seed(void) {
    uint64_t t = ktime_tsc();
    return (uint32_t)(t ^ (t >> 32));
}

// ---- Executable arena ------------------------------------------------------------------------

static void raise_arena_full(size_t len) {
    struct kmem_stats st;
    kmem_get_stats(&st);
    mp_raise_msg_varg(&mp_type_MemoryError,
                      MP_ERROR_TEXT("executable arena full: %u of %u bytes used, %u more needed; "
                                    "soft reset (Ctrl-D) frees it"),
                      (unsigned)st.exec_bytes_used, (unsigned)st.exec_bytes_total, (unsigned)len);
}

// MP_PLAT_COMMIT_EXEC: the emitter assembled `len` bytes in `buf` on the GC heap (or
// the .mpy loader read them there); copy them to the kernel's W^X arena and run them
// from there. Native code from an .mpy file comes with `reloc`: it is patched in `buf`
// for the address it will have in the arena, then committed.
void *mp_port_commit_exec(void *buf, size_t len, void *reloc) {
    if (reloc != NULL) {
        void *dest = kexec_next(len);
        if (dest == NULL) {
            raise_arena_full(len);
        }
        mp_native_relocate(reloc, buf, (uintptr_t)dest);
    }
    void *code = kexec_commit(buf, len);
    if (code == NULL) {
        raise_arena_full(len);
    }
    rw_exec_note(code, len);  // the optimiser's journal digests promoted native code
    return code;
}
