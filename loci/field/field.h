// SPDX-License-Identifier: MIT
// The trace field's one public header: flavours (grid or keyed), deposits, queries,
// tick, provenance (journal, depositors, watchpoints), snapshots, diff and replay.
#ifndef LOCIOS_LOCI_FIELD_FIELD_H
#define LOCIOS_LOCI_FIELD_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "field_config.h"

// Every function returns one of these (0 = success); field_err_name() spells them.
// A call that returns an error has left the field exactly as it was.
enum field_err {
    FIELD_OK = 0,
    FIELD_ERR_ARG,           // null pointer, bad size or bad combination of arguments
    FIELD_ERR_FLAVOUR,       // no flavour with that index or name
    FIELD_ERR_KIND,          // operation needs the other kind of flavour (grid vs keyed)
    FIELD_ERR_RANGE,         // cell, region or key outside the flavour
    FIELD_ERR_AMOUNT,        // amount is NaN, infinite or negative
    FIELD_ERR_PARAM,         // E, G, cap or min out of its documented range
    FIELD_ERR_NAME,          // flavour name empty, too long or already used
    FIELD_ERR_KEY,           // key empty or longer than FIELD_KEY_MAX
    FIELD_ERR_NOMEM,         // the arena cannot hold this
    FIELD_ERR_FULL,          // keyed flavour or table at capacity
    FIELD_ERR_DEPOSITOR,     // depositor id 0 is reserved for "nobody"
    FIELD_ERR_INVARIANT,     // mass invariant failed (tick itself was applied)
    FIELD_ERR_JOURNAL_LOST,  // the journal wrapped past the records asked for
    FIELD_ERR_SNAP_TRUNCATED,
    FIELD_ERR_SNAP_MAGIC,
    FIELD_ERR_SNAP_VERSION,
    FIELD_ERR_SNAP_CHECKSUM,
    FIELD_ERR_SNAP_CORRUPT,   // well-framed but inconsistent content
    FIELD_ERR_SNAP_DIGEST,    // content digest does not match the content
    FIELD_ERR_LAYOUT,         // snapshot flavours differ from the field's flavours
    FIELD_ERR_REPLAY,         // journal holds a record replay cannot re-apply (a restore)
    FIELD_ERR_JRN_TRUNCATED,  // journal export shorter than its header or size says
    FIELD_ERR_JRN_MAGIC,      // not a journal export
    FIELD_ERR_JRN_VERSION,    // journal export of another format version
    FIELD_ERR_JRN_CHECKSUM,   // journal export CRC-32 mismatch
    FIELD_ERR_JRN_CORRUPT,    // well-framed journal export breaking a record rule
    FIELD_ERR_JRN_DIGEST,     // replay did not arrive at the digest the export recorded
    FIELD_ERR__COUNT
};

enum field_kind {
    FIELD_GRID = 1,
    FIELD_KEYED = 2
};

// Per-flavour rates. E: share evaporated per tick, 0..1. G: share diffused per tick,
// 0..1 (grids; keyed flavours need G = 0). cap: saturation, 0 < cap <= FIELD_CAP_MAX.
// min: after a tick, values below min become 0 (grid) or are removed (keyed); 0 <= min.
typedef struct {
    float evaporation, diffusion, cap, min;
} field_params_t;

typedef struct {
    uint8_t len;
    uint8_t key[FIELD_KEY_MAX];  // zero-padded
    float value;                 // committed value: what sense() returns
    float pending;               // deposits waiting for the next tick
    uint32_t last;               // last depositor id, 0 = nobody
} field_entry_t;

// What the last tick did to one flavour, in double; the invariant is checked on these.
typedef struct {
    double before;     // sum of committed values when the tick began
    double deposited;  // sum of amounts accepted by deposit() since the previous tick
    double clipped;    // mass removed by the saturation cap
    double dropped;    // mass removed by the min rule
    double after;      // sum of committed values when the tick ended
} field_tick_stats_t;

