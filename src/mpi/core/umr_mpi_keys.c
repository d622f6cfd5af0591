/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: registration cache and layout keys (see
 * umr_mpi_keys.h): a time-step loop registers its buffers once; idle
 * layout keys give their keys back when the transport's key pool runs
 * short.
 */
#include "umr_mpi_keys.h"

#include "uct_umr.h"
#include "umr_ucs_compat.h"

#include <ucs/memory/rcache.h>
#include <ucs/sys/sys.h>
#include <ucm/api/ucm.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Layout keys kept per region beyond those in use. */
#define UMR_MPI_LKEYS_PER_REGION 16

/* What a registration's `status` means to the caller (umr_mpi_keys.h):
 * UCS_ERR_EXCEEDS_LIMIT, the layout never gets a key on this rail;
 * UCS_ERR_NO_RESOURCE, not now; else the rail fails. *why_p says why
 * (`layout_key`: of the layout key, else of the memory). */
static ucs_status_t umr_mpi_keys_refusal(ucs_status_t status, int layout_key,
                                         const char **why_p)
{
    const char *why;
    ucs_status_t ret;

    switch (status) {
    case UCS_ERR_EXCEEDS_LIMIT:
        ret = UCS_ERR_EXCEEDS_LIMIT;
        why = layout_key ? "beyond what one layout key takes (the device's "
                           "limits, UCX_MLX5_UMR_MKEY_POOL_SIZE)" :
                           "the memory it spans does not register as one "
                           "region";
        break;
    case UCS_ERR_INVALID_ADDR:
    case UCS_ERR_INVALID_PARAM:
        ret = UCS_ERR_EXCEEDS_LIMIT;
        why = "the memory it spans does not register as one region "
              "(separate allocations?)";
        break;
    case UCS_ERR_NO_RESOURCE:
        ret = UCS_ERR_NO_RESOURCE;
        why = "the key pool's keys are in use (UCX_MLX5_UMR_MKEY_POOL_SIZE)";
        break;
    case UCS_ERR_NO_MEMORY:
        ret = UCS_ERR_NO_RESOURCE;
        why = "out of memory to register it";
        break;
    default:
        ret = (status == UCS_OK) ? UCS_ERR_IO_ERROR : status;
        why = ucs_status_string(status);
        break;
    }
    if (why_p != NULL) {
        *why_p = why;
    }
    return ret;
}

/* What memory of protection `prot` is registered for: a buffer peers only
 * read (PROT_READ) for remote reads alone, which a read-only mapping takes
 * (write access pins pages for writing: the kernel refuses that there). */
static unsigned umr_mpi_access(int prot, unsigned rw)
{
    return (prot & PROT_WRITE) ? rw : (UCT_MD_MEM_ACCESS_REMOTE_GET |
                                       UCT_MD_MEM_ACCESS_LOCAL_READ);
}

static ucs_status_t umr_mpi_region_reg(void *context,
                                       ucs_rcache_t *rcache, void *arg,
                                       ucs_rcache_region_t *rregion,
                                       uint16_t flags)
{
    umr_mpi_rail_t *rail     = context;
    umr_mpi_region_t *region = ucs_derived_of(rregion,
                                              umr_mpi_region_t);
    ucs_status_t status;

    region->rail     = rail;
    region->nlkeys   = 0;
    region->uncached = (arg != NULL); /* see umr_mpi_region_get */
    region->ndeferred = 0;
    ucs_list_head_init(&region->lkeys);
    /* memory that does not register is the caller's decision (it passes
     * through): its status, no error line */
    status = uct_md_mem_reg(rail->md, (void*)region->super.super.start,
                            region->super.super.end - region->super.super.start,
                            umr_mpi_access(region->super.prot,
                                           UCT_MD_MEM_ACCESS_ALL) |
                            UCT_MD_MEM_FLAG_HIDE_ERRORS, &region->memh);
    if (status != UCS_OK) {
        return status;
    }
    ++umr_mpi.cnt.keys_live;
    ++umr_mpi.cnt.reg_misses;
    return UCS_OK;
}

/* A put of a region that may come from inside the registration cache (a
 * region's mem_dereg frees its layout keys, with the cache's lock held):
 * done at the next umr_mpi_region_get, or at the rail's end. */
