// SPDX-License-Identifier: MIT
// The sealed kernel digest and its check: the loader runs only the kernel whose
// SHA-256 tools/build/seal.py wrote into this record.
#include "seal.h"

#include "loader.h"
#include "sha256.h"

// volatile: the digest is patched in the file after compiling, so the compiler must
// never fold the all-zero initial value into the code.
__attribute__((used, aligned(16))) static volatile const struct seal_record sealed = {
    .magic = "LOCIOS-SEAL-v1",
    .digest = { 0 },
};

static void hex(char out[2 * SEAL_DIGEST_LEN + 1], const uint8_t *d) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < SEAL_DIGEST_LEN; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * SEAL_DIGEST_LEN] = '\0';
}

EFI_STATUS seal_verify(const uint8_t *data, uint64_t size, uint8_t digest[32]) {
    uint8_t expected[SEAL_DIGEST_LEN];
    uint8_t any = 0;
    for (int i = 0; i < SEAL_DIGEST_LEN; i++) {
        expected[i] = sealed.digest[i];
        any |= expected[i];
    }
    if (any == 0) {
        return fail(
            EFI_SECURITY_VIOLATION,
            "refused: this loader was never sealed (its kernel digest is all zero). Seal it "
            "with `tools/build/seal.py --loader BOOTX64.unsealed.efi --kernel "
            "kernel.elf -o BOOTX64.EFI` (make does this)");
    }

    CRYAL_SHA256_CTX ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, data, size);
    sha256_final(&ctx, digest);

    uint8_t diff = 0;
    for (int i = 0; i < SEAL_DIGEST_LEN; i++) {
        diff |= (uint8_t)(digest[i] ^ expected[i]);
    }
    if (diff != 0) {
        char want[2 * SEAL_DIGEST_LEN + 1], got[2 * SEAL_DIGEST_LEN + 1];
        hex(want, expected);
        hex(got, digest);
        return fail(EFI_SECURITY_VIOLATION,
                    "%s refused: it does not match the digest this loader was sealed with.\n"
                    "  expected sha256 %s\n  got      sha256 %s\n"
                    "  Copy the kernel and BOOTX64.EFI from the same build (make image).",
                    LOADER_KERNEL_PATH_STR, want, got);
    }
    return EFI_SUCCESS;
}
