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
 * share a key. Layout keys go with their region, and give their keys of
 * the transport's pool back when it runs short: the least recently used
 * key no operation holds first (uct_umr_md_reclaim_set). A key whose window
 * or memory is gone is given back at once (umr_mpi_lkey_drop).
 *
 * A layout that cannot get a key is a decision, not an error: the calls
 * that make keys return UCS_ERR_EXCEEDS_LIMIT (not on this rail, for good:
 * beyond the limits of a key, memory that does not register as one region)
 * or UCS_ERR_NO_RESOURCE (not now: the key pool's keys in use, out of
 * memory), with a reason for the caller's one line, and log nothing;
 * the _acquire calls say UCS_ERR_UNSUPPORTED where the memory of one
 * buffer does not register (a read-only shared mapping on Linux < 6.2):
 * that buffer's messages, not the type's, pass;
 * another error only when the rail fails.
 */
#ifndef UMR_MPI_KEYS_H_
#define UMR_MPI_KEYS_H_

#include "umr_mpi_allocs.h"
#include "umr_mpi_rail.h"
#include "umr_mpi_type.h"

#include <ucs/datastruct/list.h>
#include <ucs/memory/rcache.h>

#include <sys/mman.h>   /* PROT_READ, PROT_WRITE */

#ifdef __cplusplus
extern "C" {
#endif

/* A layout key over a registered region. */
typedef struct umr_mpi_lkey {
    ucs_list_link_t  list;          /* in region->lkeys, most recent first */
    ucs_list_link_t  idle;          /* in rail->idle_lkeys while refs == 0 */
    struct umr_mpi_region *region;
    umr_layout_t     *layout;       /* own copy: the key is its contents */
    uint64_t         type_id;       /* the summary it last matched (its id,
                                       umr_mpi_type.h; 0: none) */
    void             *base;
    size_t           count;
    int              prot;          /* PROT_READ: peers only read through
                                       it; | PROT_WRITE: they write too */
    uct_mem_h        memh;          /* over the region's memh */
    int              refs;          /* users now (sends in flight) */
    uint8_t          rkey[UMR_MPI_MAX_RKEY];
    unsigned         nmore;         /* blocks in other allocations: */
    struct umr_mpi_region *more[UMR_MPI_MAX_ALLOCS - 1]; /* their regions,
                                       held by the key (umr_mpi_allocs.h) */
} umr_mpi_lkey_t;

/* A registered region of the rail's cache. */
typedef struct umr_mpi_region {
    ucs_rcache_region_t   super;
    umr_mpi_rail_t        *rail;
    uct_mem_h             memh;       /* the whole region, contiguous */
    ucs_list_link_t       lkeys;
    int                   nlkeys;
    int                   uncached;   /* no cache: registered for one use */
    ucs_list_link_t       deferred;   /* in rail->deferred_puts while */
    unsigned              ndeferred;  /* puts wait (a key over several
                                         allocations freed from inside the
                                         cache, which holds its lock) */
} umr_mpi_region_t;

/* The rail's registration cache (none: every use registers), made at its
 * first registration. */
ucs_status_t umr_mpi_keys_init(umr_mpi_rail_t *rail);
void umr_mpi_keys_fini(umr_mpi_rail_t *rail);

/* The registered region that covers [lo, lo + len), held until put, for
 * `prot`: PROT_READ, memory the NIC only reads (a send buffer, which may be
 * a read-only mapping: registered for remote reads alone), or PROT_READ |
 * PROT_WRITE (a receive buffer, a window). *why_p (may be NULL): the reason
 * of a refusal (above). */
ucs_status_t umr_mpi_region_get(umr_mpi_rail_t *rail, void *lo, size_t len,
                                int prot, umr_mpi_region_t **region_p,
                                const char **why_p);
void         umr_mpi_region_put(umr_mpi_region_t *region);

/* The region that covers the bytes `count` elements of `t` (with a
 * layout) at `base` touch, held until put. */
ucs_status_t umr_mpi_region_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_mpi_dtype_t *t, size_t count,
                                    int prot, umr_mpi_region_t **region_p,
                                    const char **why_p);

/* The region (as umr_mpi_region_acquire) and the layout key of (base, the
 * layout of `t`, count) over it for `prot` (PROT_READ: peers read through
 * it; | PROT_WRITE: and write), held until umr_mpi_lkey_release (or _drop):
 * what a zero-copy send, or a target's window, registers. The key
 * addresses the region's registration (nothing is pinned again) and is
 * made once (found again by the summary's id, else by the layout's
 * contents). Where the bytes do not register as one region (blocks in
 * separate allocations), each allocation is registered and the key joins
 * them (umr_mpi_allocs.h): *region_p is then the first one's. A refusal as
 * above; an md UMR timeout or a dead port also retires the rail
 * (umr_mpi_rail_retire). */
ucs_status_t umr_mpi_lkey_acquire(umr_mpi_rail_t *rail, void *base,
                                  const umr_mpi_dtype_t *t, size_t count,
                                  int prot, umr_mpi_region_t **region_p,
                                  umr_mpi_lkey_t **lkey_p, const char **why_p);
void         umr_mpi_lkey_release(umr_mpi_region_t *region,
                                  umr_mpi_lkey_t *lkey);

/* The local side of an operation on `count` elements of `t` at `base`: the
 * region that covers them (*lkey_p NULL), or, where their bytes do not
 * register as one region, the first allocation's region and a layout key
 * joining every allocation, whose handle is the local one (*lkey_p). Held
 * until umr_mpi_local_release. Refusals as umr_mpi_region_acquire. */
ucs_status_t umr_mpi_local_acquire(umr_mpi_rail_t *rail, void *base,
                                   const umr_mpi_dtype_t *t, size_t count,
                                   int prot, umr_mpi_region_t **region_p,
                                   umr_mpi_lkey_t **lkey_p,
                                   const char **why_p);
void         umr_mpi_local_release(umr_mpi_region_t *region,
                                   umr_mpi_lkey_t *lkey);
/* Released for good (its window is freed, its memory detached): its keys go
 * back to the pool now, unless another operation holds the same key. */
void         umr_mpi_lkey_drop(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey);

#ifdef __cplusplus
}
#endif

#endif
