// SPDX-License-Identifier: MIT
// The kernel's own 4-level page tables: identity map of the low 4 GiB and all memory
// in the boot map (2 MiB pages, NX), the kernel image at its linked virtual addresses
// in 4 KiB pages by section (W^X) with no identity alias of its frames, the framebuffer
// write-combining wherever it is, page 0 and every stack guard page unmapped.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define PTE_ADDR_MASK 0x000ffffffffff000ULL
#define PTE_PAT_LARGE (1ULL << 12)
#define TABLE_FLAGS   (PTE_P | PTE_W)
#define MAX_GUARDS    16

// PAT entry 5 is reprogrammed to write-combining (entry 5 = PAT bit, PWT set).
#define PAT_WC_ENTRY 5
#define PTE_PWT      (1ULL << 3)
#define PTE_PAT_4K   (1ULL << 7)
#define PTE_WC_4K    (PTE_PAT_4K | PTE_PWT)
#define PAT_TYPE_WC  0x01ULL

static uint64_t *pml4;
static bool active;
static uint64_t pte_nx = PTE_NX;  // 0 on a CPU without NX (kernel data then executable)
static uint64_t kvirt_start, kphys_start, kphys_end;
static uint64_t mapped_bytes;
static struct {
    uintptr_t va;
    const char *what;
} guards[MAX_GUARDS];
static unsigned guard_count;

static uint64_t *new_table(void) {
    uint64_t pa = mm_alloc_frames(1);
    if (!pa) {
        kpanic("out of memory for page tables");
    }
    uint64_t *t = (uint64_t *)(uintptr_t)pa;
    for (int i = 0; i < 512; i++) {
        t[i] = 0;
    }
    return t;
}

static uint64_t *next_level(uint64_t *table, unsigned idx) {
    if (!(table[idx] & PTE_P)) {
        table[idx] = (uintptr_t)new_table() | TABLE_FLAGS;
    }
    return (uint64_t *)(uintptr_t)(table[idx] & PTE_ADDR_MASK);
}

static void flush_all(void) {
    if (active) {
        arch_write_cr3(arch_read_cr3());
    }
}

static uint64_t *pd_for(uintptr_t va) {
    uint64_t *pdpt = next_level(pml4, va >> 39 & 511);
    return next_level(pdpt, va >> 30 & 511);
}

static void map_2m(uintptr_t va, uint64_t pa, uint64_t flags) {
    uint64_t *pd = pd_for(va);
    pd[va >> 21 & 511] = pa | flags | PTE_PS | PTE_P;
}

// The 4 KiB entry for va, splitting a 2 MiB page into 512 equal small ones if needed.
static uint64_t *pte_for(uintptr_t va) {
    uint64_t *pd = pd_for(va);
    uint64_t *pde = &pd[va >> 21 & 511];
    if ((*pde & PTE_P) && (*pde & PTE_PS)) {
        uint64_t base = *pde & PTE_ADDR_MASK & ~(KPAGE_2M - 1);
        uint64_t flags = *pde & ~PTE_ADDR_MASK & ~(PTE_PS | PTE_PAT_LARGE);
        uint64_t *pt = new_table();
        for (int i = 0; i < 512; i++) {
            pt[i] = (base + i * KPAGE_SIZE) | flags;
        }
        *pde = (uintptr_t)pt | TABLE_FLAGS;
        flush_all();
    }
    uint64_t *pt = next_level(pd, va >> 21 & 511);
    return &pt[va >> 12 & 511];
}

void paging_map_4k(uintptr_t va, uint64_t pa, uint64_t flags) {
    *pte_for(va) = pa | flags | PTE_P;
    if (active) {
        arch_invlpg(va);
    }
}

void paging_unmap_4k(uintptr_t va) {
    *pte_for(va) = 0;
    if (active) {
        arch_invlpg(va);
    }
}

void paging_add_guard(uintptr_t va, const char *what) {
    paging_unmap_4k(va);
    if (guard_count < MAX_GUARDS) {
        guards[guard_count].va = va;
        guards[guard_count].what = what;
        guard_count++;
    }
}

const char *paging_guard_name(uintptr_t va) {
    for (unsigned i = 0; i < guard_count; i++) {
        if (va - guards[i].va < KPAGE_SIZE) {
            return guards[i].what;
        }
    }
    return NULL;
}

void *kmem_map_device(uint64_t phys, uint64_t size) {
    uint64_t start = phys & ~(KPAGE_SIZE - 1);
    for (uint64_t a = start; a < phys + size; a += KPAGE_SIZE) {
        paging_map_4k(a, a, PTE_W | PTE_PCD | pte_nx);
    }
    return (void *)(uintptr_t)phys;
}

void paging_make_executable(uint64_t base, uint64_t len) {
    for (uint64_t a = base & ~(KPAGE_SIZE - 1); a < base + len; a += KPAGE_SIZE) {
        uint64_t *pte = pte_for(a);
        if (*pte & PTE_P) {
            *pte &= ~PTE_NX;
            if (active) {
                arch_invlpg(a);
            }
        }
    }
}

