// SPDX-License-Identifier: MIT
// Port I/O for the port's drivers (kapi.h kio_*), thin wrappers over arch.h.
#include "arch.h"
#include "kernel.h"

uint8_t kio_in8(uint16_t port) {
    return arch_in8(port);
}
uint16_t kio_in16(uint16_t port) {
    return arch_in16(port);
}
uint32_t kio_in32(uint16_t port) {
    return arch_in32(port);
}
void kio_out8(uint16_t port, uint8_t v) {
    arch_out8(port, v);
}
void kio_out16(uint16_t port, uint16_t v) {
    arch_out16(port, v);
}
void kio_out32(uint16_t port, uint32_t v) {
    arch_out32(port, v);
}
