// SPDX-License-Identifier: MIT
// The `kernel` module: the kernel's view of the machine for Python — memory map and
// use, GC heap, interned strings, time, the loader's measured kernel digest, boot time
// and power, and the REPL's idle hook.
#include <string.h>

#include "py/gc.h"
#include "py/objstr.h"
#include "py/runtime.h"

#include "kapi.h"
#include "port.h"

#define FRAME_BYTES (4096u)

static qstr mem_kind_name(uint32_t kind) {
    switch (kind) {
        case BOOTINFO_MEM_USABLE:
            return MP_QSTR_usable;
        case BOOTINFO_MEM_RECLAIMABLE:
            return MP_QSTR_reclaimable;
        case BOOTINFO_MEM_KERNEL:
            return MP_QSTR_kernel;
        case BOOTINFO_MEM_ACPI_RECLAIM:
            return MP_QSTR_acpi_reclaim;
        case BOOTINFO_MEM_ACPI_NVS:
            return MP_QSTR_acpi_nvs;
        case BOOTINFO_MEM_RUNTIME:
            return MP_QSTR_uefi_runtime;
        case BOOTINFO_MEM_MMIO:
            return MP_QSTR_mmio;
        default:
            return MP_QSTR_reserved;
    }
}

static void dict_put(mp_obj_t dict, qstr key, uint64_t value) {
    mp_obj_dict_store(dict, MP_OBJ_NEW_QSTR(key), mp_obj_new_int_from_uint(value));
}