uint64_t paging_mapped_bytes(void) {
    return mapped_bytes;
}

static void identity_2m_range(uint64_t start, uint64_t end) {
    for (uint64_t a = start & ~(KPAGE_2M - 1); a < end; a += KPAGE_2M) {
        uint64_t *pde = &pd_for(a)[a >> 21 & 511];
        if (!(*pde & PTE_P)) {
            map_2m(a, a, PTE_W | pte_nx);
            mapped_bytes += KPAGE_2M;
        }
    }
}

static uint64_t section_flags(uintptr_t va) {
    if (va >= (uintptr_t)__text_start && va < (uintptr_t)__text_end) {
        return 0;  // read + execute
    }
    if (va >= (uintptr_t)__data_start && va < (uintptr_t)__bss_end) {
        return PTE_W | pte_nx;
    }
    return pte_nx;  // rodata, ksymtab: read only
}

uint64_t paging_nx_flag(void) {
    return pte_nx;
}

uint64_t kvirt_to_phys(uintptr_t va) {
    if (va >= kvirt_start && va - kvirt_start < kphys_end - kphys_start) {
        return kphys_start + (va - kvirt_start);
    }
    return va;  // everything else the kernel touches is identity mapped
}

// PAT entry 5 becomes write-combining; the others keep their power-on types, so the
// entries the firmware's and our other mappings use (0: WB, 3: UC) mean what they did.
static bool pat_init(void) {
    if (!cpu_has(CPU_PAT)) {
        return false;
    }
    uint64_t pat = arch_rdmsr(ARCH_MSR_PAT);
    pat &= ~(0xffULL << (8 * PAT_WC_ENTRY));
    pat |= PAT_TYPE_WC << (8 * PAT_WC_ENTRY);
    arch_wrmsr(ARCH_MSR_PAT, pat);
    return true;
}

// The framebuffer at its physical address, write-combining (MTRR UC + PAT WC gives WC),
// or uncached without a PAT. It may lie above all RAM and outside the memory map.
static void map_framebuffer(const struct bootinfo_framebuffer *fb, bool wc) {
    if (!fb->base || !fb->size) {
        return;
    }
    uint64_t start = fb->base & ~(KPAGE_SIZE - 1);
    uint64_t end = (fb->base + fb->size + KPAGE_SIZE - 1) & ~(KPAGE_SIZE - 1);
    uint64_t cache = wc ? PTE_WC_4K : PTE_PCD;
    for (uint64_t a = start; a < end; a += KPAGE_SIZE) {
        paging_map_4k(a, a, PTE_W | pte_nx | cache);
    }
}

void paging_init(const struct bootinfo *bi) {
    if (!cpu_has(CPU_NX)) {
        pte_nx = 0;
    }
    kvirt_start = bi->kernel_virt_start;
    kphys_start = bi->kernel_phys_start;
    kphys_end = bi->kernel_phys_end;
    pml4 = new_table();
    // The first 2 MiB in small pages so page 0 can stay unmapped.
    for (uint64_t a = KPAGE_SIZE; a < KPAGE_2M; a += KPAGE_SIZE) {
        paging_map_4k(a, a, PTE_W | pte_nx);
    }
    mapped_bytes = KPAGE_2M - KPAGE_SIZE;
    identity_2m_range(KPAGE_2M, KIDENTITY_MIN);
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        uint64_t end = r->base + r->pages * KPAGE_SIZE;
        if (end > KIDENTITY_MIN) {
            identity_2m_range(r->base > KIDENTITY_MIN ? r->base : KIDENTITY_MIN, end);
        }
    }
    // The kernel's frames are reached only through its own window: no writable,
    // executable or second alias of its text exists.
    for (uint64_t pa = kphys_start; pa < kphys_end; pa += KPAGE_SIZE) {
        paging_unmap_4k(pa);
    }
    for (uintptr_t va = (uintptr_t)__kernel_start; va < (uintptr_t)__kernel_end; va += KPAGE_SIZE) {
        paging_map_4k(va, kvirt_to_phys(va), section_flags(va));
    }
    bool wc = pat_init();
    map_framebuffer(&bi->fb, wc);
    paging_add_guard((uintptr_t)kboot_stack_guard, "boot stack");
    const struct cpu_stack *ist;
    size_t n = cpu_ist_stacks(&ist);
    for (size_t i = 0; i < n; i++) {
        paging_add_guard(ist[i].guard, ist[i].name);
    }

    if (pte_nx) {
        arch_wrmsr(ARCH_MSR_EFER, arch_rdmsr(ARCH_MSR_EFER) | ARCH_EFER_NXE);
    }
    arch_write_cr0(arch_read_cr0() | ARCH_CR0_WP);
    arch_write_cr3((uintptr_t)pml4);
    active = true;
}
