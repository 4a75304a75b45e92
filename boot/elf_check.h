// SPDX-License-Identifier: MIT
// Validation of the kernel ELF before anything of it is loaded or run. Pure C with no
// UEFI dependency, so the host tests build and fuzz exactly this file.
#ifndef LOCIOS_BOOT_ELF_CHECK_H
#define LOCIOS_BOOT_ELF_CHECK_H

#include <stddef.h>
#include <stdint.h>

// The kernel is linked into the top of the address space (-mcmodel=kernel) and placed
// in physical memory wherever the loader finds room: every PT_LOAD segment must lie in
// this virtual window, and all of them together within ELF_CHECK_MAX_SPAN, which is
// what the loader allocates in one piece.
#define ELF_CHECK_WINDOW_LO 0xffffffff80000000ULL
#define ELF_CHECK_WINDOW_HI 0xffffffffc0000000ULL
#define ELF_CHECK_MAX_SPAN  (256ULL << 20)
#define ELF_CHECK_PAGE      4096ULL
#define ELF_CHECK_MAX_LOAD  16

enum elf_check_code {
    ELF_OK = 0,
    ELF_ERR_TOO_SMALL,      // shorter than an ELF64 header
    ELF_ERR_MAGIC,          // no \x7fELF
    ELF_ERR_CLASS,          // not ELFCLASS64
    ELF_ERR_DATA,           // not little-endian
    ELF_ERR_VERSION,        // EI_VERSION or e_version is not 1
    ELF_ERR_TYPE,           // not ET_EXEC
    ELF_ERR_MACHINE,        // not EM_X86_64
    ELF_ERR_PHENTSIZE,      // program header size is not 56
    ELF_ERR_PH_RANGE,       // program header table missing or outside the file
    ELF_ERR_DYNAMIC,        // PT_INTERP or PT_DYNAMIC: needs a dynamic linker
    ELF_ERR_TOO_MANY_LOAD,  // more than ELF_CHECK_MAX_LOAD PT_LOAD segments
    ELF_ERR_NO_LOAD,        // no PT_LOAD segment with memory
    ELF_ERR_SPAN,           // segments spread over more than ELF_CHECK_MAX_SPAN
    ELF_ERR_ALIGN,          // p_offset and p_vaddr not congruent modulo 4 KiB
    ELF_ERR_FILESZ,         // p_filesz > p_memsz
    ELF_ERR_FILE_RANGE,     // file bytes of a segment outside the file
    ELF_ERR_WINDOW,         // segment (page-rounded) outside the virtual window
    ELF_ERR_OVERLAP,        // two segments share a page
    ELF_ERR_WX,             // segment both writable and executable
    ELF_ERR_ENTRY,          // entry not in the file bytes of an executable segment
    ELF_ERR_COUNT
};

struct elf_segment {
    uint64_t vaddr;  // where the kernel is linked to run it
    uint64_t memsz;
    uint64_t filesz;
    uint64_t offset;      // in the file
    uint64_t page_base;   // vaddr rounded down to 4 KiB
    uint64_t page_count;  // 4 KiB pages covering [vaddr, vaddr + memsz)
    uint32_t flags;       // PF_X = 1, PF_W = 2, PF_R = 4
};

struct elf_image {
    uint64_t entry;       // virtual
    uint64_t virt_start;  // lowest page_base
    uint64_t virt_end;    // end of the highest page-rounded segment
    uint32_t count;       // valid entries in seg[], sorted by vaddr
    struct elf_segment seg[ELF_CHECK_MAX_LOAD];
};

// Checks `size` bytes at `file`. On ELF_OK fills *out (segments with memsz 0 are left
// out). On refusal writes a one-line message naming the rule and the offending values
// into msg (if msg_cap > 0) and returns the code.
int elf_check(const void *file, uint64_t size, struct elf_image *out, char *msg, size_t msg_cap);

// Short stable name of a code, e.g. "ELF_ERR_WX".
const char *elf_check_code_name(int code);

#endif