static void umr_mpi_region_put_later(umr_mpi_region_t *region)
{
    if (region->ndeferred++ == 0) {
        ucs_list_add_tail(&region->rail->deferred_puts, &region->deferred);
    }
}

static void umr_mpi_keys_put_deferred(umr_mpi_rail_t *rail)
{
    umr_mpi_region_t *region;
    unsigned n;

    while (!ucs_list_is_empty(&rail->deferred_puts)) {
        region = ucs_list_extract_head(&rail->deferred_puts,
                                       umr_mpi_region_t, deferred);
        n = region->ndeferred;
        region->ndeferred = 0;
        while (n-- > 0) {
            umr_mpi_region_put(region);
        }
    }
}

static void umr_mpi_lkey_free(umr_mpi_region_t *region,
                              umr_mpi_lkey_t *lkey)
{
    unsigned i;

    if (lkey->refs == 0) {
        ucs_list_del(&lkey->idle);
    }
    ucs_list_del(&lkey->list);
    --region->nlkeys;
    uct_md_mem_dereg(region->rail->md, lkey->memh);
    for (i = 0; i < lkey->nmore; ++i) {
        umr_mpi_region_put_later(lkey->more[i]);
    }
    umr_layout_free(lkey->layout);
    free(lkey);
    --umr_mpi.cnt.keys_live;
}

static void umr_mpi_region_dereg(void *context, ucs_rcache_t *rcache,
                                 ucs_rcache_region_t *rregion)
{
    umr_mpi_region_t *region = ucs_derived_of(rregion,
                                              umr_mpi_region_t);
    umr_mpi_lkey_t *lkey, *tmp;

    /* no layout key is in use: its send holds the region */
    ucs_list_for_each_safe(lkey, tmp, &region->lkeys, list) {
        umr_mpi_lkey_free(region, lkey);
    }
    uct_md_mem_dereg(region->rail->md, region->memh);
    --umr_mpi.cnt.keys_live;
}

static void umr_mpi_region_dump(void *context, ucs_rcache_t *rcache,
                                ucs_rcache_region_t *rregion, char *buf,
                                size_t max)
{
    umr_mpi_region_t *region = ucs_derived_of(rregion,
                                              umr_mpi_region_t);

    snprintf(buf, max, "memh %p, %d layout keys", region->memh,
             region->nlkeys);
}

#ifdef HAVE_UCS_RCACHE_OPS_T_MERGE
/* UCX 1.18 calls merge unconditionally before a new region swallows an
 * overlapping one. Nothing carries over: the old region is invalidated, and
 * its layout keys go with its memory handle when its last user puts it. */
static void umr_mpi_region_merge(void *context, ucs_rcache_t *rcache,
                                 void *arg, ucs_rcache_region_t *rregion)
{
}
#endif

static const ucs_rcache_ops_t umr_mpi_rcache_ops = {
    .mem_reg     = umr_mpi_region_reg,
    .mem_dereg   = umr_mpi_region_dereg,
#ifdef HAVE_UCS_RCACHE_OPS_T_MERGE
    .merge       = umr_mpi_region_merge,
#endif
    .dump_region = umr_mpi_region_dump
};

/* The cache adds a UCM handler for unmaps. It is made at the rail's first
 * registration: after the binding marked those events external, if it
 * feeds them from its MPI's memory hooks (Open MPI: common_umr_memhooks.h;
 * a handler added before would keep UCM's own hooks), and never in a job
 * whose messages all pass through. */
static void umr_mpi_keys_cache(umr_mpi_rail_t *rail)
{
    ucs_rcache_params_t params;
    ucs_status_t status;

    rail->rcache_tried = 1;
    memset(&params, 0, sizeof(params));
    params.region_struct_size = sizeof(umr_mpi_region_t);
    umr_ucs_rcache_params_alignment(&params, ucs_get_page_size());
    params.ucm_events         = UCM_EVENT_VM_UNMAPPED;
    params.ucm_event_priority = 1000;
    params.ops                = &umr_mpi_rcache_ops;
    params.context            = rail;
    params.flags              = 0;
    params.max_regions        = ULONG_MAX;
    params.max_size           = SIZE_MAX;
    params.max_unreleased     = SIZE_MAX;
    status = ucs_rcache_create(&params, umr_mpi.b->name, NULL,
                               &rail->rcache);
    if (status != UCS_OK) {
        /* e.g. no memory events (valgrind, UCX_MEM_EVENTS=n): every
         * message registers and deregisters its memory */
        UMR_MPI_VERBOSE(1, "no registration cache for rail %s (%s): "
                        "registering per message", rail->name,
                        ucs_status_string(status));
        rail->rcache = NULL;
    }
}

