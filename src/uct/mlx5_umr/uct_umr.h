/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr: public extension API of the UCT transport `mlx5_umr`.
 *
 * The layout engine (umr_layout.h) describes noncontiguous data; the
 * functions below register such data as one memory handle whose packed
 * remote key addresses the layout's packed stream, zero-based: byte offset
 * `off` through the key is byte `off` of umr_layout_pack(layout, count).
 */
#ifndef UCT_UMR_H_
#define UCT_UMR_H_

#include "umr_layout.h"

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The transport's component and transport name, and the prefix of its
 * configuration variables (UCX_MLX5_UMR_*) as UCX's config tables see it. */
#define UCT_UMR_NAME          "mlx5_umr"
#define UCT_UMR_CONFIG_PREFIX "MLX5_UMR_"


/* ---- transport extension (owned by the transport layer) ---------------- */


/**
 * Register `count` elements of `layout` at `base` as one memory handle on an
 * mlx5_umr md. The handle's packed key (uct_md_mkey_pack) addresses the
 * packed stream zero-based: remote address `off` is packed byte `off`, and
 * the key covers count * umr_layout_size(layout) bytes. Release with
 * uct_md_mem_dereg(); any peer still holding the key then fails with a
 * remote access error instead of touching memory.
 *
 * Used as a local iov entry (uct_iov_t.memh), a layout handle is zero-based
 * as well: uct_iov_t.buffer is the byte offset into the packed stream,
 * (void*)(uintptr_t)off.
 *
 * `base` may be NULL when the layout's displacements are addresses (an MPI
 * type built with MPI_Get_address, sent from MPI_BOTTOM).
 *
 * flags: UCT_MD_MEM_ACCESS_* (0 means UCT_MD_MEM_ACCESS_RMA; the key and
 * the span get the access asked and no more: UCT_MD_MEM_ACCESS_REMOTE_GET
 * alone registers memory the process may only read, a PROT_READ mapping),
 * and UCT_MD_MEM_FLAG_HIDE_ERRORS: what the caller falls back on (a layout
 * beyond the limits or the key pool, memory that does not register) is
 * then logged at debug level only.
 * Errors: UCS_ERR_INVALID_PARAM (not an mlx5_umr md, NULL/empty layout,
 * count 0), UCS_ERR_EXCEEDS_LIMIT (no UMR plan fits the device limits, or
 * the plan needs more keys than the pool has: never), UCS_ERR_NO_RESOURCE
 * (the pool's keys are in use, by registrations or operations: not now;
 * idle registrations are reclaimed first, uct_umr_md_reclaim_set), an
 * error of the memory registration of the layout's span (its pages are not
 * all accessible: a layout over separate allocations), UCS_ERR_IO_ERROR
 * (UMR failed), UCS_ERR_UNSUPPORTED (a UMR of this md failed before: no
 * layout key is configured on it any more, the callers fall back).
 */
ucs_status_t uct_umr_mem_reg(uct_md_h md, void *base,
                             const umr_layout_t *layout, size_t count,
                             unsigned flags, uct_mem_h *memh_p);

/* Memory handles one uct_umr_mem_reg_over may take. */
#define UCT_UMR_MEM_REG_MAX_MEMHS 64

/**
 * As uct_umr_mem_reg, over memory the caller registered already: every
 * block of the `count` elements lies in one of `memhs` (contiguous handles
 * of uct_md_mem_reg on the same md; blocks in different handles are joined
 * in the one key), whose pinned pages the keys address. Nothing is
 * registered again: no second pin, no second set of translation entries.
 * The handles must stay registered until this one is deregistered.
 *
 * flags: as uct_umr_mem_reg; the access asked must be within each handle's
 * (a key for remote reads over memory registered with
 * UCT_MD_MEM_ACCESS_REMOTE_GET alone, not one for remote writes).
 * Errors: as uct_umr_mem_reg, and UCS_ERR_INVALID_PARAM when a block lies
 * in none of the handles, a handle is a layout handle, the access is beyond
 * a handle's, or num_memhs is not 1 .. UCT_UMR_MEM_REG_MAX_MEMHS.
 */
ucs_status_t uct_umr_mem_reg_over(uct_md_h md, void *base,
                                  const umr_layout_t *layout, size_t count,
                                  const uct_mem_h *memhs, unsigned num_memhs,
                                  unsigned flags, uct_mem_h *memh_p);

/** Memory domain counters (indirect key pool). */
typedef struct uct_umr_md_stats {
    uint64_t mkeys_created;     /* indirect keys created (a syscall each) */
    uint64_t mkeys_in_use;      /* keys taken from the pool right now */
    uint64_t mkeys_free;        /* keys waiting in the pool */
    uint64_t layout_regs;       /* layout registrations */
    uint64_t umr_posted;        /* UMRs posted by the md */
    uint64_t mem_regs;          /* memory registrations: uct_md_mem_reg and
                                   the span of a uct_umr_mem_reg (each pins
                                   its pages and takes translation entries
                                   on a NIC) */
    uint64_t umr_failed;        /* UMRs that completed in error (the md's
                                   and its endpoints'): after the first,
                                   no layout key is configured on the md
                                   any more and layouts fall back */
} uct_umr_md_stats_t;

ucs_status_t uct_umr_md_get_stats(uct_md_h md, uct_umr_md_stats_t *stats);

