/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: what the core knows of an MPI datatype. A binding
 * decodes its MPI's datatypes (src/mpi/decode, compiled for that MPI's ABI)
 * into this summary of one element; the core never sees an MPI_Datatype,
 * only this and an opaque key the binding gives with it (umr_mpi_types.h).
 */
#ifndef UMR_MPI_TYPE_H_
#define UMR_MPI_TYPE_H_

#include <umr_layout.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_mpi_dtype {
    umr_layout_t *layout;      /* NULL: not expressible -> pass through */
    size_t       size;         /* data bytes of one element (MPI_Type_size) */
    ptrdiff_t    lb, extent;   /* MPI_Type_get_extent */
    ptrdiff_t    true_lb;      /* the bytes one element touches: */
    ptrdiff_t    true_ub;      /* [true_lb, true_ub) (with a layout) */
    size_t       num_blocks;   /* contiguous blocks per element */
    int          is_contig;    /* size == extent && one block */
    uint64_t     id;           /* nonzero: a number no other summary of
                                  this process has, its layout unchanged
                                  while it lives (the decoder's): a layout
                                  key made for it matches it again by this
                                  alone (umr_mpi_keys.h); 0: by the
                                  layout's contents */
} umr_mpi_dtype_t;

/* The bytes `count` elements touch, [*lo, *hi) from the buffer's address
 * (count > 0, a type with a layout): what a registration covers. -1 when it
 * does not fit a ptrdiff_t (no memory is that large). Inline: the layout
 * engine's umr_layout_span over the summary. */
static inline int umr_mpi_dtype_span(const umr_mpi_dtype_t *t, size_t count,
                                     ptrdiff_t *lo, ptrdiff_t *hi)
{
    ptrdiff_t rep;

    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), t->extent, &rep) ||
        __builtin_add_overflow(t->true_lb, (rep < 0) ? rep : 0, lo) ||
        __builtin_add_overflow(t->true_ub, (rep > 0) ? rep : 0, hi)) {
        return -1;
    }
    return 0;
}

/* The summary of one element of `layout` (a layout made by the binding's
 * own means: a target's key from a shipped type description). */
static inline void umr_mpi_dtype_of_layout(umr_mpi_dtype_t *t,
                                           umr_layout_t *layout)
{
    t->layout     = layout;
    t->size       = umr_layout_size(layout);
    t->lb         = umr_layout_lb(layout);
    t->extent     = umr_layout_extent(layout);
    t->true_lb    = umr_layout_true_lb(layout);
    t->true_ub    = umr_layout_true_ub(layout);
    t->num_blocks = umr_layout_num_blocks(layout);
    t->is_contig  = umr_layout_is_contig(layout);
    t->id         = 0;
}

#ifdef __cplusplus
}
#endif

#endif
