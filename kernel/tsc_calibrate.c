// SPDX-License-Identifier: MIT
// How fast the TSC runs, measured against whichever fixed-rate clock the machine has:
// the HPET, the ACPI PM timer or PIT channel 2 (laptops gate the PIT off; some boards
// have no HPET), and what CPUID 0x15/0x16 states. The first that works is the
// reference; every other one that works checks it. With none, the machine stops with a
// message naming what was tried.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define PIT_HZ         1193182ULL
#define PIT_CH2_DATA   0x42
#define PIT_CMD        0x43
#define PIT_CH2_MODE0  0xb0  // channel 2, lobyte/hibyte, mode 0, binary
#define PORT_B         0x61
#define PORT_B_GATE2   0x01
#define PORT_B_SPEAKER 0x02
#define PORT_B_OUT2    0x20
#define PM_TIMER_HZ    3579545ULL
#define HPET_CAP       0x000
#define HPET_CONFIG    0x010
#define HPET_COUNTER   0x0f0
#define HPET_ENABLE    1ULL
#define HPET_MAX_FS    100000000ULL  // the spec's slowest tick: 100 ns
#define CALIBRATE_RUNS 3             // the reference: median of three windows
#define POLL_LIMIT     100000000u    // reads before a clock that never moves is given up
#define AGREE_PPM      20000         // a cross-check further off than 2 % is reported

struct tsc_ref {
    const char *name;
    // TSC cycles over KTSC_CALIBRATE_MS of this clock, 0 when it did not run.
    uint64_t (*window)(void);
    const char *why_not;  // set by window() when it returns 0
};

static const char *ref_name = "none";
static char ref_notes[160];

// ---- PIT channel 2 ------------------------------------------------------------------

static const char *pit_why;

static uint64_t pit_window(void) {
    uint16_t count = (uint16_t)(PIT_HZ * KTSC_CALIBRATE_MS / 1000);
    uint8_t b = arch_in8(PORT_B) & ~(PORT_B_GATE2 | PORT_B_SPEAKER);
    arch_out8(PORT_B, b);
    arch_out8(PIT_CMD, PIT_CH2_MODE0);
    arch_out8(PIT_CH2_DATA, count & 0xff);
    arch_out8(PIT_CH2_DATA, count >> 8);
    arch_out8(PORT_B, b | PORT_B_GATE2);  // gate high: counting starts
    uint64_t t0 = arch_rdtsc();
    for (uint32_t i = 0; i < POLL_LIMIT; i++) {
        if (arch_in8(PORT_B) & PORT_B_OUT2) {
            uint64_t t1 = arch_rdtsc();
            arch_out8(PORT_B, b);
            return t1 - t0;
        }
    }
    arch_out8(PORT_B, b);
    pit_why = "channel 2 never counted down";
    return 0;
}

// ---- ACPI PM timer --------------------------------------------------------------------

static const char *pm_why;

static uint32_t pm_read(void) {
    uint32_t v = arch_in32(acpi_get()->pm_tmr_port);
    return acpi_get()->pm_tmr_32bit ? v : v & 0xffffff;
}

static uint64_t pm_window(void) {
    const struct acpi_info *a = acpi_get();
    if (!a->pm_tmr_port) {
        pm_why = "absent from the FADT";
        return 0;
    }
    uint32_t mask = a->pm_tmr_32bit ? 0xffffffffu : 0xffffffu;
    uint32_t need = (uint32_t)(PM_TIMER_HZ * KTSC_CALIBRATE_MS / 1000);
    // Start on a tick edge, so the window is whole ticks.
    uint32_t s = pm_read(), t;
    uint32_t i = 0;
    while ((t = pm_read()) == s && ++i < POLL_LIMIT) {
    }
    if (i == POLL_LIMIT) {
        pm_why = "does not count";
        return 0;
    }
    uint64_t t0 = arch_rdtsc();
    for (i = 0; i < POLL_LIMIT; i++) {
        if (((pm_read() - t) & mask) >= need) {
            return arch_rdtsc() - t0;
        }
    }
    pm_why = "counted too slowly";
    return 0;
}

// ---- HPET -----------------------------------------------------------------------------

static const char *hpet_why;

