// SPDX-License-Identifier: MIT
// The port's part of the `machine` module (included by extmod/modmachine.c): idle,
// reset, freq and the port8/port16/port32 objects for x86 port I/O.
#include "kapi.h"
#include "port.h"

static void mp_machine_idle(void) {
    kcpu_wait_for_interrupt();
}

static mp_obj_t machine_hard_reset(void) {
    kpower_reset();
}
static MP_DEFINE_CONST_FUN_OBJ_0(machine_hard_reset_obj, machine_hard_reset);

// freq(): the calibrated TSC rate in Hz (invariant TSC: the nominal core clock). The
// frequency cannot be changed.
static mp_obj_t machine_tsc_freq(void) {
    return mp_obj_new_int_from_uint(ktime_tsc_hz());
}
static MP_DEFINE_CONST_FUN_OBJ_0(machine_tsc_freq_obj, machine_tsc_freq);

// port8[p], port16[p], port32[p]: read with `x = port8[p]`, write with `port8[p] = x`.
typedef struct _machine_port_obj_t {
    mp_obj_base_t base;
    unsigned width;  // bytes: 1, 2 or 4
} machine_port_obj_t;

#define MACHINE_PORT_MAX (0xffff)

static void machine_port_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    machine_port_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_printf(print, "<%u-bit I/O port space>", 8 * self->width);
}

static uint16_t machine_port_number(mp_obj_t index) {
    mp_int_t port = mp_obj_get_int(index);
    if (port < 0 || port > MACHINE_PORT_MAX) {
        mp_raise_msg_varg(&mp_type_ValueError,
                          MP_ERROR_TEXT("I/O port %d out of range: expected 0..0xffff"), (int)port);
    }
    return (uint16_t)port;
}

static mp_obj_t machine_port_subscr(mp_obj_t self_in, mp_obj_t index, mp_obj_t value) {
    machine_port_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (value == MP_OBJ_NULL) {
        return MP_OBJ_NULL;  // del port8[p] is not supported
    }
    uint16_t port = machine_port_number(index);
    if (value == MP_OBJ_SENTINEL) {
        switch (self->width) {
            case 1:
                return MP_OBJ_NEW_SMALL_INT(kio_in8(port));
            case 2:
                return MP_OBJ_NEW_SMALL_INT(kio_in16(port));
            default:
                return mp_obj_new_int_from_uint(kio_in32(port));
        }
    }
    mp_uint_t v = mp_obj_get_int_truncated(value);
    switch (self->width) {
        case 1:
            kio_out8(port, (uint8_t)v);
            break;
        case 2:
            kio_out16(port, (uint16_t)v);
            break;
        default:
            kio_out32(port, (uint32_t)v);
            break;
    }
    return mp_const_none;
}

static MP_DEFINE_CONST_OBJ_TYPE(machine_port_type, MP_QSTR_port, MP_TYPE_FLAG_NONE, print,
                                machine_port_print, subscr, machine_port_subscr);

static const machine_port_obj_t machine_port8_obj = { { &machine_port_type }, 1 };
static const machine_port_obj_t machine_port16_obj = { { &machine_port_type }, 2 };
static const machine_port_obj_t machine_port32_obj = { { &machine_port_type }, 4 };