// memmap(): [(base, pages, kind), ...] as the loader reported it, sorted by base.
static mp_obj_t kernel_memmap(void) {
    const struct bootinfo *bi = kboot_info();
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (uint32_t i = 0; i < bi->region_count && i < BOOTINFO_MAX_REGIONS; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        mp_obj_t item[3] = {
            mp_obj_new_int_from_uint(r->base),
            mp_obj_new_int_from_uint(r->pages),
            MP_OBJ_NEW_QSTR(mem_kind_name(r->kind)),
        };
        mp_obj_list_append(list, mp_obj_new_tuple(3, item));
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_memmap_obj, kernel_memmap);

// mem(): RAM and frame use in bytes/frames, as the kernel's allocator counts them.
static mp_obj_t kernel_mem(void) {
    struct kmem_stats st;
    kmem_get_stats(&st);
    mp_obj_t d = mp_obj_new_dict(7);
    dict_put(d, MP_QSTR_ram, st.ram_bytes);
    dict_put(d, MP_QSTR_frames_total, st.frames_total);
    dict_put(d, MP_QSTR_frames_free, st.frames_free);
    dict_put(d, MP_QSTR_heap, st.heap_bytes);
    dict_put(d, MP_QSTR_exec_total, st.exec_bytes_total);
    dict_put(d, MP_QSTR_exec_used, st.exec_bytes_used);
    dict_put(d, MP_QSTR_kernel, st.kernel_bytes);
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_mem_obj, kernel_mem);

// heap(): the GC heap in bytes (total, used, free, largest free run) and block counts.
static mp_obj_t kernel_heap(void) {
    gc_info_t info;
    gc_info(&info);
    mp_obj_t d = mp_obj_new_dict(7);
    dict_put(d, MP_QSTR_total, info.total);
    dict_put(d, MP_QSTR_used, info.used);
    dict_put(d, MP_QSTR_free, info.free);
    dict_put(d, MP_QSTR_max_free, (uint64_t)info.max_free * MICROPY_BYTES_PER_GC_BLOCK);
    dict_put(d, MP_QSTR_max_block, (uint64_t)info.max_block * MICROPY_BYTES_PER_GC_BLOCK);
    dict_put(d, MP_QSTR_blocks_1, info.num_1block);
    dict_put(d, MP_QSTR_blocks_2, info.num_2block);
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_heap_obj, kernel_heap);

// qstrs(): the interned strings (names, short literals): how many, the room left in the
// newest pool, and the hash index that finds them (vm/patches/0019): its slots and the
// slots in use (both 0 while there is none, after a soft reset until the first new one).
static mp_obj_t kernel_qstrs(void) {
    size_t count, pool_room, slots, used;
    qstr_index_info(&count, &pool_room, &slots, &used);
    mp_obj_t d = mp_obj_new_dict(4);
    dict_put(d, MP_QSTR_count, count);
    dict_put(d, MP_QSTR_pool_room, pool_room);
    dict_put(d, MP_QSTR_index_slots, slots);
    dict_put(d, MP_QSTR_index_used, used);
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_qstrs_obj, kernel_qstrs);

static mp_obj_t kernel_uptime_ms(void) {
    return mp_obj_new_int_from_uint(ktime_ms());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_uptime_ms_obj, kernel_uptime_ms);

// ticks(): timer periods since the timer started, measured by the TSC as of the last
// timer interrupt (interrupts can arrive late or merged; see interrupts()['timer']).
static mp_obj_t kernel_ticks(void) {
    return mp_obj_new_int_from_uint(ktime_ticks());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_ticks_obj, kernel_ticks);

static mp_obj_t kernel_tick_hz(void) {
    return mp_obj_new_int_from_uint(ktime_tick_hz());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_tick_hz_obj, kernel_tick_hz);

static mp_obj_t kernel_set_tick_hz(mp_obj_t hz_in) {
    mp_int_t hz = mp_obj_get_int(hz_in);
    if (hz <= 0 || hz > UINT32_MAX || !ktime_set_tick_hz((uint32_t)hz)) {
        mp_raise_ValueError(MP_ERROR_TEXT("tick rate out of range"));
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(kernel_set_tick_hz_obj, kernel_set_tick_hz);

// interrupts(): interrupts taken since boot, by source, and the serial receive path's
// counters (bytes, times the ring was full and input waited in the UART, overruns).
static mp_obj_t kernel_interrupts(void) {
    struct kirq_stats st;
    kirq_get_stats(&st);
    mp_obj_t d = mp_obj_new_dict(7);
    dict_put(d, MP_QSTR_timer, st.timer);
    dict_put(d, MP_QSTR_com1, st.com1);
    dict_put(d, MP_QSTR_spurious, st.spurious);
    dict_put(d, MP_QSTR_other, st.other);
    dict_put(d, MP_QSTR_rx_bytes, kcon_rx_bytes());
    dict_put(d, MP_QSTR_rx_ring_full, kcon_rx_ring_full());
    dict_put(d, MP_QSTR_rx_overruns, kcon_rx_overruns());
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_interrupts_obj, kernel_interrupts);

// raise_spurious(): take the LAPIC spurious vector and the 8259's IRQ7/IRQ15 vectors by
// software interrupt, to check that they are counted and harmless.
static mp_obj_t kernel_raise_spurious(void) {
    kirq_raise_spurious();
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_raise_spurious_obj, kernel_raise_spurious);

static mp_obj_t kernel_tsc_hz(void) {
    return mp_obj_new_int_from_uint(ktime_tsc_hz());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_tsc_hz_obj, kernel_tsc_hz);

// digest(): the SHA-256 the loader measured the kernel ELF with, as 64 hex digits.
static mp_obj_t kernel_digest(void) {
    static const char hex[] = "0123456789abcdef";
    const uint8_t *sha = kboot_info()->kernel_sha256;
    size_t n = sizeof(kboot_info()->kernel_sha256);
    vstr_t vstr;
    vstr_init_len(&vstr, 2 * n);
    for (size_t i = 0; i < n; i++) {
        vstr.buf[2 * i] = hex[sha[i] >> 4];
        vstr.buf[2 * i + 1] = hex[sha[i] & 0xf];
    }
    return mp_obj_new_str_from_vstr(&vstr);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_digest_obj, kernel_digest);

// cycles(): the raw TSC, full width (time.ticks_cpu() wraps): for benchmarks that time
// more than a fraction of a second.
static mp_obj_t kernel_cycles(void) {
    return mp_obj_new_int_from_uint(ktime_tsc());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_cycles_obj, kernel_cycles);

// boot_cycles(): TSC cycles from the kernel's first instruction to the first prompt.
static mp_obj_t kernel_boot_cycles(void) {
    return mp_obj_new_int_from_uint(port_boot_cycles());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_boot_cycles_obj, kernel_boot_cycles);

// loader_cycles(): TSC cycles the loader spent from its start to the kernel jump.
static mp_obj_t kernel_loader_cycles(void) {
    const struct bootinfo *bi = kboot_info();
    return mp_obj_new_int_from_uint(bi->loader_tsc_exit - bi->loader_tsc_start);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_loader_cycles_obj, kernel_loader_cycles);

// machine(): where the kernel runs and what it found — placement, CPU, APIC mode, the
// TSC's timer reference, the serial console.
static mp_obj_t kernel_machine(void) {
    struct kmachine_info m;
    kmachine_get(&m);
    mp_obj_t d = mp_obj_new_dict(12);
    dict_put(d, MP_QSTR_kernel_virt, m.kernel_virt);
    dict_put(d, MP_QSTR_kernel_phys, m.kernel_phys_start);
    dict_put(d, MP_QSTR_kernel_bytes, m.kernel_phys_end - m.kernel_phys_start);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_cpu),
                      mp_obj_new_str(m.cpu_brand, strlen(m.cpu_brand)));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_qemu), mp_obj_new_bool(m.qemu));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_nx), mp_obj_new_bool(m.nx));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_lapic),
                      MP_OBJ_NEW_QSTR(m.x2apic ? MP_QSTR_x2apic : MP_QSTR_xapic));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_x2apic_by_loader),
                      mp_obj_new_bool(m.x2apic_by_loader));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_acpi_hw_reduced),
                      mp_obj_new_bool(m.acpi_hw_reduced));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_tsc_reference),
                      mp_obj_new_str(m.tsc_reference, strlen(m.tsc_reference)));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_tsc_checks),
                      mp_obj_new_str(m.tsc_checks, strlen(m.tsc_checks)));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_serial),
                      mp_obj_new_str(m.serial, strlen(m.serial)));
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_machine_obj, kernel_machine);