typedef struct {
    uint8_t kind;
    uint8_t name_len;
    char name[FIELD_NAME_MAX + 1];
    uint32_t w, h;  // grid size; keyed: w = capacity, h = 0
    field_params_t p;
    float keep, share, self_w[5];  // derived: 1-E, G/4, weight kept by a cell with k walls
    float *cells, *pending;        // grid: W*H each
    uint32_t *last;                // grid: W*H last depositor ids
    field_entry_t *entries;        // keyed: sorted by key, `count` used
    uint32_t count;
    double deposited, clipped;  // since the previous tick
    field_tick_stats_t stats;   // of the previous tick
} field_flavour_t;

enum field_rec_kind {
    FIELD_REC_DEPOSIT = 1,
    FIELD_REC_TICK,
    FIELD_REC_WATCH,
    FIELD_REC_RESTORE
};

typedef struct {
    uint64_t seq;
    uint64_t tick;       // tick count when recorded (TICK: the tick just completed)
    uint32_t depositor;  // DEPOSIT: who
    uint32_t where;      // DEPOSIT on grid: cell index; WATCH: watch id
    float amount;        // DEPOSIT: amount; WATCH: metric value at the crossing
    uint16_t flavour;
    uint8_t kind;    // enum field_rec_kind
    uint8_t flags;   // WATCH: 1 = crossed upward, 0 = downward
    uint8_t keylen;  // DEPOSIT on keyed
    uint8_t key[FIELD_KEY_MAX];
} field_record_t;

typedef struct {
    uint32_t id;
    uint16_t flavour;
    uint16_t pad;
    uint64_t count;
    double total;
} field_depositor_t;

typedef struct {
    uint8_t used;
    uint8_t above;  // metric >= threshold at the last check
    uint16_t flavour;
    uint32_t x0, y0, w, h;  // grid: region whose sum is watched
    uint8_t keylen;         // keyed: key whose value is watched
    uint8_t key[FIELD_KEY_MAX];
    float threshold;
    uint32_t crossings;
    double metric;  // value at the last check
} field_watch_t;

typedef struct {
    uint8_t *arena;
    size_t arena_size, arena_used;
    uint64_t tick;
    uint32_t nflavours;
    field_flavour_t fl[FIELD_MAX_FLAVOURS];
    field_record_t *journal;
    uint32_t journal_cap;
    uint64_t journal_next;  // sequence number of the next record
    uint64_t journal_lost;  // records overwritten by the ring
    field_depositor_t *deps;
    uint32_t deps_cap, deps_count;
    field_depositor_t deps_overflow;  // deposits of depositors the table had no room for
    field_watch_t *watches;
    uint32_t watch_cap;
    int check_invariant;  // nonzero: tick() verifies the mass invariant of every flavour
    double invariant_tol;
} field_t;

typedef struct {
    uint32_t flavour, index;  // index: grid cell, or keyed ordinal in the snapshot
    uint8_t keylen;
    uint8_t key[FIELD_KEY_MAX];
    float a, b;  // value in the first / second snapshot (0 if absent)
} field_diff_t;

typedef struct {
    uint32_t index;  // grid cell index (y*W + x) or keyed ordinal
    float value;
    uint8_t keylen;
    uint8_t key[FIELD_KEY_MAX];
} field_hit_t;

// What field_journal_check() read from a journal export's header (FORMAT.md).
typedef struct {
    uint64_t first_seq;                 // sequence number of the first record
    uint32_t count;                     // records in the export
    uint32_t size;                      // bytes, trailer included
    uint64_t lost;                      // records asked for that the ring had already overwritten
    uint64_t end_tick;                  // the field's tick when exported
    uint8_t digest[FIELD_DIGEST_SIZE];  // the field's content digest when exported
} field_journal_info_t;

typedef struct {
    uint16_t version;
    uint32_t nflavours;
    uint64_t tick, journal_seq;
    uint32_t size;
    uint8_t digest[FIELD_DIGEST_SIZE];
} field_snap_info_t;

const char *field_err_name(int err);

// Setup (field_core.c). The arena belongs to the caller and must outlive the field.
size_t field_base_size(uint32_t journal_cap, uint32_t deps_cap, uint32_t watch_cap);
size_t field_grid_size(uint32_t w, uint32_t h);
size_t field_keyed_size(uint32_t capacity);
int field_init(field_t *f, void *arena, size_t arena_size, uint32_t journal_cap, uint32_t deps_cap,
               uint32_t watch_cap);