/**
 * Layout registrations a caller keeps for reuse while no operation uses
 * them (a cache of keys) hold keys of the md's indirect key pool. When the
 * pool runs short (a registration, or an endpoint's local key, needs more
 * keys than are free), the md calls `func(arg)` to get them back: it
 * deregisters the caller's least recently used idle layout registration and
 * returns 1, or returns 0 when none is idle; the md asks again until the
 * need is met. Called from inside uct_umr_mem_reg and the endpoints'
 * layout operations on this md, never from another thread. One per md
 * (NULL removes it). Errors: UCS_ERR_INVALID_PARAM (not an mlx5_umr md).
 */
typedef int (*uct_umr_md_reclaim_func_t)(void *arg);
ucs_status_t uct_umr_md_reclaim_set(uct_md_h md, uct_umr_md_reclaim_func_t func,
                                    void *arg);

/**
 * Put/get between a local layout over registered contiguous memory and a
 * remote key (contiguous, or a layout key: remote_addr is then a byte offset).
 * The local side is `count` elements of `layout` at `base`, all inside `memh`
 * (from uct_md_mem_reg), or `memh` is a layout handle of those very elements
 * (uct_umr_mem_reg/_over with the same base, count and layout: blocks in
 * several allocations), whose key serves as the local one; the operation
 * moves bytes [offset, offset + length)
 * of its packed stream. The endpoint configures a UMR key for
 * (memh, layout, base, count) once and caches it - on its own queue pair, or
 * on the md's with UCX_MLX5_UMR_EP_UMR=n -, so a
 * halo loop pays for the UMR on its first iteration only (see
 * uct_umr_ep_stats_t); layouts of tiny blocks are packed through a bounce
 * buffer instead (UCX_MLX5_UMR_PACK_THRESH). `layout` may be freed as soon
 * as the call returns. Deregistering `memh` drops its cached keys.
 *
 * Returns like uct_ep_put_zcopy: UCS_INPROGRESS (comp is called from
 * progress), UCS_OK (done, length 0), UCS_ERR_NO_RESOURCE (retry or
 * pending_add), UCS_ERR_EXCEEDS_LIMIT (the local layout gets no key: beyond
 * the limits, or the key pool held by registrations in use; found before
 * anything moved, not logged as an error: move the data another way),
 * UCS_ERR_INVALID_PARAM (not an mlx5_umr ep, a layout memh of other
 * elements, range outside the layout, memh or remote key) or another error.
 */
ucs_status_t uct_umr_ep_put_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp);
ucs_status_t uct_umr_ep_get_layout(uct_ep_h ep, uct_mem_h memh, void *base,
                                   const umr_layout_t *layout,
                                   size_t count, size_t offset, size_t length,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp);

/** Endpoint counters: key cache and data path choices. */
typedef struct uct_umr_ep_stats {
    uint64_t cache_hits;        /* local UMR key found in the ep cache */
    uint64_t cache_misses;      /* key configured by a UMR on the ep QP */
    uint64_t cache_evictions;   /* LRU evictions at the cache bound */
    uint64_t cache_invalidations; /* entries dropped by a mem_dereg */
    uint64_t cache_entries;     /* entries now */
    uint64_t rkey_hits;         /* ep remote key cache: same packed key */
    uint64_t rkey_misses;       /* ep remote key cache: unpacked anew */
    uint64_t zcopy_ops;         /* put/get zcopy calls accepted */
    uint64_t rdma_wrs;          /* RDMA work requests posted */
    uint64_t pack_fallbacks;    /* zcopy served by packing (tiny blocks) */
    uint64_t no_resource;       /* calls that returned UCS_ERR_NO_RESOURCE */
} uct_umr_ep_stats_t;

/**
 * Unpack a packed mlx5_umr key through the endpoint's remote key cache: the
 * same packed bytes give the same uct_rkey_t, without an allocation (an MPI
 * layer receives its peers' layout keys every iteration). The key is valid
 * for operations on any mlx5_umr endpoint until uct_umr_ep_rkey_release();
 * idle entries are evicted least recently used beyond
 * UCX_MLX5_UMR_RCACHE_SIZE and freed with the endpoint.
 * Errors: UCS_ERR_INVALID_PARAM (not an mlx5_umr ep or key, or a key this
 * endpoint's cache did not hand out).
 */
ucs_status_t uct_umr_ep_rkey_unpack(uct_ep_h ep, const void *rkey_buffer,
                                    uct_rkey_t *rkey_p);
ucs_status_t uct_umr_ep_rkey_release(uct_ep_h ep, uct_rkey_t rkey);

/** Returns UCS_ERR_INVALID_PARAM when ep is not an mlx5_umr endpoint. */
ucs_status_t uct_umr_ep_get_stats(uct_ep_h ep, uct_umr_ep_stats_t *stats);

/** What one endpoint of an interface costs, for the configuration in use. */
typedef struct uct_umr_iface_attr {
    size_t   ep_sq_bytes;       /* send queue of an endpoint's queue pair,
                                   as the engine sizes it (mlx5: the NIC's
                                   queue in host memory; sw: its work
                                   request slots) */
    unsigned ep_sq_len;         /* its work requests (TX_QUEUE_LEN) */
    unsigned ep_max_sge;        /* SGEs of its RDMA work requests */
    int      ep_umr;            /* 1: local keys configured on the
                                   endpoint's queue pair (EP_UMR=y); 0: its
                                   queue pair is RDMA only */
} uct_umr_iface_attr_t;

/** Returns UCS_ERR_INVALID_PARAM when iface is not an mlx5_umr interface. */
ucs_status_t uct_umr_iface_query(uct_iface_h iface,
                                 uct_umr_iface_attr_t *attr);

#ifdef __cplusplus
}
#endif

#endif