/* The transport's key pool runs short (uct_umr_md_reclaim_set): the least
 * recently used layout key no operation holds gives its keys back. */
static int umr_mpi_keys_reclaim(void *arg)
{
    umr_mpi_rail_t *rail = arg;
    umr_mpi_lkey_t *lkey;

    if (ucs_list_is_empty(&rail->idle_lkeys)) {
        return 0;
    }
    lkey = ucs_list_tail(&rail->idle_lkeys, umr_mpi_lkey_t, idle);
    umr_mpi_lkey_free(lkey->region, lkey);
    ++umr_mpi.cnt.keys_reclaimed;
    return 1;
}

ucs_status_t umr_mpi_keys_init(umr_mpi_rail_t *rail)
{
    rail->rcache       = NULL;   /* at the first registration */
    rail->rcache_tried = 0;
    rail->nalloc_cuts  = 0;
    ucs_list_head_init(&rail->idle_lkeys);
    ucs_list_head_init(&rail->deferred_puts);
    ucs_list_head_init(&rail->alloc_cuts);
    return uct_umr_md_reclaim_set(rail->md, umr_mpi_keys_reclaim, rail);
}

void umr_mpi_keys_fini(umr_mpi_rail_t *rail)
{
    umr_mpi_lkey_t *lkey;

    /* keys first: those joining allocations hold the regions of the
     * others, which the cache would find in use */
    while (!ucs_list_is_empty(&rail->idle_lkeys)) {
        lkey = ucs_list_head(&rail->idle_lkeys, umr_mpi_lkey_t, idle);
        umr_mpi_lkey_free(lkey->region, lkey);
    }
    umr_mpi_keys_put_deferred(rail);
    umr_mpi_allocs_fini(rail);
    if (rail->rcache != NULL) {
        ucs_rcache_destroy(rail->rcache);
        rail->rcache = NULL;
    }
    ucs_list_head_init(&rail->deferred_puts);   /* gone with the cache */
}

/* The cache keeps a region's protection: a region registered for reads
 * that is needed for writes (a receive into a buffer sent from before) is
 * registered again for both, and replaces it (ucs_rcache). */
ucs_status_t umr_mpi_region_get(umr_mpi_rail_t *rail, void *lo, size_t len,
                                int prot, umr_mpi_region_t **region_p,
                                const char **why_p)
{
    umr_mpi_region_t *region;
    ucs_rcache_region_t *rregion;
    ucs_status_t status;
    uint64_t misses = umr_mpi.cnt.reg_misses;

    if (ucs_unlikely(!rail->rcache_tried)) {
        umr_mpi_keys_cache(rail);
    }
    if (ucs_unlikely(!ucs_list_is_empty(&rail->deferred_puts))) {
        umr_mpi_keys_put_deferred(rail);
    }
    if (rail->rcache == NULL) {
        region = calloc(1, sizeof(*region));
        if (region == NULL) {
            return umr_mpi_keys_refusal(UCS_ERR_NO_MEMORY, 0, why_p);
        }
        region->super.super.start = (uintptr_t)lo;
        region->super.super.end   = (uintptr_t)lo + len;
        region->super.prot        = prot;
        status = umr_mpi_region_reg(rail, NULL, (void*)1, &region->super, 0);
        if (status != UCS_OK) {
            free(region);
            goto refused;
        }
        *region_p = region;
        return UCS_OK;
    }
    status = umr_ucs_rcache_get(rail->rcache, lo, len, ucs_get_page_size(),
                                prot, NULL, &rregion);
    if (status != UCS_OK) {
        goto refused;
    }
    umr_mpi.cnt.reg_hits += (misses == umr_mpi.cnt.reg_misses);
    *region_p = ucs_derived_of(rregion, umr_mpi_region_t);
    return UCS_OK;

refused:
    UMR_MPI_VERBOSE(10, "registering %zu bytes at %p: %s", len, lo,
                    ucs_status_string(status));
    return umr_mpi_keys_refusal(status, 0, why_p);
}