int field_add_grid(field_t *f, const char *name, uint32_t w, uint32_t h, const field_params_t *p,
                   uint32_t *index);
int field_add_keyed(field_t *f, const char *name, uint32_t capacity, const field_params_t *p,
                    uint32_t *index);
int field_find(const field_t *f, const char *name, uint32_t *index);

// Deposits are pending until the next tick; sense() sees committed values only.
int field_deposit_cell(field_t *f, uint32_t flavour, uint32_t cell, float amount,
                       uint32_t depositor);
int field_deposit_xy(field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float amount,
                     uint32_t depositor);
int field_deposit_key(field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen, float amount,
                      uint32_t depositor);
int field_sense_xy(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float *out);
int field_sense_key(const field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                    float *out);
int field_last_xy(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, uint32_t *who);
int field_last_key(const field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                   uint32_t *who);

// Queries (field_query.c, field_topk.c).
int field_neighbourhood(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, float out[9],
                        uint32_t *valid_mask);
int field_gradient(const field_t *f, uint32_t flavour, uint32_t x, uint32_t y, int *dx, int *dy);
int field_region(const field_t *f, uint32_t flavour, uint32_t x0, uint32_t y0, uint32_t w,
                 uint32_t h, double *sum, float *max, uint32_t *argmax);
int field_total(const field_t *f, uint32_t flavour, double *sum);
int field_topk(const field_t *f, uint32_t flavour, uint32_t k, field_hit_t *out, uint32_t *n);

// Tick (field_tick.c): pending deposits -> cap -> evaporate -> diffuse -> min, for every
// flavour in index order; then watchpoints; then one TICK journal record.
int field_tick(field_t *f);
int field_check_invariant(const field_t *f, uint32_t flavour, double rel_tol);

// Provenance (field_journal.c, field_watch.c).
int field_journal_get(const field_t *f, uint64_t seq, field_record_t *out);
uint64_t field_journal_oldest(const field_t *f);
int field_depositor_total(const field_t *f, uint32_t id, uint32_t flavour, double *total,
                          uint64_t *count);
int field_watch_region(field_t *f, uint32_t flavour, uint32_t x0, uint32_t y0, uint32_t w,
                       uint32_t h, float threshold, uint32_t *id);
int field_watch_key(field_t *f, uint32_t flavour, const uint8_t *key, size_t keylen,
                    float threshold, uint32_t *id);
int field_unwatch(field_t *f, uint32_t id);

// Snapshots (field_snapshot.c, field_parse.c, field_diff.c, field_replay.c).
size_t field_snapshot_size(const field_t *f);
int field_snapshot(const field_t *f, void *buf, size_t cap, size_t *len);
int field_digest(const field_t *f, uint8_t out[FIELD_DIGEST_SIZE]);
int field_snapshot_check(const void *buf, size_t len, field_snap_info_t *info);
int field_restore(field_t *f, const void *buf, size_t len);
int field_diff(const void *a, size_t alen, const void *b, size_t blen, field_diff_t *out,
               uint32_t cap, uint32_t *total);
int field_replay(field_t *dst, const field_t *src, const void *snap, size_t len);

// Journal export (field_journal_io.c): the records from `from` (or the oldest the ring
// still holds) to the newest, as bytes (FORMAT.md), and replay of a snapshot plus such
// bytes. `digest`, if not NULL, is the field's current content digest (a caller that
// just took a snapshot has it); otherwise export computes it.
size_t field_journal_export_size(const field_t *f, uint64_t from);
int field_journal_export(const field_t *f, uint64_t from, const uint8_t *digest, void *buf,
                         size_t cap, size_t *len);
int field_journal_check(const void *buf, size_t len, field_journal_info_t *info);
int field_journal_record(const void *buf, size_t len, uint32_t i, field_record_t *out);
int field_replay_journal(field_t *dst, const void *snap, size_t slen, const void *jrn, size_t jlen);

#endif
