// SPDX-License-Identifier: MIT
// Stops bus mastering on every PCI-to-PCI bridge before ExitBootServices, so no device
// the firmware left running behind one can keep writing into memory the kernel is about
// to reuse (the Linux EFI stub does the same). Devices on the root bus and the kernel's
// own drivers are not affected: a driver enables bus mastering on its path again.
#include "loader.h"

#define PCI_COMMAND        0x04
#define PCI_CLASS_REVISION 0x08
#define PCI_COMMAND_MASTER (1u << 2)
#define CLASS_BRIDGE       0x06
#define SUBCLASS_PCI_PCI   0x04

unsigned pci_quiesce_bridges(void) {
    EFI_GUID guid = EFI_PCI_IO_PROTOCOL_GUID;
    UINTN count = 0;
    EFI_HANDLE *handles = NULL;
    if (g_bs->LocateHandleBuffer(ByProtocol, &guid, NULL, &count, &handles) != EFI_SUCCESS) {
        return 0;
    }
    unsigned stopped = 0;
    for (UINTN i = 0; i < count; i++) {
        EFI_PCI_IO_PROTOCOL *pci = NULL;
        if (g_bs->HandleProtocol(handles[i], &guid, (void **)&pci) != EFI_SUCCESS || !pci) {
            continue;
        }
        UINT32 class_rev = 0;
        if (pci->Pci.Read(pci, EfiPciIoWidthUint32, PCI_CLASS_REVISION, 1, &class_rev) !=
            EFI_SUCCESS) {
            continue;
        }
        if ((class_rev >> 24) != CLASS_BRIDGE || ((class_rev >> 16) & 0xff) != SUBCLASS_PCI_PCI) {
            continue;
        }
        UINT16 cmd = 0;
        if (pci->Pci.Read(pci, EfiPciIoWidthUint16, PCI_COMMAND, 1, &cmd) != EFI_SUCCESS ||
            !(cmd & PCI_COMMAND_MASTER)) {
            continue;
        }
        cmd &= (UINT16)~PCI_COMMAND_MASTER;
        if (pci->Pci.Write(pci, EfiPciIoWidthUint16, PCI_COMMAND, 1, &cmd) == EFI_SUCCESS) {
            stopped++;
        }
    }
    g_bs->FreePool(handles);
    return stopped;
}
