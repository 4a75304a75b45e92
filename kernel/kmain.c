// SPDX-License-Identifier: MIT
// Kernel bring-up, one stage per line on the serial console, ending in port_main on
// the main stack. A boot that stops says where.
#include "arch.h"
#include "config.h"
#include "dev/fbcon.h"
#include "kernel.h"
#include "dev/i8042.h"
#include "dev/keymap.h"
#include "dev/usb.h"
#include "dev/nvme.h"
#include "dev/virtio_blk.h"

static struct bootinfo boot_copy;

const struct bootinfo *kboot_info(void) {
    return &boot_copy;
}

void kmachine_get(struct kmachine_info *out) {
    *out = (struct kmachine_info){
        .kernel_virt = boot_copy.kernel_virt_start,
        .kernel_phys_start = boot_copy.kernel_phys_start,
        .kernel_phys_end = boot_copy.kernel_phys_end,
        .cpu_brand = cpu_brand(),
        .qemu = cpu_is_qemu(),
        .nx = cpu_has(CPU_NX),
        .x2apic = apic_is_x2apic(),
        .x2apic_by_loader = boot_copy.loader_flags & BOOTINFO_FLAG_X2APIC_SET,
        .acpi_hw_reduced = acpi_get()->hw_reduced,
        .tsc_reference = tsc_reference(),
        .tsc_checks = tsc_reference_notes(),
        .serial = uart_where(),
    };
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
    kcon_add_output(&uart_console);
    if (have_info) {
        fbcon_early(&boot_copy.fb);
    }
    cpu_probe();
    kprintf("\r\nkernel: LociOS kernel entered at 0x%lx\n", (uint64_t)(uintptr_t)kmain);
    if (!have_info || boot_copy.version != BOOTINFO_VERSION ||
        boot_copy.size != sizeof(boot_copy) || boot_copy.region_count > BOOTINFO_MAX_REGIONS) {
        kprintf("kernel: bad bootinfo at %p (magic ok: %s, version %u, size %u, "
                "regions %u); expected version %u, size %u. Rebuild loader and kernel "
                "from the same tree.\n",
                (const void *)bi, have_info ? "yes" : "no", boot_copy.version, boot_copy.size,
                boot_copy.region_count, BOOTINFO_VERSION, (unsigned)sizeof(boot_copy));
        kstop(KEXIT_PANIC);
    }
    if (boot_copy.kernel_virt_start != (uintptr_t)__kernel_start) {
        kprintf("kernel: the loader mapped the kernel at 0x%lx, but it is linked at %p\n",
                boot_copy.kernel_virt_start, (void *)__kernel_start);
        kstop(KEXIT_PANIC);
    }
    kprintf("kernel: placed at phys 0x%lx-0x%lx, linked at %p; cpu %s%s\n",
            boot_copy.kernel_phys_start, boot_copy.kernel_phys_end, (void *)__kernel_start,
            cpu_brand()[0] ? cpu_brand() : "(no brand string)", cpu_is_qemu() ? " (QEMU)" : "");

    cpu_enable_sse();
    cpu_init_gdt();
    cpu_init_idt();
    kprintf("kernel: sse gdt tss idt ok\n");

    mm_init_early(&boot_copy);
    paging_init(&boot_copy);
    kprintf("kernel: paging ok (%lu MiB identity mapped, W^X%s, page 0 unmapped)\n",
            paging_mapped_bytes() >> 20,
            cpu_has(CPU_NX) ? "" : " for writes only: this CPU has no NX, data is executable");
    fbcon_start();

    acpi_init(boot_copy.acpi_rsdp);
    const struct acpi_info *a = acpi_get();
    bool spcr = uart_use_spcr(a);
    kprintf("kernel: acpi ok (ioapic 0x%lx, %s, s5 %s %u/%u, hpet %s, pm timer %s)\n",
            a->ioapic_addr, a->hw_reduced ? "hardware-reduced" : "pm1a_cnt",
            a->have_s5 ? "slp_typ" : "missing", a->slp_typa, a->slp_typb,
            a->hpet_addr ? "yes" : "no", a->pm_tmr_port ? "yes" : "no");
    kprintf("kernel: serial console: %s\n", uart_where());

    pci_init();
    kprintf("kernel: pci: %u functions\n", pci_count());

    // Loader data, boot services memory and the firmware's page tables are unused now.
    mm_reclaim(&boot_copy);
    kmem_init(&boot_copy);
    struct kmem_stats st;
    kmem_get_stats(&st);
    kprintf("kernel: memory %lu MiB RAM, %lu of %lu frames free, kernel %lu KiB\n",
            st.ram_bytes >> 20, st.frames_free, st.frames_total, st.kernel_bytes >> 10);

    ktime_calibrate();
    uint64_t mhz = ktime_tsc_hz() / 1000000;
    const char *notes = tsc_reference_notes();
    kprintf("kernel: tsc %lu.%03lu GHz by %s%s%s%s\n", mhz / 1000, mhz % 1000, tsc_reference(),
            notes[0] ? " (" : "", notes, notes[0] ? ")" : "");

    // Disks: polled with bounded waits, so they need only the TSC and the memory map.
    virtio_blk_init();
    nvme_init();

    apic_init();
    apic_timer_start(KTIMER_HZ);
    uint32_t gsi = spcr ? a->spcr_gsi : a->com1_gsi;
    uint16_t flags = spcr ? 0 : a->com1_flags;
    if (uart_present() && gsi != 0xffffffffu) {
        irq_set_handler(KVEC_COM1, com1_irq);
        apic_route_irq(gsi, flags, KVEC_COM1);
        uart_enable_rx_irq();
    }
    // Keyboards: each probe is bounded, so a missing or silent controller costs a line.
    // USB first: taking the xHCI controller from the firmware ends any PS/2 emulation it
    // did through SMM, which would otherwise answer the i8042 probe and then vanish.
    keymap_init();
    usb_init();
    i8042_init();
    arch_sti();
    kprintf("kernel: lapic %s, timer %u Hz (input %u Hz), serial rx irq %s\n",
            apic_is_x2apic() ? (boot_copy.loader_flags & BOOTINFO_FLAG_X2APIC_SET
                                    ? "x2APIC (set by loader_x2apic=1)"
                                    : "x2APIC")
                             : "xAPIC",
            ktime_tick_hz(), apic_timer_input_hz(),
            uart_present() && gsi != 0xffffffffu ? "routed" : "polled");

    uintptr_t limit, top;
    kstack_bounds(&limit, &top);
    kprintf("kernel: port_main at %lu ms (loader handed over at tsc %lu)\n", ktime_ms(),
            boot_copy.loader_tsc_exit);
    arch_switch_stack(top, port_main);
}
