// SPDX-License-Identifier: MIT
// The kernel ELF rules (see elf_check.h). Every field is read with explicit
// little-endian byte loads and every sum is checked for overflow before it is used.
#include "elf_check.h"

#include "fmt.h"

#define EHDR_SIZE  64
#define PHDR_SIZE  56
#define PT_LOAD    1
#define PT_DYNAMIC 2
#define PT_INTERP  3
#define PF_X       1
#define PF_W       2
#define ET_EXEC    2
#define EM_X86_64  62
#define PN_XNUM    0xffff

static const char *const code_names[ELF_ERR_COUNT] = {
    [ELF_OK] = "ELF_OK",
    [ELF_ERR_TOO_SMALL] = "ELF_ERR_TOO_SMALL",
    [ELF_ERR_MAGIC] = "ELF_ERR_MAGIC",
    [ELF_ERR_CLASS] = "ELF_ERR_CLASS",
    [ELF_ERR_DATA] = "ELF_ERR_DATA",
    [ELF_ERR_VERSION] = "ELF_ERR_VERSION",
    [ELF_ERR_TYPE] = "ELF_ERR_TYPE",
    [ELF_ERR_MACHINE] = "ELF_ERR_MACHINE",
    [ELF_ERR_PHENTSIZE] = "ELF_ERR_PHENTSIZE",
    [ELF_ERR_PH_RANGE] = "ELF_ERR_PH_RANGE",
    [ELF_ERR_DYNAMIC] = "ELF_ERR_DYNAMIC",
    [ELF_ERR_TOO_MANY_LOAD] = "ELF_ERR_TOO_MANY_LOAD",
    [ELF_ERR_NO_LOAD] = "ELF_ERR_NO_LOAD",
    [ELF_ERR_SPAN] = "ELF_ERR_SPAN",
    [ELF_ERR_ALIGN] = "ELF_ERR_ALIGN",
    [ELF_ERR_FILESZ] = "ELF_ERR_FILESZ",
    [ELF_ERR_FILE_RANGE] = "ELF_ERR_FILE_RANGE",
    [ELF_ERR_WINDOW] = "ELF_ERR_WINDOW",
    [ELF_ERR_OVERLAP] = "ELF_ERR_OVERLAP",
    [ELF_ERR_WX] = "ELF_ERR_WX",
    [ELF_ERR_ENTRY] = "ELF_ERR_ENTRY",
};

const char *elf_check_code_name(int code) {
    if (code < 0 || code >= ELF_ERR_COUNT) {
        return "ELF_ERR_UNKNOWN";
    }
    return code_names[code];
}

static uint16_t rd16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)rd16(p) | ((uint32_t)rd16(p + 2) << 16);
}