// pci(): the PCI functions found at boot, as dicts (where, ids, class, BARs).
static mp_obj_t kernel_pci(void) {
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (unsigned i = 0; i < pci_count(); i++) {
        const struct pci_device *p = pci_get(i);
        mp_obj_t d = mp_obj_new_dict(8);
        dict_put(d, MP_QSTR_bus, p->bus);
        dict_put(d, MP_QSTR_dev, p->dev);
        dict_put(d, MP_QSTR_fn, p->fn);
        dict_put(d, MP_QSTR_vendor, p->vendor);
        dict_put(d, MP_QSTR_device, p->device);
        dict_put(d, MP_QSTR_cls, (uint64_t)p->class_code << 16 | p->subclass << 8 | p->prog_if);
        mp_obj_t bars = mp_obj_new_list(0, NULL);
        for (unsigned b = 0; b < 6; b++) {
            if (p->bar[b].size) {
                mp_obj_t t[3] = { mp_obj_new_int_from_uint(p->bar[b].base),
                                  mp_obj_new_int_from_uint(p->bar[b].size),
                                  mp_obj_new_bool(p->bar[b].io) };
                mp_obj_list_append(bars, mp_obj_new_tuple(3, t));
            }
        }
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_bars), bars);
        mp_obj_list_append(list, d);
    }
    return list;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_pci_obj, kernel_pci);

// keymap(): the keyboard layout; keymap(name) selects one ("us", "de").
static mp_obj_t kernel_keymap(size_t n_args, const mp_obj_t *args) {
    struct kkbd_info k;
    kkbd_get(&k);
    if (n_args == 1) {
        const char *name = mp_obj_str_get_str(args[0]);
        if (!kkbd_set_layout(name)) {
            mp_raise_msg_varg(&mp_type_ValueError,
                              MP_ERROR_TEXT("no keyboard layout '%s'; layouts: %s"), name,
                              k.layouts);
        }
        kkbd_get(&k);
    }
    return mp_obj_new_str(k.layout, strlen(k.layout));
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(kernel_keymap_obj, 0, 1, kernel_keymap);

// keyboards(): what keyboards there are and what they typed (the TSC of the last key
// and of the console's echo of it, for the keypress-to-echo latency).
static mp_obj_t kernel_keyboards(void) {
    struct kkbd_info k;
    kkbd_get(&k);
    mp_obj_t d = mp_obj_new_dict(6);
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_layout),
                      mp_obj_new_str(k.layout, strlen(k.layout)));
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_ps2), mp_obj_new_str(k.ps2, strlen(k.ps2)));
    dict_put(d, MP_QSTR_usb, k.usb);
    dict_put(d, MP_QSTR_bytes, k.bytes);
    dict_put(d, MP_QSTR_last_key_tsc, k.last_key_tsc);
    dict_put(d, MP_QSTR_echo_tsc, k.echo_tsc);
    return d;
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_keyboards_obj, kernel_keyboards);

