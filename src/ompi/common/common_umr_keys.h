/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libmca_common_umr: registration cache and layout keys, per rail.
 *
 * Each rail keeps a UCS registration cache (ucs_rcache) of contiguous
 * regions, invalidated by UCM's memory events when the memory is unmapped
 * (freed, munmap), so a freed and reused buffer never reaches an old
 * registration. A region also holds the layout keys made over it (sender
 * side), each keyed by (base, count, layout contents): a datatype that was
 * freed and another one allocated at the same address with a different
 * layout never share a key. Layout keys go with their region, and give
 * their keys of the transport's pool back when it runs short: the least
 * recently used key no operation holds first (uct_umr_md_reclaim_set). A
 * key whose window or memory is gone is given back at once
 * (mca_common_umr_lkey_drop).
 *
 * A layout that cannot get a key is a decision, not an error: the calls
 * that make keys return OMPI_ERR_NOT_AVAILABLE (not on this rail, for good:
 * beyond the limits of a key, memory that does not register as one region)
 * or OMPI_ERR_TEMP_OUT_OF_RESOURCE (not now: the key pool's keys in use,
 * out of memory), with a reason for the caller's one line, and log nothing;
 * OMPI_ERROR only when the rail fails.
 */
#ifndef MCA_COMMON_UMR_KEYS_H_
#define MCA_COMMON_UMR_KEYS_H_

#include "common_umr_rail.h"

#include "uct_umr.h"

#include <ompi_config.h>
#include <ompi/constants.h>
#include <ucs/datastruct/list.h>
#include <ucs/memory/rcache.h>

#include <sys/mman.h>   /* PROT_READ, PROT_WRITE */

BEGIN_C_DECLS

/* A layout key over a registered region (sender side). */
typedef struct mca_common_umr_lkey {
    ucs_list_link_t  list;          /* in region->lkeys, most recent first */
    ucs_list_link_t  idle;          /* in rail->idle_lkeys while refs == 0 */
    struct mca_common_umr_region *region;
    umr_layout_t     *layout;       /* own copy: the key is its contents */
    void             *base;
    size_t           count;
    int              prot;          /* PROT_READ: peers only read through
                                       it; | PROT_WRITE: they write too */
    uct_mem_h        memh;          /* over the region's memh */
    int              refs;          /* sends in flight */
    uint8_t          rkey[MCA_COMMON_UMR_MAX_RKEY];
} mca_common_umr_lkey_t;

/* A registered region of the rail's cache. */
typedef struct mca_common_umr_region {
    ucs_rcache_region_t   super;
    mca_common_umr_rail_t *rail;
    uct_mem_h             memh;       /* the whole region, contiguous */
    ucs_list_link_t       lkeys;
    int                   nlkeys;
    int                   uncached;   /* no cache: registered for one use */
} mca_common_umr_region_t;

/* The rail's registration cache (none: every message registers), made at
 * its first registration. */
OMPI_DECLSPEC int  mca_common_umr_keys_init(mca_common_umr_rail_t *rail);
OMPI_DECLSPEC void mca_common_umr_keys_fini(mca_common_umr_rail_t *rail);

/* The registered region that covers [lo, lo + len), held until put, for
 * `prot`: PROT_READ, memory the NIC only reads (a send buffer, which may be
 * a read-only mapping: registered for remote reads alone), or PROT_READ |
 * PROT_WRITE (a receive buffer, a window). *why_p (may be NULL): the reason
 * of a refusal (above). */
OMPI_DECLSPEC int
mca_common_umr_region_get(mca_common_umr_rail_t *rail, void *lo, size_t len,
                          int prot, mca_common_umr_region_t **region_p,
                          const char **why_p);
OMPI_DECLSPEC void mca_common_umr_region_put(mca_common_umr_region_t *region);

/* The layout key of (base, layout, count) over `region` (held by the
 * caller; the key addresses its registration, nothing is pinned again) for
 * `prot` (PROT_READ: peers read through it; | PROT_WRITE: and write), made
 * once; in use until mca_common_umr_lkey_put. */
OMPI_DECLSPEC int  mca_common_umr_lkey_get(mca_common_umr_region_t *region,
                                           void *base,
                                           const umr_layout_t *layout,
                                           size_t count, int prot,
                                           mca_common_umr_lkey_t **lkey_p,
                                           const char **why_p);
OMPI_DECLSPEC void mca_common_umr_lkey_put(mca_common_umr_lkey_t *lkey);

/* The region that covers the bytes `count` elements of `layout` at `base`
 * (NULL: displacements that are addresses, MPI_BOTTOM) touch, held until
 * put. */
OMPI_DECLSPEC int
mca_common_umr_region_acquire(mca_common_umr_rail_t *rail, void *base,
                              const umr_layout_t *layout, size_t count,
                              int prot, mca_common_umr_region_t **region_p,
                              const char **why_p);

/* That region and the layout key of (base, layout, count) over it, held
 * until mca_common_umr_lkey_release (or _drop): what a zero-copy send, or
 * a target's window, registers. */
OMPI_DECLSPEC int
mca_common_umr_lkey_acquire(mca_common_umr_rail_t *rail, void *base,
                            const umr_layout_t *layout, size_t count,
                            int prot, mca_common_umr_region_t **region_p,
                            mca_common_umr_lkey_t **lkey_p,
                            const char **why_p);
OMPI_DECLSPEC void mca_common_umr_lkey_release(mca_common_umr_region_t *region,
                                               mca_common_umr_lkey_t *lkey);
/* Released for good (its window is freed, its memory detached): its keys go
 * back to the pool now, unless another operation holds the same key. */
OMPI_DECLSPEC void mca_common_umr_lkey_drop(mca_common_umr_region_t *region,
                                            mca_common_umr_lkey_t *lkey);

END_C_DECLS

#endif