void umr_mpi_region_put(umr_mpi_region_t *region)
{
    if (region->uncached) {
        umr_mpi_region_dereg(region->rail, NULL, &region->super);
        free(region);
        return;
    }
    ucs_rcache_region_put(region->rail->rcache, &region->super);
}

/* The key joins these regions of other allocations. */
static int umr_mpi_lkey_over(const umr_mpi_lkey_t *lkey,
                             umr_mpi_region_t *const *more, unsigned nmore)
{
    return (lkey->nmore == nmore) &&
           ((nmore == 0) ||
            !memcmp(lkey->more, more, nmore * sizeof(*more)));
}

/* No operation holds the key, and memory of another allocation it joins is
 * gone (unmapped: out of the cache, which has registered it anew): it
 * would never be found again. */
static int umr_mpi_lkey_stale(const umr_mpi_lkey_t *lkey)
{
    unsigned i;

    if (lkey->refs > 0) {
        return 0;
    }
    for (i = 0; i < lkey->nmore; ++i) {
        if (!lkey->more[i]->uncached &&
            !(lkey->more[i]->super.flags & UCS_RCACHE_REGION_FLAG_PGTABLE)) {
            return 1;
        }
    }
    return 0;
}

/* Whether `lkey` is of the layout of `t`: the summary it matched last
 * (ids are never reused), or the same contents (then it is `t`'s). */
static int umr_mpi_lkey_is_of(umr_mpi_lkey_t *lkey, const umr_mpi_dtype_t *t)
{
    if ((t->id != 0) && (lkey->type_id == t->id)) {
        return 1;
    }
    if (!umr_layout_equal(lkey->layout, t->layout)) {
        return 0;
    }
    lkey->type_id = t->id;
    return 1;
}

/* The layout key of (base, the layout of `t`, count) over regions[0..n)
 * (held by the caller; those after the first are the key's from now on)
 * for `prot`, made once; in use until umr_mpi_lkey_put. */