static mp_obj_t kernel_poweroff(void) {
    kpower_off();
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_poweroff_obj, kernel_poweroff);

static mp_obj_t kernel_reset(void) {
    kpower_reset();
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_reset_obj, kernel_reset);

// crash(kind): stop the machine with a fault inside the kernel's own C, to see the fault
// dump ('null': NULL read, 'ud': invalid opcode, 'stack': kernel stack overflow).
static mp_obj_t kernel_crash(mp_obj_t kind_in) {
    qstr kind = mp_obj_str_get_qstr(kind_in);
    if (kind == MP_QSTR_null) {
        kcrash(KCRASH_NULL_READ);
    } else if (kind == MP_QSTR_ud) {
        kcrash(KCRASH_INVALID_OPCODE);
    } else if (kind == MP_QSTR_stack) {
        kcrash(KCRASH_STACK_OVERFLOW);
    }
    mp_raise_ValueError(MP_ERROR_TEXT("kind must be 'null', 'ud' or 'stack'"));
}
static MP_DEFINE_CONST_FUN_OBJ_1(kernel_crash_obj, kernel_crash);

// faults_recovered(): CPU exceptions turned into Python exceptions since boot.
static mp_obj_t kernel_faults_recovered(void) {
    return mp_obj_new_int_from_uint(kfault_recovered());
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_faults_recovered_obj, kernel_faults_recovered);

