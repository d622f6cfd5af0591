/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr layout engine: private IR shared by the layout*.c files.
 *
 * A layout is a data map (which bytes, in which order) plus MPI's lb/extent.
 * The map is a tree of immutable, reference-counted nodes in canonical form:
 *  - CONTIG: `len` bytes at the node origin.
 *  - VECTOR: `count` >= 2 copies of `child`, copy i at origin + i * stride.
 *  - LIST:   `count` >= 2 entries, entry i is `node` at origin + disp
 *            (entries[0].disp == 0, so equal shapes share equal nodes).
 * Every node's origin is the first byte of its first block, so every pointer
 * the walkers form points into the user's data. Summaries (size, true lb/ub,
 * merged block count, hash) are computed once, at construction.
 */
#ifndef UMR_LAYOUT_PRIV_H_
#define UMR_LAYOUT_PRIV_H_

#include "layout.h"

#include <stddef.h>
#include <stdint.h>

/* Largest alignment umr_layout_align accepts. */
#define UMR_LAYOUT_MAX_ALIGN 4096

typedef enum {
    UMR_LAYOUT_NODE_CONTIG,
    UMR_LAYOUT_NODE_VECTOR,
    UMR_LAYOUT_NODE_LIST
} umr_layout_node_kind_t;

typedef struct umr_layout_node umr_layout_node_t;

typedef struct umr_layout_list_entry {
    ptrdiff_t         disp;
    umr_layout_node_t *node;
} umr_layout_list_entry_t;

struct umr_layout_node {
    uint32_t               refcount;
    umr_layout_node_kind_t kind;
    size_t                 size;        /* data bytes, > 0 */
    ptrdiff_t              true_lb;     /* lowest byte, from origin */
    ptrdiff_t              true_ub;     /* one past the highest byte */
    ptrdiff_t              first_end;   /* end of the first block (stream order) */
    ptrdiff_t              last_start;  /* start of the last block */
    ptrdiff_t              last_end;    /* end of the last block */
    size_t                 num_blocks;  /* merged, in stream order */
    uint64_t               hash;
    union {
        struct {
            size_t len;
        } contig;
        struct {
            size_t            count;
            ptrdiff_t         stride;
            umr_layout_node_t *child;
        } vector;
        struct {
            size_t                  count;
            umr_layout_list_entry_t *entries;
            size_t                  *prefix;  /* stream bytes before entry i */
        } list;
    };
};

/*
 * MPI bounds (MPI-3.1 4.1.6-4.1.7): lb/extent, whether each bound is an
 * explicit marker (set by resized, inherited by every constructor built on
 * it: a marked bound takes precedence over data bounds), and the alignment
 * whose multiple an unmarked extent is rounded up to (MPI's epsilon).
 */
struct umr_layout {
    uint32_t          refcount;
    umr_layout_node_t *root;      /* NULL: no data */
    ptrdiff_t         disp;       /* root origin, from the element base */
    ptrdiff_t         lb;
    ptrdiff_t         extent;
    uint8_t           lb_marked;  /* lb is an explicit bound marker */
    uint8_t           ub_marked;  /* lb + extent is one */
    size_t            align;      /* power of 2, >= 1 */
    size_t            size;
    ptrdiff_t         true_lb;
    ptrdiff_t         true_ub;
    size_t            num_blocks;
    uint64_t          hash;
    int               is_contig;
};

/* Structural equality of two maps (layout.c). */
int umr_layout_node_equal(const umr_layout_node_t *a,
                          const umr_layout_node_t *b);

/* Thread-local error text (layout.c). Returns status for tail calls. */
ucs_status_t umr_layout_error(ucs_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Span [lo, hi] of { i * stride : 0 <= i < count } for count >= 1.
 * Returns 0 on ptrdiff_t overflow.
 */
int umr_layout_placement_span(size_t count, ptrdiff_t stride, ptrdiff_t *lo,
                              ptrdiff_t *hi);

/*
 * Merged blocks of one node placed at `offset`, in stream order (the
 * lowering uses it to read a vector element's blocks). Returns non-zero if
 * cb stopped the walk.
 */
int umr_layout_node_for_each_block(const umr_layout_node_t *node,
                                   ptrdiff_t offset, umr_layout_block_cb_t cb,
                                   void *arg);

#endif
