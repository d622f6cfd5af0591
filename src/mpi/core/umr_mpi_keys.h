/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: registration cache and layout keys, per rail.
 *
 * Each rail keeps a UCS registration cache (ucs_rcache) of contiguous
 * regions, invalidated by UCM's memory events when the memory is unmapped
 * (freed, munmap), so a freed and reused buffer never reaches an old
 * registration: one registration per buffer. A region also holds the
 * layout keys made over it (sender side; a window's target keys), each
 * keyed by (base, count, layout contents): a datatype that was freed and
 * another one allocated at the same address with a different layout never
 * share a key. Layout keys go with their region.
 */
#ifndef UMR_MPI_KEYS_H_
#define UMR_MPI_KEYS_H_

#include "umr_mpi_rail.h"
#include "umr_mpi_type.h"

#include <ucs/datastruct/list.h>
#include <ucs/memory/rcache.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A layout key over a registered region. */
typedef struct umr_mpi_lkey {
    ucs_list_link_t  list;          /* in region->lkeys, most recent first */
    umr_layout_t     *layout;       /* own copy: the key is its contents */
    void             *base;
    size_t           count;
    uct_mem_h        memh;
    int              refs;          /* users now (sends in flight) */
    uint8_t          rkey[UMR_MPI_MAX_RKEY];
} umr_mpi_lkey_t;

/* A registered region of the rail's cache. */
typedef struct umr_mpi_region {
    ucs_rcache_region_t   super;
    umr_mpi_rail_t        *rail;
    uct_mem_h             memh;       /* the whole region, contiguous */
    ucs_list_link_t       lkeys;
    int                   nlkeys;
    int                   uncached;   /* no cache: registered for one use */
} umr_mpi_region_t;

/* The rail's registration cache (none: every use registers), made at its
 * first registration. */
void umr_mpi_keys_init(umr_mpi_rail_t *rail);
void umr_mpi_keys_fini(umr_mpi_rail_t *rail);

/* The registered region that covers [lo, lo + len), held until put. */
ucs_status_t umr_mpi_region_get(umr_mpi_rail_t *rail, void *lo, size_t len,
                                umr_mpi_region_t **region_p);
void         umr_mpi_region_put(umr_mpi_region_t *region);

/* The region that covers the bytes `count` elements of `t` (with a
 * layout) at `base` touch, held until put. */
ucs_status_t umr_mpi_region_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_mpi_dtype_t *t, size_t count,
                                    umr_mpi_region_t **region_p);

/* The layout key of (base, layout, count) over `region` (held by the
 * caller), made once; in use until umr_mpi_lkey_put. UCS_ERR_EXCEEDS_LIMIT:
 * the layout is beyond the rail's key budget or the key pool is dry
 * (nothing logged: the caller falls back); an md UMR timeout or a dead port
 * also retires the rail (umr_mpi_rail_retire). */
ucs_status_t umr_mpi_lkey_get(umr_mpi_region_t *region, void *base,
                              const umr_layout_t *layout, size_t count,
                              umr_mpi_lkey_t **lkey_p);
void         umr_mpi_lkey_put(umr_mpi_lkey_t *lkey);

/* Both at once, held until umr_mpi_lkey_release: what a zero-copy send
 * registers. */
ucs_status_t umr_mpi_lkey_acquire(umr_mpi_rail_t *rail, void *base,
                                  const umr_mpi_dtype_t *t, size_t count,
                                  umr_mpi_region_t **region_p,
                                  umr_mpi_lkey_t **lkey_p);
void         umr_mpi_lkey_release(umr_mpi_region_t *region,
                                  umr_mpi_lkey_t *lkey);

#ifdef __cplusplus
}
#endif

#endif