// idle(fn or None): while the friendly REPL waits for input with none pending, the port
// calls fn() over and over (e.g. one mesh round per call) and returns to the REPL as
// soon as a byte arrives (between two calls). Ctrl-C at the prompt stays ordinary
// input. An exception escaping fn is printed once and unregisters it; fn is not
// re-entered while it runs. None unregisters. See vm/budget/README.md.
static mp_obj_t kernel_idle(mp_obj_t fn) {
    if (fn != mp_const_none && !mp_obj_is_callable(fn)) {
        mp_raise_TypeError(MP_ERROR_TEXT("kernel.idle: fn must be callable or None"));
    }
    MP_STATE_PORT(idle_fn) = fn == mp_const_none ? MP_OBJ_NULL : fn;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(kernel_idle_obj, kernel_idle);

// capture(True) starts sending console output to a 4 KiB buffer instead of the serial
// line; capture(False) stops and returns (bytes captured, bytes that did not fit). Used
// by the optimiser (vm/opt/_gates.py) to compare what old and new code print.
static mp_obj_t kernel_capture(mp_obj_t on) {
    if (mp_obj_is_true(on)) {
        port_capture_start();
        return mp_const_none;
    }
    const char *buf;
    size_t len, lost;
    port_capture_stop(&buf, &len, &lost);
    mp_obj_t items[2] = { mp_obj_new_bytes((const byte *)buf, len),
                          mp_obj_new_int_from_uint(lost) };
    return mp_obj_new_tuple(2, items);
}
static MP_DEFINE_CONST_FUN_OBJ_1(kernel_capture_obj, kernel_capture);

// console_size(): the screen console's text grid as (columns, rows), or None when the
// machine has no screen console (serial only).
static mp_obj_t kernel_console_size(void) {
    unsigned cols, rows;
    if (!kcon_screen_size(&cols, &rows)) {
        return mp_const_none;
    }
    mp_obj_t t[2] = { MP_OBJ_NEW_SMALL_INT(cols), MP_OBJ_NEW_SMALL_INT(rows) };
    return mp_obj_new_tuple(2, t);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_console_size_obj, kernel_console_size);

// console_bench(): (cycles to draw the whole screen, cycles to draw a scroll by one
// line), measured by the kernel on a test pattern it leaves on screen; None without a
// screen console. tools/bench/bench_screen.py runs it under -icount.
static mp_obj_t kernel_console_bench(void) {
    uint64_t full, scroll;
    if (!kcon_screen_bench(&full, &scroll)) {
        return mp_const_none;
    }
    mp_obj_t t[2] = { mp_obj_new_int_from_uint(full), mp_obj_new_int_from_uint(scroll) };
    return mp_obj_new_tuple(2, t);
}
static MP_DEFINE_CONST_FUN_OBJ_0(kernel_console_bench_obj, kernel_console_bench);

static const mp_rom_map_elem_t kernel_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_kernel) },
    { MP_ROM_QSTR(MP_QSTR_memmap), MP_ROM_PTR(&kernel_memmap_obj) },
    { MP_ROM_QSTR(MP_QSTR_mem), MP_ROM_PTR(&kernel_mem_obj) },
    { MP_ROM_QSTR(MP_QSTR_heap), MP_ROM_PTR(&kernel_heap_obj) },
    { MP_ROM_QSTR(MP_QSTR_qstrs), MP_ROM_PTR(&kernel_qstrs_obj) },
    { MP_ROM_QSTR(MP_QSTR_uptime_ms), MP_ROM_PTR(&kernel_uptime_ms_obj) },
    { MP_ROM_QSTR(MP_QSTR_ticks), MP_ROM_PTR(&kernel_ticks_obj) },
    { MP_ROM_QSTR(MP_QSTR_tick_hz), MP_ROM_PTR(&kernel_tick_hz_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_tick_hz), MP_ROM_PTR(&kernel_set_tick_hz_obj) },
    { MP_ROM_QSTR(MP_QSTR_interrupts), MP_ROM_PTR(&kernel_interrupts_obj) },
    { MP_ROM_QSTR(MP_QSTR_raise_spurious), MP_ROM_PTR(&kernel_raise_spurious_obj) },
    { MP_ROM_QSTR(MP_QSTR_tsc_hz), MP_ROM_PTR(&kernel_tsc_hz_obj) },
    { MP_ROM_QSTR(MP_QSTR_digest), MP_ROM_PTR(&kernel_digest_obj) },
    { MP_ROM_QSTR(MP_QSTR_boot_cycles), MP_ROM_PTR(&kernel_boot_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_cycles), MP_ROM_PTR(&kernel_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_loader_cycles), MP_ROM_PTR(&kernel_loader_cycles_obj) },
    { MP_ROM_QSTR(MP_QSTR_machine), MP_ROM_PTR(&kernel_machine_obj) },
    { MP_ROM_QSTR(MP_QSTR_pci), MP_ROM_PTR(&kernel_pci_obj) },
    { MP_ROM_QSTR(MP_QSTR_keymap), MP_ROM_PTR(&kernel_keymap_obj) },
    { MP_ROM_QSTR(MP_QSTR_keyboards), MP_ROM_PTR(&kernel_keyboards_obj) },
    { MP_ROM_QSTR(MP_QSTR_poweroff), MP_ROM_PTR(&kernel_poweroff_obj) },
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&kernel_reset_obj) },
    { MP_ROM_QSTR(MP_QSTR_crash), MP_ROM_PTR(&kernel_crash_obj) },
    { MP_ROM_QSTR(MP_QSTR_faults_recovered), MP_ROM_PTR(&kernel_faults_recovered_obj) },
    { MP_ROM_QSTR(MP_QSTR_idle), MP_ROM_PTR(&kernel_idle_obj) },
    { MP_ROM_QSTR(MP_QSTR_capture), MP_ROM_PTR(&kernel_capture_obj) },
    { MP_ROM_QSTR(MP_QSTR_console_size), MP_ROM_PTR(&kernel_console_size_obj) },
    { MP_ROM_QSTR(MP_QSTR_console_bench), MP_ROM_PTR(&kernel_console_bench_obj) },
};
static MP_DEFINE_CONST_DICT(kernel_module_globals, kernel_module_globals_table);

const mp_obj_module_t mp_module_kernel = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&kernel_module_globals,
};

MP_REGISTER_MODULE(MP_QSTR_kernel, mp_module_kernel);