static ucs_status_t umr_mpi_lkey_get_over(umr_mpi_region_t **regions,
                                          unsigned n, void *base,
                                          const umr_mpi_dtype_t *t,
                                          size_t count, int prot,
                                          umr_mpi_lkey_t **lkey_p,
                                          const char **why_p)
{
    const umr_layout_t *layout = t->layout;
    umr_mpi_region_t *region = regions[0];
    umr_mpi_rail_t *rail     = region->rail;
    uct_mem_h memhs[UMR_MPI_MAX_ALLOCS];
    umr_mpi_lkey_t *lkey, *tmp;
    ucs_status_t status;
    unsigned i;

    ucs_list_for_each_safe(lkey, tmp, &region->lkeys, list) {
        if (umr_mpi_lkey_stale(lkey)) {
            umr_mpi_lkey_free(region, lkey);
            continue;
        }
        if ((lkey->base == base) && (lkey->count == count) &&
            ((lkey->prot & prot) == prot) &&
            umr_mpi_lkey_over(lkey, regions + 1, n - 1) &&
            umr_mpi_lkey_is_of(lkey, t)) {
            /* the key holds the other regions already */
            for (i = 1; i < n; ++i) {
                umr_mpi_region_put(regions[i]);
            }
            /* most recently used first */
            ucs_list_del(&lkey->list);
            ucs_list_add_head(&region->lkeys, &lkey->list);
            if (lkey->refs++ == 0) {
                ucs_list_del(&lkey->idle);
            }
            ++umr_mpi.cnt.lkey_hits;
            *lkey_p = lkey;
            return UCS_OK;
        }
    }

    /* keep the list short: drop least recently used keys not in use */
    while (region->nlkeys >= UMR_MPI_LKEYS_PER_REGION) {
        lkey = ucs_list_tail(&region->lkeys, umr_mpi_lkey_t, list);
        if (lkey->refs > 0) {
            break;
        }
        umr_mpi_lkey_free(region, lkey);
    }

    lkey = calloc(1, sizeof(*lkey));
    if (lkey == NULL) {
        return umr_mpi_keys_refusal(UCS_ERR_NO_MEMORY, 1, why_p);
    }
    status = umr_layout_dup(layout, &lkey->layout);
    if (status != UCS_OK) {
        status = umr_mpi_keys_refusal(status, 1, why_p);
        goto err_free;
    }
    /* over the regions' registrations: their pages are pinned once. A
     * layout beyond the key budget, or a dry key pool, is a status the
     * caller falls back on, not an error line */
    for (i = 0; i < n; ++i) {
        memhs[i] = regions[i]->memh;
    }
    status = uct_umr_mem_reg_over(rail->md, base, layout, count, memhs, n,
                                  umr_mpi_access(prot, UCT_MD_MEM_ACCESS_RMA) |
                                  UCT_MD_MEM_FLAG_HIDE_ERRORS, &lkey->memh);
    if (status != UCS_OK) {
        UMR_MPI_VERBOSE(10, "layout registration failed (%s)",
                        ucs_status_string(status));
        if ((status == UCS_ERR_TIMED_OUT) || !umr_mpi_rail_alive(rail)) {
            /* the md's UMRs time out, or its port is down: not this
             * layout's fault, nor one peer's */
            umr_mpi_rail_retire(rail, ucs_status_string(status));
            (void)umr_mpi_keys_refusal(status, 1, why_p);
            status = UCS_ERR_IO_ERROR;
        } else {
            status = umr_mpi_keys_refusal(status, 1, why_p);
        }
        goto err_layout;
    }
    status = uct_md_mkey_pack(rail->md, lkey->memh, lkey->rkey);
    if (status != UCS_OK) {
        uct_md_mem_dereg(rail->md, lkey->memh);
        status = umr_mpi_keys_refusal(status, 1, why_p);
        goto err_layout;
    }
    lkey->region = region;
    lkey->base   = base;
    lkey->count  = count;
    lkey->prot   = prot;
    lkey->refs    = 1;
    lkey->type_id = t->id;
    lkey->nmore   = n - 1;
    memcpy(lkey->more, regions + 1, (n - 1) * sizeof(*regions));
    ucs_list_add_head(&region->lkeys, &lkey->list);
    ++region->nlkeys;
    ++umr_mpi.cnt.keys_live;
    ++umr_mpi.cnt.lkey_misses;
    *lkey_p = lkey;
    return UCS_OK;

err_layout:
    umr_layout_free(lkey->layout);
err_free:
    free(lkey);
    return status;
}

static void umr_mpi_lkey_put(umr_mpi_lkey_t *lkey)
{
    if (--lkey->refs == 0) {
        /* most recently used first: the pool takes the tail */
        ucs_list_add_head(&lkey->region->rail->idle_lkeys, &lkey->idle);
    }
}

ucs_status_t umr_mpi_region_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_mpi_dtype_t *t, size_t count,
                                    int prot, umr_mpi_region_t **region_p,
                                    const char **why_p)
{
    ptrdiff_t lo, hi;
    ucs_status_t status;

    if (umr_mpi_dtype_span(t, count, &lo, &hi) != 0) {
        return umr_mpi_keys_refusal(UCS_ERR_INVALID_ADDR, 0, why_p);
    }
    status = umr_mpi_region_get(rail, (char*)base + lo, hi - lo, prot,
                                region_p, why_p);
    /* memory that does not register is the type's when its displacements
     * are addresses (MPI_BOTTOM), else this buffer's alone */
    return ((status == UCS_ERR_EXCEEDS_LIMIT) && (base != NULL)) ?
           UCS_ERR_UNSUPPORTED : status;
}

/* Registrations of a layout's allocations (umr_mpi_allocs.h). */
typedef struct {
    umr_mpi_rail_t   *rail;
    int              prot;
    umr_mpi_region_t **regions;
} umr_mpi_allocs_arg_t;

static int umr_mpi_allocs_reg(void *arg, unsigned i, void *lo, size_t len)
{
    umr_mpi_allocs_arg_t *a = arg;

    return (umr_mpi_region_get(a->rail, lo, len, a->prot, &a->regions[i],
                               NULL) == UCS_OK) ? 0 : -1;
}

static void umr_mpi_regions_put(umr_mpi_region_t **regions, unsigned n)
{
    while (n-- > 0) {
        umr_mpi_region_put(regions[n]);
    }
}

