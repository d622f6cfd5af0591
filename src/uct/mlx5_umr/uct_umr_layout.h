/**
 * mlx5_umr: public layout API (included by uct_umr.h).
 *
 * Two parts:
 *  1. The layout engine: a byte-level datatype algebra shaped like MPI's type
 *     constructors. A layout describes which bytes, relative to a base
 *     pointer, make up one element; `count` elements are laid out `extent`
 *     bytes apart, exactly like MPI's (buffer, count, datatype). The packed
 *     stream of a layout is its bytes in type-map order.
 *  2. The transport extension: registering (base, layout, count) as one
 *     memory handle whose remote key addresses the packed stream zero-based.
 *
 * Conventions:
 *  - Every function returning ucs_status_t reports bad input as
 *    UCS_ERR_INVALID_PARAM (or UCS_ERR_EXCEEDS_LIMIT for sizes that overflow)
 *    and logs nothing itself; uct_umr_layout_last_error() returns a short
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
 *      epsilon; every layout has alignment 1 unless uct_umr_layout_align
 *      says otherwise, so the byte algebra itself never pads).
 */
#ifndef UCT_UMR_LAYOUT_H_
#define UCT_UMR_LAYOUT_H_

#include <ucs/type/status.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uct_umr_layout uct_umr_layout_t;

/* ---- constructors ------------------------------------------------------ */

/** `len` contiguous bytes (len may be 0: an empty layout). */
ucs_status_t uct_umr_layout_contig(size_t len, uct_umr_layout_t **layout_p);

/**
 * hvector: `count` blocks of `blocklen` elements of `inner`, block i starting
 * at i * stride_bytes. Elements inside a block are inner's extent apart.
 * stride_bytes may be negative or zero.
 */
ucs_status_t uct_umr_layout_vector(size_t count, size_t blocklen,
                                   ptrdiff_t stride_bytes,
                                   const uct_umr_layout_t *inner,
                                   uct_umr_layout_t **layout_p);

/** hindexed: block i has blocklens[i] elements of inner at displs[i]. */
ucs_status_t uct_umr_layout_indexed(size_t count, const size_t *blocklens,
                                    const ptrdiff_t *displs,
                                    const uct_umr_layout_t *inner,
                                    uct_umr_layout_t **layout_p);

/** struct: block i has blocklens[i] elements of inners[i] at displs[i]. */
ucs_status_t uct_umr_layout_struct(size_t count, const size_t *blocklens,
                                   const ptrdiff_t *displs,
                                   const uct_umr_layout_t *const *inners,
                                   uct_umr_layout_t **layout_p);

/** resized: same bytes as inner, lower bound lb and extent `extent`. */
ucs_status_t uct_umr_layout_resized(const uct_umr_layout_t *inner,
                                    ptrdiff_t lb, ptrdiff_t extent,
                                    uct_umr_layout_t **layout_p);

/**
 * Same bytes and bounds as inner, with alignment `align` (a power of 2 up to
 * 4096), as MPI's basic types have: constructors that use it round an
 * unmarked extent up to a multiple of it (e.g. struct {double; char} has
 * extent 16 when the double is aligned to 8).
 */
ucs_status_t uct_umr_layout_align(const uct_umr_layout_t *inner, size_t align,
                                  uct_umr_layout_t **layout_p);

/** Make an independent copy (cheap: layouts are immutable). */
ucs_status_t uct_umr_layout_dup(const uct_umr_layout_t *layout,
                                uct_umr_layout_t **layout_p);

void uct_umr_layout_free(uct_umr_layout_t *layout);

/* ---- queries ----------------------------------------------------------- */

size_t    uct_umr_layout_size(const uct_umr_layout_t *layout);    /* data bytes */
ptrdiff_t uct_umr_layout_extent(const uct_umr_layout_t *layout);
ptrdiff_t uct_umr_layout_lb(const uct_umr_layout_t *layout);
ptrdiff_t uct_umr_layout_true_lb(const uct_umr_layout_t *layout);
ptrdiff_t uct_umr_layout_true_ub(const uct_umr_layout_t *layout);
/** Alignment (1 unless set by uct_umr_layout_align, or inherited). */
size_t    uct_umr_layout_alignment(const uct_umr_layout_t *layout);
/** Number of contiguous blocks after merging adjacent ones (one element). */
size_t    uct_umr_layout_num_blocks(const uct_umr_layout_t *layout);
int       uct_umr_layout_is_contig(const uct_umr_layout_t *layout);

/**
 * Stable across processes and runs: equal layouts hash equally. Equality is
 * about (layout, count) in memory: the same bytes in the same order, lb and
 * extent; bound markers and alignment, which only matter to constructors
 * built on a layout, are not compared.
 */
uint64_t  uct_umr_layout_hash(const uct_umr_layout_t *layout);
int       uct_umr_layout_equal(const uct_umr_layout_t *a,
                               const uct_umr_layout_t *b);

/** Human-readable one-line description, for logs. Returns buf. */
const char *uct_umr_layout_str(const uct_umr_layout_t *layout, char *buf,
                               size_t max);

/** Description of the last error in this thread ("" if none). */
const char *uct_umr_layout_last_error(void);

/* ---- CPU pack/unpack (the reference and the fallback path) ------------- */

ucs_status_t uct_umr_layout_pack(const uct_umr_layout_t *layout, size_t count,
                                 const void *base, void *dst);
ucs_status_t uct_umr_layout_unpack(const uct_umr_layout_t *layout,
                                   size_t count, void *base, const void *src);

/**
 * Pack/unpack the byte range [offset, offset + len) of the packed stream of
 * (layout, count). offset + len must not exceed count * size.
 */
ucs_status_t uct_umr_layout_pack_range(const uct_umr_layout_t *layout,
                                       size_t count, const void *base,
                                       size_t offset, size_t len, void *dst);
ucs_status_t uct_umr_layout_unpack_range(const uct_umr_layout_t *layout,
                                         size_t count, void *base,
                                         size_t offset, size_t len,
                                         const void *src);

#ifdef __cplusplus
}
#endif

#endif
