/**
 * mlx5_umr: public extension API of the UCT transport `mlx5_umr`.
 *
 * The layout engine (uct_umr_layout.h) describes noncontiguous data; the
 * functions below register such data as one memory handle whose packed
 * remote key addresses the layout's packed stream, zero-based: byte offset
 * `off` through the key is byte `off` of uct_umr_layout_pack(layout, count).
 */
#ifndef UCT_UMR_H_
#define UCT_UMR_H_

#include "uct_umr_layout.h"

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- transport extension (owned by the transport layer) ---------------- */


/**
 * Register `count` elements of `layout` at `base` as one memory handle on an
 * mlx5_umr md. The handle's packed key (uct_md_mkey_pack) addresses the
 * packed stream zero-based: remote address `off` is packed byte `off`, and
 * the key covers count * uct_umr_layout_size(layout) bytes. Release with
 * uct_md_mem_dereg(); any peer still holding the key then fails with a
 * remote access error instead of touching memory.
 *
 * Used as a local iov entry (uct_iov_t.memh), a layout handle is zero-based
 * as well: uct_iov_t.buffer is the byte offset into the packed stream,
 * (void*)(uintptr_t)off.
 *
 * flags: UCT_MD_MEM_ACCESS_* (0 means UCT_MD_MEM_ACCESS_RMA).
 * Errors: UCS_ERR_INVALID_PARAM (not an mlx5_umr md, NULL/empty layout,
 * count 0), UCS_ERR_EXCEEDS_LIMIT (no UMR plan fits the device limits),
 * UCS_ERR_NO_RESOURCE (key pool exhausted), UCS_ERR_IO_ERROR (UMR failed).
 */
ucs_status_t uct_umr_mem_reg(uct_md_h md, void *base,
                             const uct_umr_layout_t *layout, size_t count,
                             unsigned flags, uct_mem_h *memh_p);

/** Memory domain counters (indirect key pool). */
typedef struct uct_umr_md_stats {
    uint64_t mkeys_created;     /* indirect keys created (a syscall each) */
    uint64_t mkeys_in_use;      /* keys taken from the pool right now */
    uint64_t mkeys_free;        /* keys waiting in the pool */
    uint64_t layout_regs;       /* layout registrations */
    uint64_t umr_posted;        /* UMRs posted by the md */
} uct_umr_md_stats_t;

ucs_status_t uct_umr_md_get_stats(uct_md_h md, uct_umr_md_stats_t *stats);

/** Endpoint counters: key cache and data path choices. */
typedef struct uct_umr_ep_stats {
    uint64_t cache_hits;        /* local UMR key found in the ep cache */
    uint64_t cache_misses;      /* key configured by a UMR on the ep QP */
    uint64_t cache_evictions;   /* LRU evictions at the cache bound */
    uint64_t cache_invalidations; /* entries dropped by a mem_dereg */
    uint64_t cache_entries;     /* entries now */
    uint64_t rkey_hits;         /* remote key cache hits */
    uint64_t rkey_misses;
    uint64_t zcopy_ops;         /* put/get zcopy calls accepted */
    uint64_t rdma_wrs;          /* RDMA work requests posted */
    uint64_t pack_fallbacks;    /* zcopy served by packing (tiny blocks) */
    uint64_t no_resource;       /* calls that returned UCS_ERR_NO_RESOURCE */
} uct_umr_ep_stats_t;

/** Returns UCS_ERR_INVALID_PARAM when ep is not an mlx5_umr endpoint. */
ucs_status_t uct_umr_ep_get_stats(uct_ep_h ep, uct_umr_ep_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif
