/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the one place that turns a layout plan into configured
 * indirect keys (plan in, keys out, on a given QP).
 *
 * A plan (layout/layout.h) lists its keys children first, top key last.
 * Entries over memory address base + entry.offset through lkeys[entry.mem];
 * entries over a child key address it zero-based through the child's current
 * key. Three callers:
 *  - layout registration (umr_md_layout.c): on the md's QP, waited for, so
 *    a peer may use the packed key as soon as registration returns;
 *  - the endpoint's cached local layout keys (umr_ep_layout.c) and
 *  - the list key over a long local iov (umr_ep_rma.c, the plan comes from
 *    umr_layout_lower_blocks): both on the ep's own QP, where the RDMA posted
 *    after the UMRs is fenced behind them by the QP itself. When the ep's
 *    queue could never hold the UMRs and the RDMA together, or the ep's QP
 *    is RDMA only (UCX_MLX5_UMR_EP_UMR=n: no UMR room, a smaller send
 *    queue), they are configured on the md's QP instead
 *    (uct_mlx5_umr_key_configure), waited for before the RDMA.
 */
#ifndef UCT_MLX5_UMR_KEY_H_
#define UCT_MLX5_UMR_KEY_H_

#include "umr_md.h"


/**
 * Post the UMRs of plan keys *next_p .. num_keys - 1 on qp, each signaled
 * with wr_id, configuring mkeys[k] as key k with `access`. *next_p advances
 * past every key the engine accepted. Returns UCS_OK when all are posted,
 * UCS_ERR_NO_RESOURCE when the QP is full (post the rest later), or the
 * engine's error.
 */
ucs_status_t uct_mlx5_umr_key_post(uct_mlx5_umr_md_t *md, umr_eng_qp_t *qp,
                                   const umr_layout_plan_t *plan, void *base,
                                   const uint32_t *lkeys,
                                   uct_mlx5_umr_mkey_t *const *mkeys,
                                   unsigned access, uint64_t wr_id,
                                   unsigned *next_p);

/**
 * Configure all keys of the plan on the md's QP and wait for them: on
 * success the keys are usable from any QP and by peers.
 */
ucs_status_t uct_mlx5_umr_key_configure(uct_mlx5_umr_md_t *md,
                                        const umr_layout_plan_t *plan,
                                        void *base, const uint32_t *lkeys,
                                        uct_mlx5_umr_mkey_t *const *mkeys,
                                        unsigned access);

/* The key a configured plan is addressed through (its top key). */
static inline uint32_t
uct_mlx5_umr_key_lkey(const umr_layout_plan_t *plan,
                      uct_mlx5_umr_mkey_t *const *mkeys)
{
    return mkeys[plan->num_keys - 1]->eng->lkey;
}

#endif
