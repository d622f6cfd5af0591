/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr MPI core: registration cache and layout keys (see
 * umr_mpi_keys.h): a time-step loop registers its buffers once.
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
    ucs_list_head_init(&region->lkeys);
    status = uct_md_mem_reg(rail->md, (void*)region->super.super.start,
                            region->super.super.end - region->super.super.start,
                            UCT_MD_MEM_ACCESS_ALL, &region->memh);
    if (status != UCS_OK) {
        return status;
    }
    ++umr_mpi.cnt.keys_live;
    ++umr_mpi.cnt.reg_misses;
    return UCS_OK;
}

static void umr_mpi_lkey_free(umr_mpi_region_t *region,
                              umr_mpi_lkey_t *lkey)
{
    ucs_list_del(&lkey->list);
    --region->nlkeys;
    uct_md_mem_dereg(region->rail->md, lkey->memh);
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

void umr_mpi_keys_init(umr_mpi_rail_t *rail)
{
    rail->rcache       = NULL;   /* at the first registration */
    rail->rcache_tried = 0;
}

void umr_mpi_keys_fini(umr_mpi_rail_t *rail)
{
    if (rail->rcache != NULL) {
        ucs_rcache_destroy(rail->rcache);
        rail->rcache = NULL;
    }
}

ucs_status_t umr_mpi_region_get(umr_mpi_rail_t *rail, void *lo, size_t len,
                                umr_mpi_region_t **region_p)
{
    umr_mpi_region_t *region;
    ucs_rcache_region_t *rregion;
    ucs_status_t status;
    uint64_t misses = umr_mpi.cnt.reg_misses;

    if (ucs_unlikely(!rail->rcache_tried)) {
        umr_mpi_keys_cache(rail);
    }
    if (rail->rcache == NULL) {
        region = calloc(1, sizeof(*region));
        if (region == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        region->super.super.start = (uintptr_t)lo;
        region->super.super.end   = (uintptr_t)lo + len;
        status = umr_mpi_region_reg(rail, NULL, (void*)1, &region->super, 0);
        if (status != UCS_OK) {
            free(region);
            return status;
        }
        *region_p = region;
        return UCS_OK;
    }
    status = umr_ucs_rcache_get(rail->rcache, lo, len, ucs_get_page_size(),
                                PROT_READ | PROT_WRITE, NULL, &rregion);
    if (status != UCS_OK) {
        UMR_MPI_VERBOSE(10, "registering %zu bytes at %p: %s", len, lo,
                        ucs_status_string(status));
        return status;
    }
    umr_mpi.cnt.reg_hits += (misses == umr_mpi.cnt.reg_misses);
    *region_p = ucs_derived_of(rregion, umr_mpi_region_t);
    return UCS_OK;
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

ucs_status_t umr_mpi_lkey_get(umr_mpi_region_t *region, void *base,
                              const umr_layout_t *layout, size_t count,
                              umr_mpi_lkey_t **lkey_p)
{
    umr_mpi_rail_t *rail = region->rail;
    umr_mpi_lkey_t *lkey;
    ucs_status_t status;

    ucs_list_for_each(lkey, &region->lkeys, list) {
        if ((lkey->base == base) && (lkey->count == count) &&
            umr_layout_equal(lkey->layout, layout)) {
            /* most recently used first */
            ucs_list_del(&lkey->list);
            ucs_list_add_head(&region->lkeys, &lkey->list);
            ++lkey->refs;
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
        return UCS_ERR_NO_MEMORY;
    }
    status = umr_layout_dup(layout, &lkey->layout);
    if (status != UCS_OK) {
        goto err_free;
    }
    /* a layout beyond the key budget, or a dry key pool, is a status the
     * caller falls back on, not an error line */
    status = uct_umr_mem_reg(rail->md, base, layout, count,
                             UCT_MD_MEM_FLAG_HIDE_ERRORS, &lkey->memh);
    if (status != UCS_OK) {
        UMR_MPI_VERBOSE(10, "layout registration failed (%s)",
                        ucs_status_string(status));
        if ((status == UCS_ERR_TIMED_OUT) || !umr_mpi_rail_alive(rail)) {
            /* the md's UMRs time out, or its port is down: not this
             * layout's fault, nor one peer's */
            umr_mpi_rail_retire(rail, ucs_status_string(status));
        }
        goto err_layout;
    }
    status = uct_md_mkey_pack(rail->md, lkey->memh, lkey->rkey);
    if (status != UCS_OK) {
        uct_md_mem_dereg(rail->md, lkey->memh);
        goto err_layout;
    }
    lkey->base  = base;
    lkey->count = count;
    lkey->refs  = 1;
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

void umr_mpi_lkey_put(umr_mpi_lkey_t *lkey)
{
    --lkey->refs;
}

ucs_status_t umr_mpi_region_acquire(umr_mpi_rail_t *rail, void *base,
                                    const umr_mpi_dtype_t *t, size_t count,
                                    umr_mpi_region_t **region_p)
{
    ptrdiff_t lo, hi;

    if (umr_mpi_dtype_span(t, count, &lo, &hi) != 0) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return umr_mpi_region_get(rail, (char*)base + lo, hi - lo, region_p);
}

ucs_status_t umr_mpi_lkey_acquire(umr_mpi_rail_t *rail, void *base,
                                  const umr_mpi_dtype_t *t, size_t count,
                                  umr_mpi_region_t **region_p,
                                  umr_mpi_lkey_t **lkey_p)
{
    ucs_status_t status;

    status = umr_mpi_region_acquire(rail, base, t, count, region_p);
    if (status != UCS_OK) {
        return status;
    }
    status = umr_mpi_lkey_get(*region_p, base, t->layout, count, lkey_p);
    if (status != UCS_OK) {
        umr_mpi_region_put(*region_p);
        *region_p = NULL;
    }
    return status;
}

void umr_mpi_lkey_release(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey)
{
    umr_mpi_lkey_put(lkey);
    umr_mpi_region_put(region);
}
