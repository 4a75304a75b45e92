// SPDX-License-Identifier: MIT
// Time: the TSC (its rate from tsc_calibrate.c), the tick count (kept by the LAPIC timer
// interrupt, counted from the TSC), and the conversions kapi.h promises.
#include "arch.h"
#include "config.h"
#include "kernel.h"

uint64_t kentry_tsc;
static uint64_t tsc_hz;
static uint64_t us_mult, ms_mult;  // 32.32 fixed point: units per TSC cycle
// Ticks are derived from the TSC, not counted one per interrupt: QEMU under TCG
// delivers periodic LAPIC interrupts late and coalesces them when the host is busy (a
// 2-minute soak counted 13 % fewer interrupts than TSC time), and real hardware can
// miss one while interrupts are off. The timer interrupt advances `ticks` to the whole
// periods elapsed since `tick_base_tsc`; it never goes backwards. Interrupts actually
// delivered are counted in interrupt.c (kirq_delivered).
static volatile uint64_t ticks;
static uint64_t tick_base;  // ticks at tick_base_tsc (the last rate change)
static uint64_t tick_base_tsc;
static uint64_t tsc_per_tick;
static uint32_t tick_hz;

void ktime_calibrate(void) {
    tsc_hz = tsc_calibrate();
    us_mult = (1000000ULL << 32) / tsc_hz;
    ms_mult = (1000ULL << 32) / tsc_hz;
}

// Interrupts off (timer ISR, or a caller that disabled them).
static void advance_ticks(uint64_t now) {
    uint64_t t = tick_base + (now - tick_base_tsc) / tsc_per_tick;
    if (t > ticks) {
        ticks = t;
    }
}

// Called from every timer interrupt after the tick count (the port's sampling profiler).
static void (*volatile tick_hook)(void);

void ktime_set_tick_hook(void (*fn)(void)) {
    tick_hook = fn;
}

void ktime_tick(void) {
    advance_ticks(arch_rdtsc());
    uart_drain_rx();
    kdev_poll_all();
    void (*fn)(void) = tick_hook;
    if (fn) {
        fn();
    }
}

void ktime_timer_started(uint32_t hz) {
    uint64_t f = arch_save_flags_cli();
    uint64_t now = arch_rdtsc();
    if (tsc_per_tick) {
        advance_ticks(now);  // close the old rate's account before switching
    }
    tick_base = ticks;
    tick_base_tsc = now;
    tsc_per_tick = tsc_hz / hz;
    tick_hz = hz;
    arch_restore_flags(f);
}

bool ktime_set_tick_hz(uint32_t hz) {
    if (hz < KTIMER_HZ_MIN || hz > KTIMER_HZ_MAX) {
        return false;
    }
    uint64_t f = arch_save_flags_cli();
    apic_timer_set_hz(hz);
    ktime_timer_started(hz);
    arch_restore_flags(f);
    return true;
}

static uint64_t scale(uint64_t cycles, uint64_t mult) {
    return (uint64_t)(((unsigned __int128)cycles * mult) >> 32);
}

uint64_t ktime_tsc(void) {
    return arch_rdtsc();
}
uint64_t ktime_tsc_hz(void) {
    return tsc_hz;
}
uint64_t ktime_entry_tsc(void) {
    return kentry_tsc;
}
uint64_t ktime_us(void) {
    return scale(arch_rdtsc() - kentry_tsc, us_mult);
}
uint64_t ktime_ms(void) {
    return scale(arch_rdtsc() - kentry_tsc, ms_mult);
}
uint64_t ktime_ticks(void) {
    return ticks;
}
uint32_t ktime_tick_hz(void) {
    return tick_hz;
}

// Sleep until an interrupt, unless console input is already waiting. Interrupts are
// off while checking; `sti; hlt` opens them only for the halt (sti takes effect after
// the next instruction), so a byte arriving after the check still wakes the halt.
void kcpu_wait_for_interrupt(void) {
    uint64_t f = arch_save_flags_cli();
    if (kcon_pending() == 0) {
        arch_halt_until_interrupt();
    }
    arch_restore_flags(f);
}
