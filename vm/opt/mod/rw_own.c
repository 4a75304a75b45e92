// SPDX-License-Identifier: MIT
// Heap copies of frozen bytecode (their C binding is `_rw.own`, modrw.c). A frozen module's code lies in the image's read-only
// memory, where no rewrite can be written; `_rw.own(fn)` copies fn's bytecode into a GC
// block and points fn at it, so in-place rewrites, their undo and their digests work on
// it as on code compiled at run time. Only fn changes: another function object made from
// the same frozen code (a closure made again, say) still runs the image's copy.
//
// Frozen code carries no length. The compiler always ends a function with a return, but
// that return is not necessarily the last byte of anything we may read: the copy takes
// the shortest prefix that control cannot leave (every jump and handler target inside
// it, ending with an instruction that does not fall through). Whatever follows such a
// prefix is unreachable, so the copy runs exactly as the original does.
#include "rw_own.h"
#include "vrf_internal.h"

static int ends_flow(uint8_t op) {
    switch (op) {
        case OP_RETURN_VALUE:
        case OP_RAISE_LAST:
        case OP_RAISE_OBJ:
        case OP_RAISE_FROM:
        case OP_JUMP:
        case OP_UNWIND_JUMP:
        case OP_POP_EXCEPT_JUMP:
            return 1;
        default:
            return 0;
    }
}

size_t rw_reachable_len(const uint8_t *code, size_t limit) {
    size_t off = 0, reach = 0;
    while (off < limit) {
        vrf_insn_t in;
        if (vrf_decode_insn(code, limit, off, &in) != NULL || in.size == 0) {
            return 0;
        }
        size_t next = off + in.size;
        if (in.fmt == FMT_OFFSET) {
            if (in.target < 0 || (uint64_t)in.target >= limit) {
                return 0;
            }
            if ((size_t)in.target >= reach) {
                reach = (size_t)in.target + 1;
            }
        }
        if (ends_flow(in.op) && next >= reach) {
            return next;
        }
        off = next;
    }
    return 0;
}
