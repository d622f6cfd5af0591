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

static void umr_mpi_lkey_free(umr_mpi_region_t *region,
                              umr_mpi_lkey_t *lkey)
{
    if (lkey->refs == 0) {
        ucs_list_del(&lkey->idle);
    }
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
    ucs_list_head_init(&rail->idle_lkeys);
    return uct_umr_md_reclaim_set(rail->md, umr_mpi_keys_reclaim, rail);
}

void umr_mpi_keys_fini(umr_mpi_rail_t *rail)
{
    if (rail->rcache != NULL) {
        ucs_rcache_destroy(rail->rcache);
        rail->rcache = NULL;
    }
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

/* The layout key of (base, layout, count) over `region` (held by the
 * caller) for `prot`, made once; in use until umr_mpi_lkey_put. */
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

ucs_status_t umr_mpi_lkey_get(umr_mpi_region_t *region, void *base,
                              const umr_mpi_dtype_t *t, size_t count,
                              int prot, umr_mpi_lkey_t **lkey_p,
                              const char **why_p)
{
    const umr_layout_t *layout = t->layout;
    umr_mpi_rail_t *rail       = region->rail;
    umr_mpi_lkey_t *lkey;
    ucs_status_t status;

    ucs_list_for_each(lkey, &region->lkeys, list) {
        if ((lkey->base == base) && (lkey->count == count) &&
            ((lkey->prot & prot) == prot) && umr_mpi_lkey_is_of(lkey, t)) {
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
    /* over the region's registration: its pages are pinned once. A layout
     * beyond the key budget, or a dry key pool, is a status the caller
     * falls back on, not an error line */
    status = uct_umr_mem_reg_over(rail->md, base, layout, count,
                                  &region->memh, 1,
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
    lkey->region  = region;
    lkey->base    = base;
    lkey->count   = count;
    lkey->prot    = prot;
    lkey->refs    = 1;
    lkey->type_id = t->id;
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

ucs_status_t umr_mpi_lkey_acquire(umr_mpi_rail_t *rail, void *base,
                                  const umr_mpi_dtype_t *t, size_t count,
                                  int prot, umr_mpi_region_t **region_p,
                                  umr_mpi_lkey_t **lkey_p, const char **why_p)
{
    ucs_status_t status;

    status = umr_mpi_region_acquire(rail, base, t, count, prot, region_p,
                                    why_p);
    if (status != UCS_OK) {
        return status;
    }
    status = umr_mpi_lkey_get(*region_p, base, t, count, prot, lkey_p,
                              why_p);
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

void umr_mpi_lkey_drop(umr_mpi_region_t *region, umr_mpi_lkey_t *lkey)
{
    umr_mpi_lkey_put(lkey);
    if (lkey->refs == 0) {
        umr_mpi_lkey_free(region, lkey);
    }
    umr_mpi_region_put(region);
}
