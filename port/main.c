// SPDX-License-Identifier: MIT
// The port's entry point: takes the GC heap from the kernel, prints the banner and runs
// the serial REPL (friendly and raw) forever, soft-resetting the VM on Ctrl-D.
#include <stdio.h>

#include "genhdr/mpversion.h"
#include "py/compile.h"
#include "py/cstack.h"
#include "py/gc.h"
#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "shared/readline/readline.h"
#include "shared/runtime/gchelper.h"
#include "shared/runtime/pyexec.h"

#include "port.h"

#define MIB (1024u * 1024u)

static struct {
    uint8_t *base;
    size_t size;
} heap;

// Kernel entry to the first prompt, in TSC cycles; measured once per boot.
static uint64_t boot_cycles;

const char lociOS_help_text[] =
    "Welcome to LociOS: MicroPython in ring 0 on x86_64, Loci coordinating through a\n"
    "trace field, and a VM that rewrites its own hot code. A tour:\n"
    "\n"
    "  from lo import *         the console helpers (then help() again for topics)\n"
    "  run('foraging', seed=1)  run a colony of Loci; colonies() lists them\n"
    "  show('trail')            look at the field as a heat map (import field)\n"
    "  who(35, 35)              see who deposited there; ps(), audit(5): the mesh\n"
    "  watch('trail')           the map redrawn as the mesh runs, until a key\n"
    "  import opt; opt.log()    watch the optimiser work; import opt_mesh, prof, vm\n"
    "\n"
    "  import kernel            memory map, RAM and heap use, uptime, boot digest\n"
    "  import machine           mem8/16/32[addr], port8/16/32[port], reset(), freq()\n"
    "  import time, sysinfo     ticks_ms(), sleep_ms(); sysinfo.show() the machine\n"
    "  @micropython.native, @micropython.viper   compile functions to x86-64 code\n"
    "\n"
    "Control keys: Ctrl-C interrupt, Ctrl-D soft reset, Ctrl-E paste mode,\n"
    "Ctrl-A raw REPL (Ctrl-B back).\n"
    "help(module) lists a module's contents; help('modules') lists the modules.\n";

// The shipped image has no test modules; the test image links port/test_modules.c.
__attribute__((weak)) void port_test_modules_init(void) {}

uint64_t port_boot_cycles(void) {
    return boot_cycles;
}

size_t port_heap_bytes(void) {
    return heap.size;
}

static void take_heap(void) {
    unsigned percent;
    size_t floor, ceiling;
    port_heap_params(&percent, &floor, &ceiling);
    heap.base = kmem_take_heap(floor, ceiling, percent, &heap.size);
    if (heap.base == NULL) {
        struct kmem_stats st;
        kmem_get_stats(&st);
        printf("\nLociOS: not enough memory for the MicroPython heap.\n"
               "  needed: at least %u MiB free for the heap (%u%% of free RAM is used,\n"
               "          floor %u MiB), plus the kernel\n"
               "  found:  %u MiB free of %u MiB RAM\n"
               "  fix:    give the machine more RAM (e.g. QEMU -m 256M), or lower\n"
               "          heap_floor_mib in \\LOCIOS\\OPTIONS.TXT\n",
               (unsigned)(floor / MIB), percent, (unsigned)(floor / MIB),
               (unsigned)(st.frames_free * 4096 / MIB), (unsigned)(st.ram_bytes / MIB));
        kpower_off();
    }
}

static void print_banner(void) {
    struct kmem_stats st;
    kmem_get_stats(&st);
    uint64_t hz = ktime_tsc_hz();
    uint64_t us = boot_cycles * 1000000u / hz;
    printf("LociOS " LOCIOS_VERSION_STRING " \xe2\x80\x94 MicroPython " MICROPY_VERSION_STRING
           " on x86_64 (ring 0)\n");
    printf("RAM %u MiB, heap %u MiB, boot %lu cycles (%lu.%03lu ms) from kernel entry\n",
           (unsigned)(st.ram_bytes / MIB), (unsigned)(heap.size / MIB), (unsigned long)boot_cycles,
           (unsigned long)(us / 1000), (unsigned long)(us % 1000));
}

// One VM lifetime: from a fresh heap to a soft reset.
static void run_vm(uintptr_t stack_limit, uintptr_t stack_top) {
    mp_cstack_init_with_top((void *)stack_top, stack_top - stack_limit);
    gc_init(heap.base, heap.base + heap.size);
    mp_init();
    port_test_modules_init();
    readline_init0();
    port_memfault_init();

    if (boot_cycles == 0) {
        boot_cycles = ktime_tsc() - ktime_entry_tsc();
        print_banner();
        if (port_poweroff_at_prompt()) {
            printf("LociOS: at_prompt=poweroff: the prompt is reached; powering off\n");
            kpower_off();
        }
    }

    // The user's data partition at /data (port/modules/_boot.py); what goes wrong there
    // is printed and the prompt comes all the same.
    pyexec_frozen_module("_boot.py", true);

    for (;;) {
        int ret;
        if (pyexec_mode_kind == PYEXEC_MODE_RAW_REPL) {
            ret = pyexec_raw_repl();
        } else {
            ret = pyexec_friendly_repl();
        }
        if (ret != 0) {
            break;
        }
    }

    mp_printf(&mp_plat_print, "MPY: soft reboot\n");
    mp_hal_set_interrupt_char(-1);
    gc_sweep_all();
    mp_deinit();
    // Every function object that pointed into the arena, or at aggressive mode's copies of
    // frozen code, is gone with the old heap.
    kexec_reset();
    rw_aggr_forget();
}

void port_main(void) {
    uintptr_t stack_limit, stack_top;
    kstack_bounds(&stack_limit, &stack_top);
    take_heap();
    for (;;) {
        run_vm(stack_limit, stack_top);
    }
}

void gc_collect(void) {
    // A collection of the whole heap (about 0.2 s under -icount) is the heap's work, not
    // the budgeted call's it happens to land in: its cycles move the call's deadline
    // (vm/budget/README.md), so a Locus is not struck for the GC.
#if LOCIOS_BUDGET_HOOKS
    uint64_t t0 = mp_hal_ticks_cpu();
#endif
    gc_collect_start();
    gc_helper_collect_regs_and_stack();
    gc_collect_end();
#if LOCIOS_BUDGET_HOOKS
    budget_exclude_cycles(mp_hal_ticks_cpu() - t0);
#endif
}

void nlr_jump_fail(void *val) {
    printf("\nFATAL: uncaught NLR %p\n", val);
    kpanic("MicroPython raised an exception with no handler (nlr_jump_fail)");
}
