// SPDX-License-Identifier: MIT
// The capability table's one public header: unforgeable handles (slot + generation +
// table id), narrowing derivation, checks with scope and rate, revocation, audit log.
#ifndef LOCIOS_LOCI_CAP_CAP_H
#define LOCIOS_LOCI_CAP_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "cap_config.h"

// Every function returns one of these (0 = allowed / done); cap_why() spells them.
// A call that returns an error has left the table exactly as it was, except for the
// REFUSED audit record that every refusal other than CAP_E_ARG and CAP_E_AUDIT_FULL adds.
enum cap_err {
    CAP_OK = 0,
    CAP_E_REVOKED,     // stale handle: the slot was revoked (and maybe reused)
    CAP_E_EXPIRED,     // now >= the capability's expiry tick
    CAP_E_OWNER,       // the capability is bound to another owner
    CAP_E_OP,          // the operation's right is not granted
    CAP_E_FLAVOUR,     // the flavour's bit is not in the mask
    CAP_E_REGION,      // cell or rectangle outside the granted region
    CAP_E_KEY,         // key does not start with a granted prefix
    CAP_E_RATE,        // deposit would pass the epoch's rate (here or in an ancestor)
    CAP_E_FOREIGN,     // handle of another table (or another boot)
    CAP_E_IO,          // port range outside the granted one
    CAP_E_MEM,         // memory range outside the granted one
    CAP_E_AMOUNT,      // deposit amount NaN, infinite or negative
    CAP_E_AUTHORITY,   // IO or MEM asked for by an authority other than 0
    CAP_E_AUDIT_FULL,  // the audit log has no room for the records this needs
    CAP_E_TABLE_FULL,  // no free capability slot
    CAP_E_ARG,         // malformed argument (not audited)
    CAP_E_W_RIGHTS,    // derive: a widening, per field
    CAP_E_W_FLAVOURS,
    CAP_E_W_REGION,
    CAP_E_W_KEYS,
    CAP_E_W_RATE,
    CAP_E_W_EXPIRES,
    CAP_E_W_IO,
    CAP_E_W_MEM,
    CAP_E__COUNT
};

enum cap_right {
    CAP_SENSE = 1,
    CAP_DEPOSIT = 2,
    CAP_SPAWN = 4,
    CAP_IO = 8,
    CAP_MEM = 16,
    CAP_REWRITE = 32,
    CAP_ALL_RIGHTS = 63
};

enum cap_rec_kind {
    CAP_REC_GRANT = 1,
    CAP_REC_DERIVE,
    CAP_REC_REFUSED,
    CAP_REC_REVOKE,
    CAP_REC_EXPIRE,
    CAP_REC_RETIRE,
    CAP_REC_CHECKPOINT
};

// The scope of a capability; also the request of grant() and derive().
// Region and keys: has_* = 0 means unrestricted. IO and MEM ranges: has_* = 0 means
// none at all (hardware authority is never implied). Ranges are inclusive.
typedef struct {
    uint32_t rights;
    uint32_t flavours;  // bit i = field flavour index i
    uint8_t has_region, has_keys, has_io, has_mem;
    uint8_t nkeys;
    uint8_t keylen[CAP_MAX_KEYS];
    uint8_t keys[CAP_MAX_KEYS][CAP_KEY_MAX];
    uint32_t x0, y0, w, h;  // region in grid cells, w, h >= 1
    double rate;            // max deposit total per epoch; < 0 = unlimited
    uint64_t expires;       // absolute tick; 0 = never
    uint64_t io_lo, io_hi, mem_lo, mem_hi;
} cap_scope_t;

// A handle: what the binding keeps inside a Python Cap object.
typedef struct {
    uint64_t table;
    uint32_t slot, gen;
} cap_ref_t;

typedef struct {
    uint32_t gen;  // generation of the slot; bumped when it is freed
    uint8_t live;
    uint32_t owner;
    uint32_t parent, parent_gen;  // CAP_NONE for a root (a grant)
    uint32_t first_child, next_sibling, prev_sibling;
    double used;  // deposit total charged in this epoch
    cap_scope_t s;
} cap_slot_t;

