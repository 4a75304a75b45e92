# SPDX-License-Identifier: MIT
"""Guest-side source shared by the tests and the benchmark that patch rewrite opcodes in
by hand (`_rwops.poke`): decode() walks an opcode area with MicroPython's operand formats
(py/bc0.h: MP_BC_FORMAT, MP_BC_MASK_EXTRA_BYTE), so patterns are found at instruction
starts only; find() returns the head offset of the first match."""

DECODE_FIND = r"""
def decode(c):
    out = []
    i = 0
    while i < len(c):
        op = c[i]
        j = i + 1
        f = (0x3a4 >> 2 * (op >> 4)) & 3
        if f == 1 or f == 2:
            while j < len(c) and c[j] & 0x80:
                j += 1
            j += 1
        elif f == 3:
            j += 2 if j < len(c) and c[j] & 0x80 else 1
        if op & 0x9e == 0:
            j += 1
        out.append((i, op))
        i = j
    return out
def find(fn, pat):
    ins = decode(_rwops.code(fn))
    for k in range(len(ins) - len(pat) + 1):
        if all(ins[k + m][1] in pat[m] for m in range(len(pat))):
            return ins[k][0]
    raise ValueError('pattern not found')
"""
