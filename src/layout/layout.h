/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: internal interface (lowering to UMR descriptors).
 *
 * A plan is what the NIC takes for (layout, count) registered at `base`: an
 * ordered set of indirect keys. Keys are listed children first; the last key
 * is the top key. Byte i addressed through the top key (zero-based) is byte i
 * of umr_layout_pack(layout, count, base, ...).
 *
 * Each key is either
 *  - INTERLEAVED: for r in [0, repeat): for each entry e:
 *        e.bytes_count bytes at e.offset + r * (e.bytes_count + e.bytes_skip)
 *  - LIST: for each entry e: e.bytes_count bytes at e.offset
 * where an entry's offset is relative to `base` (entry.child < 0) or a
 * zero-based offset into plan->keys[entry.child] (nesting).
 *
 * Every plan respects the limits it was lowered with; the limits default to
 * rdma-core 44 / ConnectX: 16-bit bytes_count and bytes_count + bytes_skip,
 * 51 interleaved / 52 list entries per inline UMR WQE, list < 2 GiB.
 */
#ifndef UMR_LAYOUT_H_
#define UMR_LAYOUT_H_

#include "umr_layout.h"

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_layout_limits {
    uint32_t max_interleaved;   /* entries per interleaved UMR (51) */
    uint32_t max_list;          /* entries per list UMR (52) */
    uint32_t max_bytes_count;   /* bytes_count field limit (65535) */
    uint32_t max_stride;        /* bytes_count + bytes_skip limit (65535) */
    uint64_t max_list_bytes;    /* total bytes one list key may address */
    uint64_t max_key_bytes;     /* total bytes any key may address */
    uint32_t max_depth;         /* nesting levels allowed (1 = no nesting) */
    uint32_t max_keys;          /* keys one plan may use */
} umr_layout_limits_t;

/* rdma-core 44 / ConnectX defaults (1 KiB inline UMR WQE). */
void umr_layout_limits_default(umr_layout_limits_t *limits);

typedef enum {
    UMR_LAYOUT_KEY_INTERLEAVED,
    UMR_LAYOUT_KEY_LIST
} umr_layout_key_kind_t;

typedef struct umr_layout_entry {
    int64_t  offset;        /* from base (child < 0) or into keys[child] */
    uint32_t bytes_count;
    uint32_t bytes_skip;    /* INTERLEAVED only; 0 for LIST */
    int32_t  child;         /* -1: base memory, else index of a child key */
    uint32_t mem;           /* child < 0: which memory (the block's `mem` in
                               umr_layout_lower_blocks; 0 for a layout) */
} umr_layout_entry_t;

typedef struct umr_layout_key {
    umr_layout_key_kind_t kind;
    uint32_t              repeat;       /* INTERLEAVED: >= 1; LIST: 1 */
    uint32_t              num_entries;
    umr_layout_entry_t    *entries;
    uint64_t              length;       /* bytes addressed by this key */
} umr_layout_key_t;

typedef struct umr_layout_cost {
    uint32_t num_wqes;        /* UMR work requests to build the plan */
    uint32_t total_entries;   /* descriptor entries over all keys */
    uint32_t depth;           /* 1 = one key, 2 = key over keys, ... */
    uint64_t total_bytes;     /* bytes addressed (= count * size) */
    double   mean_block;      /* mean contiguous block, bytes */
} umr_layout_cost_t;

typedef struct umr_layout_plan {
    uint32_t          num_keys;
    umr_layout_key_t  *keys;        /* children first, keys[num_keys-1] top */
    ptrdiff_t         span_lb;      /* lowest byte touched, relative to base */
    ptrdiff_t         span_ub;      /* one past the highest byte touched */
    umr_layout_cost_t cost;
} umr_layout_plan_t;

/**
 * Lower (layout, count) to a plan within `limits` (NULL: defaults).
 * Fails with UCS_ERR_EXCEEDS_LIMIT if no plan fits the limits, and
 * UCS_ERR_INVALID_PARAM on an empty layout or count 0.
 */
ucs_status_t umr_layout_lower(const umr_layout_t *layout, size_t count,
                              const umr_layout_limits_t *limits,
                              umr_layout_plan_t **plan_p);

/* One block of memory for umr_layout_lower_blocks(). */
typedef struct umr_layout_block {
    int64_t  offset;        /* from base */
    uint64_t length;
    uint32_t mem;           /* caller's index of the memory holding it */
} umr_layout_block_t;

/**
 * Lower a list of blocks, in this order, to a plan of list keys within
 * `limits` (NULL: defaults): what a scatter/gather list becomes when it has
 * more entries than a work request takes. Adjacent blocks of the same `mem`
 * merge; blocks of different memories never do (each entry keeps its block's
 * `mem`). span_lb/span_ub cover the blocks. Zero-length blocks are skipped;
 * UCS_ERR_INVALID_PARAM when nothing is left.
 */
ucs_status_t umr_layout_lower_blocks(const umr_layout_block_t *blocks,
                                     size_t num,
                                     const umr_layout_limits_t *limits,
                                     umr_layout_plan_t **plan_p);

void umr_layout_plan_free(umr_layout_plan_t *plan);

/* Stream bytes of (layout, count), with overflow checks. */
ucs_status_t umr_layout_total_size(const umr_layout_t *layout,
                                   size_t count, size_t *total_p);

/*
 * Bytes touched by (layout, count), relative to base: [*lb_p, *ub_p).
 * UCS_ERR_EXCEEDS_LIMIT if it does not fit ptrdiff_t.
 */
ucs_status_t umr_layout_span(const umr_layout_t *layout, size_t count,
                             ptrdiff_t *lb_p, ptrdiff_t *ub_p);

/**
 * Walk the contiguous blocks of (layout, count) in packed-stream order,
 * merged where adjacent. cb returns non-zero to stop the walk early.
 */
typedef int (*umr_layout_block_cb_t)(void *arg, ptrdiff_t offset, size_t len);
ucs_status_t umr_layout_for_each_block(const umr_layout_t *layout,
                                       size_t count,
                                       umr_layout_block_cb_t cb, void *arg);

#ifdef __cplusplus
}
#endif

#endif
