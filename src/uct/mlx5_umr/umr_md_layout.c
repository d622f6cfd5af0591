/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: layout registration (uct_umr_mem_reg). A layout is
 * lowered to a plan of indirect keys, the keys come from the md's pool and
 * are configured on the md's UMR queue pair, children first, and waited for:
 * a packed key is usable by a peer as soon as registration returns.
 */
#include "umr_config.h"

#include "umr_key.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <inttypes.h>


ucs_status_t uct_umr_mem_reg(uct_md_h uct_md, void *base,
                             const umr_layout_t *layout, size_t count,
                             unsigned flags, uct_mem_h *memh_p)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);
    unsigned access       = uct_mlx5_umr_md_access(flags);
    /* a caller with a fallback (pml/umr) asks for no error lines: a layout
     * over the limits or a dry key pool is then only its status */
    ucs_log_level_t level = (flags & UCT_MD_MEM_FLAG_HIDE_ERRORS) ?
                            UCS_LOG_LEVEL_DEBUG : UCS_LOG_LEVEL_ERROR;
    uct_mlx5_umr_memh_t *memh;
    umr_layout_plan_t *plan;
    ucs_status_t status;
    unsigned k;

    if (md == NULL) {
        ucs_error("uct_umr_mem_reg: md %p is not an mlx5_umr memory domain",
                  uct_md);
        return UCS_ERR_INVALID_PARAM;
    }
    /* base may be NULL: displacements that are addresses (MPI_BOTTOM) */
    if ((layout == NULL) || (count == 0) ||
        (memh_p == NULL) || (umr_layout_size(layout) == 0)) {
        ucs_error("uct_umr_mem_reg: invalid parameter: base %p layout %p "
                  "count %zu memh_p %p", base, layout, count, memh_p);
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_layout_lower(layout, count, &md->limits, &plan);
    if (status != UCS_OK) {
        ucs_log(level, "uct_umr_mem_reg: lowering the layout (count %zu) "
                "failed: %s: %s", count, ucs_status_string(status),
                umr_layout_last_error());
        return status;
    }

    memh = ucs_calloc(1, sizeof(*memh), "mlx5_umr layout memh");
    if (memh == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_plan;
    }

    memh->plan        = plan;
    memh->flags       = UCT_MLX5_UMR_MEMH_FLAG_LAYOUT;
    memh->base        = base;
    memh->count       = count;
    memh->length      = plan->cost.total_bytes;
    memh->layout_hash = umr_layout_hash(layout);

    status = umr_layout_dup(layout, &memh->layout);
    if (status != UCS_OK) {
        goto err_memh;
    }

    status = md->eng->mr_reg(md->dev, UCS_PTR_BYTE_OFFSET(base, plan->span_lb),
                             plan->span_ub - plan->span_lb,
                             access, &memh->mr);
    if (status != UCS_OK) {
        ucs_log(level, "uct_umr_mem_reg: registering the span [%p, %p) "
                "failed: %s", UCS_PTR_BYTE_OFFSET(base, plan->span_lb),
                UCS_PTR_BYTE_OFFSET(base, plan->span_ub),
                ucs_status_string(status));
        goto err_memh;
    }

    memh->mkeys = ucs_calloc(plan->num_keys, sizeof(*memh->mkeys),
                             "mlx5_umr memh keys");
    if (memh->mkeys == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_memh;
    }

    status = uct_mlx5_umr_md_mkeys_check_log(md, plan->num_keys, level);
    if (status != UCS_OK) {
        goto err_memh;
    }

    for (k = 0; k < plan->num_keys; ++k) {
        status = uct_mlx5_umr_md_mkey_get(md, &memh->mkeys[k]);
        if (status != UCS_OK) {
            goto err_memh;
        }
        ++memh->num_mkeys;
        ++md->mkeys_reg;
    }

    /* children are read through their parent: every key gets access */
    status = uct_mlx5_umr_key_configure(md, plan, base, &memh->mr->lkey,
                                        memh->mkeys, access);
    if (status != UCS_OK) {
        goto err_memh;
    }

    memh->id = md->next_memh_id++;
    ++md->stats.layout_regs;
    *memh_p = memh;
    return UCS_OK;

err_memh:
    plan = NULL; /* owned by memh now */
    uct_mlx5_umr_memh_free(md, memh);
err_plan:
    if (plan != NULL) {
        umr_layout_plan_free(plan);
    }
    return status;
}