static uint64_t hpet_window(void) {
    uint64_t base = acpi_get()->hpet_addr;
    if (!base) {
        hpet_why = "no ACPI HPET table";
        return 0;
    }
    volatile uint64_t *regs = (volatile uint64_t *)(uintptr_t)base;
    uint64_t period_fs = regs[HPET_CAP / 8] >> 32;
    if (period_fs == 0 || period_fs > HPET_MAX_FS) {
        hpet_why = "reports no valid tick period";
        return 0;
    }
    if (!(regs[HPET_CONFIG / 8] & HPET_ENABLE)) {
        regs[HPET_CONFIG / 8] |= HPET_ENABLE;
    }
    uint64_t need = KTSC_CALIBRATE_MS * 1000000000000ULL / period_fs;
    uint64_t s = regs[HPET_COUNTER / 8], t;
    uint32_t i = 0;
    while ((t = regs[HPET_COUNTER / 8]) == s && ++i < POLL_LIMIT) {
    }
    if (i == POLL_LIMIT) {
        hpet_why = "main counter does not count";
        return 0;
    }
    uint64_t t0 = arch_rdtsc();
    for (i = 0; i < POLL_LIMIT; i++) {
        if (regs[HPET_COUNTER / 8] - t >= need) {
            return arch_rdtsc() - t0;
        }
    }
    hpet_why = "counted too slowly";
    return 0;
}

// ---- choosing -------------------------------------------------------------------------

static uint64_t median_window(uint64_t (*window)(void)) {
    uint64_t runs[CALIBRATE_RUNS];
    for (int i = 0; i < CALIBRATE_RUNS; i++) {
        runs[i] = window();
        if (!runs[i]) {
            return 0;
        }
    }
    for (int i = 0; i < CALIBRATE_RUNS; i++) {
        for (int j = i + 1; j < CALIBRATE_RUNS; j++) {
            if (runs[j] < runs[i]) {
                uint64_t t = runs[i];
                runs[i] = runs[j];
                runs[j] = t;
            }
        }
    }
    return runs[CALIBRATE_RUNS / 2];
}

static uint64_t hz_of(uint64_t window_cycles) {
    return window_cycles * 1000 / KTSC_CALIBRATE_MS;
}

static uint64_t ppm_apart(uint64_t a, uint64_t b) {
    uint64_t d = a > b ? a - b : b - a;
    return (uint64_t)((unsigned __int128)d * 1000000 / b);
}

static void note(size_t *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(size_t *n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    *n += kvsnprintf(ref_notes + *n, sizeof ref_notes - *n, fmt, ap);
    va_end(ap);
}

uint64_t tsc_calibrate(void) {
    struct tsc_ref refs[] = {
        { "hpet", hpet_window, NULL },
        { "pm-timer", pm_window, NULL },
        { "pit", pit_window, NULL },
    };
    const char **why[] = { &hpet_why, &pm_why, &pit_why };
    const unsigned n_refs = sizeof refs / sizeof refs[0];
    uint64_t hz = 0;
    size_t n = 0;
    for (unsigned i = 0; i < n_refs; i++) {
        uint64_t w = hz ? refs[i].window() : median_window(refs[i].window);
        refs[i].why_not = *why[i];
        if (!w) {
            continue;
        }
        uint64_t h = hz_of(w);
        if (!hz) {
            hz = h;
            ref_name = refs[i].name;
            continue;
        }
        // Emulated clocks drift apart when the host is busy; on real hardware two
        // clocks that disagree mean one of them is not what ACPI says it is.
        uint64_t ppm = ppm_apart(h, hz);
        if (ppm <= AGREE_PPM) {
            note(&n, "%s%s agrees", n ? ", " : "", refs[i].name);
        } else {
            note(&n, "%s%s differs by %lu.%lu %%", n ? ", " : "", refs[i].name, ppm / 10000,
                 ppm / 1000 % 10);
            if (!cpu_has(CPU_HYPERVISOR)) {
                kprintf("kernel: warning: the TSC runs at %lu Hz by %s but %lu Hz by %s\n", hz,
                        ref_name, h, refs[i].name);
            }
        }
    }
    uint64_t stated = cpu_stated_tsc_hz();
    if (!hz && stated) {
        hz = stated;
        ref_name = "cpuid";
    } else if (hz && stated) {
        note(&n, "%scpuid %s", n ? ", " : "",
             ppm_apart(stated, hz) <= AGREE_PPM ? "agrees" : "differs");
    }
    if (!hz) {
        kprintf("kernel: no usable timer reference to measure the TSC with: HPET %s, "
                "ACPI PM timer %s, PIT %s, CPUID states no TSC frequency\n",
                refs[0].why_not, refs[1].why_not, refs[2].why_not);
        kpanic("no timer reference");
    }
    if (!cpu_has(CPU_INVARIANT_TSC) && !cpu_has(CPU_HYPERVISOR)) {
        note(&n, "%sTSC not invariant: its rate may change with power states", n ? "; " : "");
    }
    return hz;
}

const char *tsc_reference(void) {
    return ref_name;
}

const char *tsc_reference_notes(void) {
    return ref_notes;
}