static uint64_t rd64(const uint8_t *p) {
    return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

// a + b into *sum; returns 0 on overflow.
static int add_ok(uint64_t a, uint64_t b, uint64_t *sum) {
    *sum = a + b;
    return *sum >= a;
}

static int refuse(char *msg, size_t cap, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(char *msg, size_t cap, int code, const char *fmt, ...) {
    if (cap > 0) {
        size_t n = fmt_snprintf(msg, cap, "%s: ", elf_check_code_name(code));
        va_list ap;
        va_start(ap, fmt);
        fmt_vsnprintf(msg + n, cap - n, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int check_header(const uint8_t *f, uint64_t size, char *msg, size_t cap) {
    if (size < EHDR_SIZE) {
        return refuse(msg, cap, ELF_ERR_TOO_SMALL, "file is %llu bytes, an ELF64 header needs %u",
                      (unsigned long long)size, EHDR_SIZE);
    }
    if (f[0] != 0x7f || f[1] != 'E' || f[2] != 'L' || f[3] != 'F') {
        return refuse(msg, cap, ELF_ERR_MAGIC,
                      "file starts with %02x %02x %02x %02x, expected 7f 45 4c 46 (\\x7fELF)", f[0],
                      f[1], f[2], f[3]);
    }
    if (f[4] != 2) {
        return refuse(msg, cap, ELF_ERR_CLASS, "EI_CLASS is %u, expected 2 (ELF64)", f[4]);
    }
    if (f[5] != 1) {
        return refuse(msg, cap, ELF_ERR_DATA, "EI_DATA is %u, expected 1 (little-endian)", f[5]);
    }
    uint32_t version = rd32(f + 20);
    if (f[6] != 1 || version != 1) {
        return refuse(msg, cap, ELF_ERR_VERSION,
                      "EI_VERSION is %u and e_version is %u, both must be 1", f[6], version);
    }
    uint16_t type = rd16(f + 16);
    if (type != ET_EXEC) {
        return refuse(msg, cap, ELF_ERR_TYPE,
                      "e_type is %u, expected 2 (ET_EXEC: a static, non-PIE executable)", type);
    }
    uint16_t machine = rd16(f + 18);
    if (machine != EM_X86_64) {
        return refuse(msg, cap, ELF_ERR_MACHINE, "e_machine is %u, expected 62 (x86_64)", machine);
    }
    uint16_t phentsize = rd16(f + 54);
    if (phentsize != PHDR_SIZE) {
        return refuse(msg, cap, ELF_ERR_PHENTSIZE, "e_phentsize is %u, expected %u", phentsize,
                      PHDR_SIZE);
    }
    uint64_t phoff = rd64(f + 32);
    uint16_t phnum = rd16(f + 56);
    uint64_t end;
    if (phnum == 0 || phnum == PN_XNUM || phoff < EHDR_SIZE ||
        !add_ok(phoff, (uint64_t)phnum * PHDR_SIZE, &end) || end > size) {
        return refuse(msg, cap, ELF_ERR_PH_RANGE,
                      "program headers at offset 0x%llx, %u of them, do not fit in the "
                      "%llu-byte file (need 1..65534 headers after the ELF header)",
                      (unsigned long long)phoff, phnum, (unsigned long long)size);
    }
    return ELF_OK;
}

// Checks one PT_LOAD header on its own and fills *s.
static int check_segment(const uint8_t *ph, unsigned idx, uint64_t size, struct elf_segment *s,
                         char *msg, size_t cap) {
    s->flags = rd32(ph + 4);
    s->offset = rd64(ph + 8);
    uint64_t vaddr = rd64(ph + 16);
    s->vaddr = vaddr;
    s->filesz = rd64(ph + 32);
    s->memsz = rd64(ph + 40);

    if ((s->offset % ELF_CHECK_PAGE) != (vaddr % ELF_CHECK_PAGE)) {
        return refuse(msg, cap, ELF_ERR_ALIGN,
                      "segment %u: p_offset 0x%llx and p_vaddr 0x%llx differ modulo 4 KiB", idx,
                      (unsigned long long)s->offset, (unsigned long long)vaddr);
    }
    if (s->filesz > s->memsz) {
        return refuse(msg, cap, ELF_ERR_FILESZ, "segment %u: p_filesz 0x%llx > p_memsz 0x%llx", idx,
                      (unsigned long long)s->filesz, (unsigned long long)s->memsz);
    }
    uint64_t fend;
    if (!add_ok(s->offset, s->filesz, &fend) || fend > size) {
        return refuse(msg, cap, ELF_ERR_FILE_RANGE,
                      "segment %u: file bytes [0x%llx, +0x%llx) run past the end of the "
                      "%llu-byte file",
                      idx, (unsigned long long)s->offset, (unsigned long long)s->filesz,
                      (unsigned long long)size);
    }
    if ((s->flags & PF_W) && (s->flags & PF_X)) {
        return refuse(msg, cap, ELF_ERR_WX,
                      "segment %u at 0x%llx is both writable and executable (flags 0x%x)", idx,
                      (unsigned long long)vaddr, s->flags);
    }
    if (s->memsz == 0) {
        return ELF_OK;
    }
    uint64_t mend, pend;
    s->page_base = vaddr & ~(ELF_CHECK_PAGE - 1);
    if (!add_ok(vaddr, s->memsz, &mend) || !add_ok(mend, ELF_CHECK_PAGE - 1, &pend) ||
        s->page_base < ELF_CHECK_WINDOW_LO ||
        (pend & ~(ELF_CHECK_PAGE - 1)) > ELF_CHECK_WINDOW_HI) {
        return refuse(msg, cap, ELF_ERR_WINDOW,
                      "segment %u: [0x%llx, +0x%llx) is outside the kernel's virtual window "
                      "[0x%llx, 0x%llx)",
                      idx, (unsigned long long)vaddr, (unsigned long long)s->memsz,
                      ELF_CHECK_WINDOW_LO, ELF_CHECK_WINDOW_HI);
    }
    s->page_count = ((pend & ~(ELF_CHECK_PAGE - 1)) - s->page_base) / ELF_CHECK_PAGE;
    return ELF_OK;
}

static int check_overlap(const struct elf_image *img, char *msg, size_t cap) {
    for (uint32_t i = 1; i < img->count; i++) {
        const struct elf_segment *a = &img->seg[i - 1], *b = &img->seg[i];
        uint64_t a_end = a->page_base + a->page_count * ELF_CHECK_PAGE;
        if (a_end > b->page_base) {
            return refuse(msg, cap, ELF_ERR_OVERLAP,
                          "segments at 0x%llx (+0x%llx) and 0x%llx (+0x%llx) share pages "
                          "[0x%llx, 0x%llx); start each segment on a new 4 KiB page",
                          (unsigned long long)a->vaddr, (unsigned long long)a->memsz,
                          (unsigned long long)b->vaddr, (unsigned long long)b->memsz,
                          (unsigned long long)b->page_base, (unsigned long long)a_end);
        }
    }
    return ELF_OK;
}

static int check_entry(const struct elf_image *img, char *msg, size_t cap) {
    for (uint32_t i = 0; i < img->count; i++) {
        const struct elf_segment *s = &img->seg[i];
        if ((s->flags & PF_X) && img->entry >= s->vaddr && img->entry - s->vaddr < s->filesz) {
            return ELF_OK;
        }
    }
    return refuse(msg, cap, ELF_ERR_ENTRY,
                  "entry point 0x%llx is not inside the file bytes of an executable segment",
                  (unsigned long long)img->entry);
}

int elf_check(const void *file, uint64_t size, struct elf_image *out, char *msg, size_t msg_cap) {
    const uint8_t *f = file;
    int rc = check_header(f, size, msg, msg_cap);
    if (rc != ELF_OK) {
        return rc;
    }

    out->entry = rd64(f + 24);
    out->count = 0;
    uint64_t phoff = rd64(f + 32);
    uint16_t phnum = rd16(f + 56);
    unsigned loads = 0;
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = f + phoff + (uint64_t)i * PHDR_SIZE;
        uint32_t type = rd32(ph);
        if (type == PT_INTERP || type == PT_DYNAMIC) {
            return refuse(msg, msg_cap, ELF_ERR_DYNAMIC,
                          "program header %u has type %u (%s): the kernel must be a "
                          "static executable",
                          i, type, type == PT_INTERP ? "PT_INTERP" : "PT_DYNAMIC");
        }
        if (type != PT_LOAD) {
            continue;
        }
        if (++loads > ELF_CHECK_MAX_LOAD) {
            return refuse(msg, msg_cap, ELF_ERR_TOO_MANY_LOAD, "more than %u PT_LOAD segments",
                          ELF_CHECK_MAX_LOAD);
        }
        struct elf_segment s;
        rc = check_segment(ph, i, size, &s, msg, msg_cap);
        if (rc != ELF_OK) {
            return rc;
        }
        if (s.memsz == 0) {
            continue;
        }
        // Insert sorted by address; at most ELF_CHECK_MAX_LOAD entries.
        uint32_t j = out->count++;
        while (j > 0 && out->seg[j - 1].vaddr > s.vaddr) {
            out->seg[j] = out->seg[j - 1];
            j--;
        }
        out->seg[j] = s;
    }
    if (out->count == 0) {
        return refuse(msg, msg_cap, ELF_ERR_NO_LOAD,
                      "no PT_LOAD segment with p_memsz > 0 among %u program headers", phnum);
    }
    rc = check_overlap(out, msg, msg_cap);
    if (rc != ELF_OK) {
        return rc;
    }
    rc = check_entry(out, msg, msg_cap);
    if (rc != ELF_OK) {
        return rc;
    }
    const struct elf_segment *last = &out->seg[out->count - 1];
    out->virt_start = out->seg[0].page_base;
    out->virt_end = last->page_base + last->page_count * ELF_CHECK_PAGE;
    if (out->virt_end - out->virt_start > ELF_CHECK_MAX_SPAN) {
        return refuse(msg, msg_cap, ELF_ERR_SPAN,
                      "segments span [0x%llx, 0x%llx), %llu KiB; the loader places at most "
                      "%llu KiB in one piece",
                      (unsigned long long)out->virt_start, (unsigned long long)out->virt_end,
                      (unsigned long long)((out->virt_end - out->virt_start) >> 10),
                      ELF_CHECK_MAX_SPAN >> 10);
    }
    if (msg_cap > 0) {
        msg[0] = '\0';
    }
    return ELF_OK;
}
