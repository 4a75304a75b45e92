// SPDX-License-Identifier: MIT
// The empty .ksymtab linked into stage 1: a valid header with no entries, so stage 1
// boots too and the table's size is the only thing stage 2 changes.
    .section .ksymtab, "a"
    .balign 16
    .long 0x4d59534b    // KSYMTAB_MAGIC
    .long 1             // KSYMTAB_VERSION
    .long 0             // count
    .long 16            // strtab_off
    .byte 0

    .section .note.GNU-stack, "", @progbits
