/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * umr_layout: the layout engine's public API (libumr_layout, pure C: libc
 * only; ucs_status_t is its one borrowed type, a header-only enum).
 *
 * A byte-level datatype algebra shaped like MPI's type constructors. A
 * layout describes which bytes, relative to a base pointer, make up one
 * element; `count` elements are laid out `extent` bytes apart, exactly like
 * MPI's (buffer, count, datatype). The packed stream of a layout is its bytes
 * in type-map order. The UCT transport (uct_umr.h) registers (base, layout,
 * count) as one memory handle; the MPI layers decode datatypes into layouts.
 * One shared library serves them all in a process.
 *
 * Conventions:
 *  - Every function returning ucs_status_t reports bad input as
 *    UCS_ERR_INVALID_PARAM (or UCS_ERR_EXCEEDS_LIMIT for sizes that overflow)
 *    and logs nothing itself; umr_layout_last_error() returns a short
 *    static description of the last failure in the calling thread.
 *  - Constructors never take ownership of their inner layouts: the caller may
 *    free an inner layout right after it was used.
 *  - `inner == NULL` means one byte.
 *  - Bounds follow MPI's type-map rules (MPI-3.1 4.1.6-4.1.7):
 *    * resized sets both bounds as explicit markers; every constructor built
 *      on a layout inherits its markers, and in vector/indexed/struct a
 *      marked bound takes precedence over the data bounds of the other
 *      blocks (markers combine by min/max among themselves);
 *    * a block with neither data nor markers (e.g. contig(0)) has no effect
 *      on the bounds; an empty layout with markers keeps them;
 *    * without an upper marker, vector/indexed/struct round their extent up
 *      to a multiple of the largest alignment of their blocks (MPI's
 *      epsilon; every layout has alignment 1 unless umr_layout_align
 *      says otherwise, so the byte algebra itself never pads).
 */
#ifndef UMR_LAYOUT_API_H_
#define UMR_LAYOUT_API_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct umr_layout umr_layout_t;

/* ---- constructors ------------------------------------------------------ */

/** `len` contiguous bytes (len may be 0: an empty layout). */
ucs_status_t umr_layout_contig(size_t len, umr_layout_t **layout_p);

/**
 * hvector: `count` blocks of `blocklen` elements of `inner`, block i starting
 * at i * stride_bytes. Elements inside a block are inner's extent apart.
 * stride_bytes may be negative or zero.
 */
ucs_status_t umr_layout_vector(size_t count, size_t blocklen,
                               ptrdiff_t stride_bytes,
                               const umr_layout_t *inner,
                               umr_layout_t **layout_p);

/** hindexed: block i has blocklens[i] elements of inner at displs[i]. */
ucs_status_t umr_layout_indexed(size_t count, const size_t *blocklens,
                                const ptrdiff_t *displs,
                                const umr_layout_t *inner,
                                umr_layout_t **layout_p);

/** struct: block i has blocklens[i] elements of inners[i] at displs[i]. */
ucs_status_t umr_layout_struct(size_t count, const size_t *blocklens,
                               const ptrdiff_t *displs,
                               const umr_layout_t *const *inners,
                               umr_layout_t **layout_p);

/** resized: same bytes as inner, lower bound lb and extent `extent`. */
ucs_status_t umr_layout_resized(const umr_layout_t *inner,
                                ptrdiff_t lb, ptrdiff_t extent,
                                umr_layout_t **layout_p);

/**
 * Same bytes and bounds as inner, with alignment `align` (a power of 2 up to
 * 4096), as MPI's basic types have: constructors that use it round an
 * unmarked extent up to a multiple of it (e.g. struct {double; char} has
 * extent 16 when the double is aligned to 8).
 */
ucs_status_t umr_layout_align(const umr_layout_t *inner, size_t align,
                              umr_layout_t **layout_p);

/** Make an independent copy (cheap: layouts are immutable). */
ucs_status_t umr_layout_dup(const umr_layout_t *layout,
                            umr_layout_t **layout_p);

void umr_layout_free(umr_layout_t *layout);

/* ---- queries ----------------------------------------------------------- */

size_t    umr_layout_size(const umr_layout_t *layout);    /* data bytes */
ptrdiff_t umr_layout_extent(const umr_layout_t *layout);
ptrdiff_t umr_layout_lb(const umr_layout_t *layout);
ptrdiff_t umr_layout_true_lb(const umr_layout_t *layout);
ptrdiff_t umr_layout_true_ub(const umr_layout_t *layout);
/** Alignment (1 unless set by umr_layout_align, or inherited). */
size_t    umr_layout_alignment(const umr_layout_t *layout);
/** Number of contiguous blocks after merging adjacent ones (one element). */
size_t    umr_layout_num_blocks(const umr_layout_t *layout);
int       umr_layout_is_contig(const umr_layout_t *layout);

/**
 * Stable across processes and runs: equal layouts hash equally. Equality is
 * about (layout, count) in memory: the same bytes in the same order, lb and
 * extent; bound markers and alignment, which only matter to constructors
 * built on a layout, are not compared.
 */
uint64_t  umr_layout_hash(const umr_layout_t *layout);
int       umr_layout_equal(const umr_layout_t *a,
                           const umr_layout_t *b);

/** Human-readable one-line description, for logs. Returns buf. */
const char *umr_layout_str(const umr_layout_t *layout, char *buf,
                           size_t max);

/** Description of the last error in this thread ("" if none). */
const char *umr_layout_last_error(void);

/* ---- on the wire ------------------------------------------------------ */

/**
 * The layout as bytes another process of the same build rebuilds with
 * umr_layout_decode (the same bytes in the same order, lb and extent):
 * into `buf` (8-byte aligned, `max` bytes), its length in *len_p.
 * UCS_ERR_EXCEEDS_LIMIT: longer than `max`; UCS_ERR_INVALID_PARAM: an
 * empty layout. The decoder checks what it reads: bad bytes are
 * UCS_ERR_INVALID_PARAM, never a crash.
 */
ucs_status_t umr_layout_encode(const umr_layout_t *layout, void *buf,
                               size_t max, size_t *len_p);
ucs_status_t umr_layout_decode(const void *buf, size_t len,
                               umr_layout_t **layout_p);

/* ---- CPU pack/unpack (the reference and the fallback path) ------------- */

ucs_status_t umr_layout_pack(const umr_layout_t *layout, size_t count,
                             const void *base, void *dst);
ucs_status_t umr_layout_unpack(const umr_layout_t *layout,
                               size_t count, void *base, const void *src);

/**
 * Pack/unpack the byte range [offset, offset + len) of the packed stream of
 * (layout, count). offset + len must not exceed count * size.
 */
ucs_status_t umr_layout_pack_range(const umr_layout_t *layout,
                                   size_t count, const void *base,
                                   size_t offset, size_t len, void *dst);
ucs_status_t umr_layout_unpack_range(const umr_layout_t *layout,
                                     size_t count, void *base,
                                     size_t offset, size_t len,
                                     const void *src);

#ifdef __cplusplus
}
#endif

#endif
