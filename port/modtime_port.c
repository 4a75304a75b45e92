// SPDX-License-Identifier: MIT
// The port's part of the `time` module (included by extmod/modtime.c): time() and
// time_ns() count from kernel entry (no RTC driver yet); sleep() keeps microseconds.

// time(): seconds since kernel entry, as a float like CPython's.
static mp_obj_t mp_time_time_get(void) {
    return mp_obj_new_float((mp_float_t)mp_hal_time_ns() / (mp_float_t)1e9);
}

// sleep(seconds): halts the CPU between timer ticks (mp_hal_delay_us), with microsecond
// resolution instead of the default millisecond one.
static void mp_time_sleep(mp_obj_t seconds_o) {
    mp_float_t seconds = mp_obj_get_float(seconds_o);
    if (seconds > 0) {
        mp_hal_delay_us((mp_uint_t)(seconds * (mp_float_t)1e6));
    }
}
