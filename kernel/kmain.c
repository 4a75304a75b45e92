// SPDX-License-Identifier: MIT
// Kernel bring-up, one stage per line on the serial console, ending in port_main on
// the main stack. A boot that stops says where.
#include "arch.h"
#include "config.h"
#include "kernel.h"

static struct bootinfo boot_copy;

const struct bootinfo *kboot_info(void) {
    return &boot_copy;
}

static void com1_irq(struct int_frame *f) {
    (void)f;
    uart_drain_rx();
}

static bool copy_bootinfo(const struct bootinfo *bi) {
    if (!bi || bi->magic != BOOTINFO_MAGIC) {
        return false;
    }
    size_t n = bi->size < sizeof(boot_copy) ? bi->size : sizeof(boot_copy);
    memcpy(&boot_copy, bi, n);
    return true;
}

void kmain(const struct bootinfo *bi) __attribute__((noreturn));
void kmain(const struct bootinfo *bi) {
    // The bootinfo lives in reclaimable loader memory: copy it before anything else.
    bool have_info = copy_bootinfo(bi);
    uart_init();
    kprintf("\r\nkernel: LociOS kernel entered at 0x%lx\n", (uint64_t)(uintptr_t)kmain);
    if (!have_info || boot_copy.version != BOOTINFO_VERSION ||
        boot_copy.size != sizeof(boot_copy) ||
        boot_copy.region_count > BOOTINFO_MAX_REGIONS) {
        kprintf("kernel: bad bootinfo at %p (magic ok: %s, version %u, size %u, "
                "regions %u); expected version %u, size %u. Rebuild loader and kernel "
                "from the same tree.\n", (const void *)bi, have_info ? "yes" : "no",
                boot_copy.version, boot_copy.size, boot_copy.region_count,
                BOOTINFO_VERSION, (unsigned)sizeof(boot_copy));
        kstop(KEXIT_PANIC);
    }

    cpu_enable_sse();
    cpu_init_gdt();
    cpu_init_idt();
    kprintf("kernel: sse gdt tss idt ok\n");

    mm_init_early(&boot_copy);
    paging_init(&boot_copy);
    kprintf("kernel: paging ok (%lu MiB identity mapped, W^X, page 0 unmapped)\n",
            paging_mapped_bytes() >> 20);

    acpi_init(boot_copy.acpi_rsdp);
    const struct acpi_info *a = acpi_get();
    kprintf("kernel: acpi ok (ioapic 0x%lx, com1 gsi %u, pm1a_cnt 0x%x, s5 %s %u/%u)\n",
            a->ioapic_addr, a->com1_gsi, a->pm1a_cnt, a->have_s5 ? "slp_typ" : "missing",
            a->slp_typa, a->slp_typb);

    // Loader data, boot services memory and the firmware's page tables are unused now.
    mm_reclaim(&boot_copy);
    kmem_init(&boot_copy);
    struct kmem_stats st;
    kmem_get_stats(&st);
    kprintf("kernel: memory %lu MiB RAM, %lu of %lu frames free, kernel %lu KiB\n",
            st.ram_bytes >> 20, st.frames_free, st.frames_total, st.kernel_bytes >> 10);

    ktime_calibrate();
    uint64_t mhz = ktime_tsc_hz() / 1000000;
    kprintf("kernel: tsc %lu.%03lu GHz\n", mhz / 1000, mhz % 1000);

    apic_init();
    apic_timer_start(KTIMER_HZ);
    irq_set_handler(KVEC_COM1, com1_irq);
    apic_route_irq(a->com1_gsi, a->com1_flags, KVEC_COM1);
    uart_enable_rx_irq();
    arch_sti();
    kprintf("kernel: lapic timer %u Hz (input %u Hz), com1 rx irq on gsi %u\n",
            ktime_tick_hz(), apic_timer_input_hz(), a->com1_gsi);

    uintptr_t limit, top;
    kstack_bounds(&limit, &top);
    kprintf("kernel: port_main at %lu ms (loader handed over at tsc %lu)\n", ktime_ms(),
            boot_copy.loader_tsc_exit);
    arch_switch_stack(top, port_main);
}
