// SPDX-License-Identifier: MIT
// UEFI ResetSystem, the last resort of power-off and reset. The kernel never called
// SetVirtualAddressMap, so the runtime services run at their physical addresses, which
// the identity map covers; their code pages are made executable only for this call.
#include "arch.h"
#include "config.h"
#include "kernel.h"

#define EFI_SYSTEM_TABLE_SIGNATURE     0x5453595320494249ULL  // "IBI SYST"
#define EFI_RUNTIME_SERVICES_SIGNATURE 0x56524553544e5552ULL  // "RUNTSERV"
#define ST_RUNTIME_SERVICES            88                     // EFI_SYSTEM_TABLE.RuntimeServices
#define RT_RESET_SYSTEM                104                    // EFI_RUNTIME_SERVICES.ResetSystem

typedef void(__attribute__((ms_abi)) * efi_reset_fn)(uint32_t type, uint64_t status, uint64_t size,
                                                     void *data);

void efi_reset_system(enum efi_reset_type type) {
    const struct bootinfo *bi = kboot_info();
    const uint8_t *st = (const uint8_t *)(uintptr_t)bi->efi_system_table;
    uint64_t sig;
    if (!st || (memcpy(&sig, st, 8), sig) != EFI_SYSTEM_TABLE_SIGNATURE) {
        kprintf("kernel: no UEFI system table to reset through\n");
        return;
    }
    const uint8_t *rt;
    memcpy(&rt, st + ST_RUNTIME_SERVICES, 8);
    if (!rt || (memcpy(&sig, rt, 8), sig) != EFI_RUNTIME_SERVICES_SIGNATURE) {
        kprintf("kernel: the UEFI runtime services table is missing or damaged\n");
        return;
    }
    efi_reset_fn reset;
    memcpy(&reset, rt + RT_RESET_SYSTEM, 8);
    for (uint32_t i = 0; i < bi->region_count; i++) {
        const struct bootinfo_mem_region *r = &bi->regions[i];
        if (r->kind == BOOTINFO_MEM_RUNTIME) {
            paging_make_executable(r->base, r->pages * KPAGE_SIZE);
        }
    }
    reset((uint32_t)type, 0, 0, NULL);
}