static void umr_mpi_allocs_unreg(void *arg, unsigned n)
{
    umr_mpi_regions_put(((umr_mpi_allocs_arg_t*)arg)->regions, n);
}

/* The regions the bytes of (base, t, count) lie in, held: the one of its
 * span, or those of its allocations (umr_mpi_allocs.h). */
static ucs_status_t umr_mpi_regions_acquire(umr_mpi_rail_t *rail, void *base,
                                            const umr_mpi_dtype_t *t,
                                            size_t count, int prot,
                                            umr_mpi_region_t **regions,
                                            unsigned *n_p, const char **why_p)
{
    umr_mpi_allocs_arg_t a = {rail, prot, regions};
    ucs_status_t status;

    if (ucs_unlikely(!ucs_list_is_empty(&rail->alloc_cuts)) &&
        (umr_mpi_allocs_acquire(rail, base, t->layout, count,
                                umr_mpi_allocs_reg, umr_mpi_allocs_unreg, &a,
                                n_p, NULL) == UCS_OK)) {
        return UCS_OK;   /* cut before: the span is not tried again */
    }
    *n_p   = 1;
    status = umr_mpi_region_acquire(rail, base, t, count, prot, regions,
                                    why_p);
    if (((status == UCS_ERR_EXCEEDS_LIMIT) ||
         (status == UCS_ERR_UNSUPPORTED)) && (t->layout != NULL) &&
        (umr_mpi_allocs_acquire(rail, base, t->layout, count,
                                umr_mpi_allocs_reg, umr_mpi_allocs_unreg, &a,
                                n_p, why_p) == UCS_OK)) {
        return UCS_OK;
    }
    return status;   /* the span's refusal, with the cut's reason */
}

/* Regions and, where wanted or their allocations are several, the key
 * joining them (umr_mpi_lkey_acquire, umr_mpi_local_acquire). */
static ucs_status_t umr_mpi_keys_acquire(umr_mpi_rail_t *rail, void *base,
                                         const umr_mpi_dtype_t *t,
                                         size_t count, int prot, int want_key,
                                         umr_mpi_region_t **region_p,
                                         umr_mpi_lkey_t **lkey_p,
                                         const char **why_p)
{
    umr_mpi_region_t *regions[UMR_MPI_MAX_ALLOCS];
    ucs_status_t status;
    unsigned n;

    *region_p = NULL;
    *lkey_p   = NULL;
    status    = umr_mpi_regions_acquire(rail, base, t, count, prot, regions,
                                        &n, why_p);
    if (status != UCS_OK) {
        return status;
    }
    if (want_key || (n > 1)) {
        status = umr_mpi_lkey_get_over(regions, n, base, t, count, prot,
                                       lkey_p, why_p);
        if (status != UCS_OK) {
            umr_mpi_regions_put(regions, n);
            return status;
        }
    }
    *region_p = regions[0];
    return UCS_OK;
}

ucs_status_t umr_mpi_lkey_acquire(umr_mpi_rail_t *rail, void *base,
                                  const umr_mpi_dtype_t *t, size_t count,
                                  int prot, umr_mpi_region_t **region_p,
                                  umr_mpi_lkey_t **lkey_p, const char **why_p)
{
    return umr_mpi_keys_acquire(rail, base, t, count, prot, 1, region_p,
                                lkey_p, why_p);
}

ucs_status_t umr_mpi_local_acquire(umr_mpi_rail_t *rail, void *base,
                                   const umr_mpi_dtype_t *t, size_t count,
                                   int prot, umr_mpi_region_t **region_p,
                                   umr_mpi_lkey_t **lkey_p,
                                   const char **why_p)
{
    return umr_mpi_keys_acquire(rail, base, t, count, prot, 0, region_p,
                                lkey_p, why_p);
}

void umr_mpi_local_release(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey)
{
    if (lkey != NULL) {
        umr_mpi_lkey_put(lkey);
    }
    umr_mpi_region_put(region);
}

void umr_mpi_lkey_release(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey)
{
    umr_mpi_lkey_put(lkey);
    umr_mpi_region_put(region);
}

void umr_mpi_lkey_drop(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey)
{
    umr_mpi_lkey_put(lkey);
    if (lkey->refs == 0) {
        umr_mpi_lkey_free(region, lkey);
    }
    umr_mpi_region_put(region);
}