typedef struct {
    uint64_t id;           // table identity, carried by every handle
    uint64_t now;          // the table's clock: audit ticks, default for check
    uint64_t next_expiry;  // no live capability expires before it (0: none does)
    uint32_t capacity, live;
    cap_slot_t *slots;
    uint32_t *free;  // stack of free slot numbers
    uint32_t nfree;
    uint8_t *log;  // audit records, CAP_REC_SIZE bytes each
    uint32_t audit_cap, audit_len;
    uint64_t seq;                 // sequence number of the next record
    uint8_t head[CAP_HASH_SIZE];  // SHA-256 chain head over the records so far
} cap_table_t;

// A check: op is one right. SENSE/DEPOSIT look at flavour and at the place: a cell
// rectangle (x, y, w, h) when x >= 0, else a key when keylen > 0 (or key != NULL),
// else "the whole flavour". IO and MEM look at the range [x, x + w).
typedef struct {
    uint32_t op, flavour;
    int64_t x, y;
    uint32_t w, h;
    const uint8_t *key;
    size_t keylen;
    double amount;
    uint64_t now;  // 0 = the table's clock
} cap_req_t;

// A decoded audit record (the bytes are the truth; see README.md for the layout).
typedef struct {
    uint64_t seq, tick;
    uint8_t kind, version;
    uint16_t reason;
    uint32_t actor, owner, slot, gen, parent, parent_gen, rights, aux;
    float amount;
    uint8_t data[CAP_HASH_SIZE];
} cap_rec_t;

const char *cap_why(int err);
size_t cap_arena_size(uint32_t capacity, uint32_t audit);
int cap_init(cap_table_t *t, void *arena, size_t size, uint32_t capacity, uint32_t audit,
             uint64_t id);

// Looks a handle up: CAP_OK with *out, or CAP_E_FOREIGN / CAP_E_REVOKED.
int cap_lookup(const cap_table_t *t, const cap_ref_t *c, const cap_slot_t **out);
int cap_grant(cap_table_t *t, uint32_t owner, const cap_scope_t *s, uint32_t by, cap_ref_t *out);
// Every field of *s must narrow the parent's (cap_scope_narrows); by is the actor and
// must be 0 or the parent's owner.
int cap_derive(cap_table_t *t, const cap_ref_t *parent, uint32_t owner, const cap_scope_t *s,
               uint32_t by, cap_ref_t *out);
// CAP_OK if child is a narrowing of parent, else the CAP_E_W_* of the first widened field.
int cap_scope_narrows(const cap_scope_t *parent, const cap_scope_t *child);
int cap_check(cap_table_t *t, const cap_ref_t *c, uint32_t owner, const cap_req_t *r);
// Audits a use that no capability of `owner` covers, so there is no handle to check:
// a REFUSED record (reason CAP_E_OP, no slot). Returns CAP_E_OP, or CAP_E_AUDIT_FULL.
int cap_refuse(cap_table_t *t, uint32_t owner, uint32_t op, uint32_t flavour, uint64_t now);
void cap_epoch(cap_table_t *t);
// Each removes a whole subtree (or several), one audit record per capability removed,
// and stores the count; nothing happens unless the log has room for every record.
int cap_revoke(cap_table_t *t, const cap_ref_t *c, uint32_t by, uint32_t *count);
int cap_retire(cap_table_t *t, uint32_t owner, uint32_t by, uint32_t *count);
int cap_expire(cap_table_t *t, uint64_t now, uint32_t *count);

// Audit log.
int cap_audit_get(const cap_table_t *t, uint32_t index, cap_rec_t *out);
int cap_audit_verify(const cap_table_t *t);
// Copies all records to buf (room for audit_len records), empties the log and leaves a
// CHECKPOINT carrying the chain head; *n = bytes written.
int cap_audit_export(cap_table_t *t, uint8_t *buf, size_t cap, size_t *n);
// Chain head over exported bytes (a whole number of records, first one seq 0 or a
// CHECKPOINT, seq consecutive, known kinds); CAP_E_ARG when malformed.
int cap_audit_chain(const uint8_t *buf, size_t n, uint8_t head[CAP_HASH_SIZE]);
void cap_rec_decode(const uint8_t *p, cap_rec_t *out);

#endif
