/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: endpoint hot-path helpers, shared by umr_ep.c,
 * umr_ep_rma.c and umr_ep_layout.c. Include from .c files only.
 */
#ifndef UCT_MLX5_UMR_EP_INL_
#define UCT_MLX5_UMR_EP_INL_

#include "umr_ep.h"

#include <ucs/debug/log.h>
#include <inttypes.h>


static UCS_F_ALWAYS_INLINE uct_mlx5_umr_iface_t *
uct_mlx5_umr_ep_iface(uct_mlx5_umr_ep_t *ep)
{
    return ucs_derived_of(ep->super.super.iface, uct_mlx5_umr_iface_t);
}

static UCS_F_ALWAYS_INLINE int uct_mlx5_umr_ep_is_ours(uct_ep_h tl_ep)
{
    return (tl_ep != NULL) &&
           (tl_ep->iface->ops.ep_put_zcopy == uct_mlx5_umr_ep_put_zcopy);
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_check_state(uct_mlx5_umr_ep_t *ep)
{
    if (ucs_unlikely(!ep->connected)) {
        ucs_error("mlx5_umr ep %p: not connected", ep);
        return UCS_ERR_NOT_CONNECTED;
    }
    return ep->status;
}

/* Is [remote_addr, +length) inside the remote key? Argument check of the
 * put/get calls, compiled like UCT_CHECK_PARAM (ENABLE_PARAMS_CHECK): the
 * engine refuses an access outside the key anyway, with a remote access
 * error completion, so it is not validated twice in release builds. The
 * layout calls of uct_umr.h check always (uct_mlx5_umr_ep_check_remote_range),
 * as their documentation promises. */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_check_remote(const uct_mlx5_umr_rkey_t *rkey,
                             uint64_t remote_addr, size_t length)
{
    if (!ENABLE_PARAMS_CHECK) {
        return UCS_OK;
    }
    return uct_mlx5_umr_ep_check_remote_range(rkey, remote_addr, length);
}

static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_no_resource(uct_mlx5_umr_ep_t *ep)
{
    ++ep->stats.no_resource;
    return UCS_ERR_NO_RESOURCE;
}

/* Are there send queue and CQ slots for num_wrs more signaled WRs? */
static UCS_F_ALWAYS_INLINE int
uct_mlx5_umr_ep_has_slots(uct_mlx5_umr_ep_t *ep, unsigned num_wrs)
{
    return num_wrs <= ucs_min(ep->sq_avail,
                              uct_mlx5_umr_ep_iface(ep)->cq_avail);
}

/* Account one signaled WR of op that the engine accepted. */
static UCS_F_ALWAYS_INLINE void
uct_mlx5_umr_ep_wr_posted(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op)
{
    --ep->sq_avail;
    --uct_mlx5_umr_ep_iface(ep)->cq_avail;
    ++op->wrs_left;
}

static UCS_F_ALWAYS_INLINE unsigned
uct_mlx5_umr_ep_num_frags(uct_mlx5_umr_iface_t *iface, uint64_t total)
{
    return ucs_max(1, (total + iface->config.max_msg - 1) /
                      iface->config.max_msg);
}

/* An operation of frags RDMA WRs can never fit a queue shorter than that:
 * say which variable to raise (a NO_RESOURCE would never clear). */
static UCS_F_ALWAYS_INLINE ucs_status_t
uct_mlx5_umr_ep_check_frags(uct_mlx5_umr_ep_t *ep, unsigned frags)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if (ucs_likely(frags <= iface->config.tx_queue_len)) {
        return UCS_OK;
    }

    ucs_error("mlx5_umr ep %p: the operation needs %u RDMA work requests of "
              "at most %" PRIu64 " bytes, more than the send queue holds: "
              "raise UCX_MLX5_UMR_TX_QUEUE_LEN (now %u) or UCX_MLX5_UMR_MAX_MSG",
              ep, frags, iface->config.max_msg, iface->config.tx_queue_len);
    return UCS_ERR_EXCEEDS_LIMIT;
}

/* The one zero-copy-or-pack decision: tiny blocks cost a descriptor entry
 * each, one copy through a bounce buffer is cheaper. */
static UCS_F_ALWAYS_INLINE int
uct_mlx5_umr_ep_should_pack(uct_mlx5_umr_iface_t *iface, uint64_t length,
                            double mean_block)
{
    return (iface->config.sizes.pack_thresh > 0) &&
           (length <= iface->config.sizes.seg_size) &&
           (mean_block <= (double)iface->config.sizes.pack_thresh);
}

static UCS_F_ALWAYS_INLINE uct_mlx5_umr_op_t *
uct_mlx5_umr_ep_op_get(uct_mlx5_umr_ep_t *ep, uct_completion_t *comp)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_op_t *op;

    op = ucs_mpool_get(&iface->op_mp);
    if (ucs_unlikely(op == NULL)) {
        return NULL;
    }

    op->ep            = ep;
    op->comp          = comp;
    op->status        = UCS_OK;
    op->wrs_left      = 0;
    op->buf           = NULL;
    op->is_flush      = 0;
    op->centry        = NULL;
    op->tmp_mr        = NULL;
    op->unpack_cb     = NULL;
    op->unpack_layout = NULL;
    op->own_layout    = NULL;
    op->length        = 0;
    return op;
}

static UCS_F_ALWAYS_INLINE void
uct_mlx5_umr_ep_op_push(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    ucs_queue_push(&ep->ops, &op->queue);
    if (iface->outstanding++ == 0) {
        uct_mlx5_umr_iface_progress_arm(iface);
    }
}

/* One SGE over the first length bytes of the op's bounce buffer. */
static UCS_F_ALWAYS_INLINE void
uct_mlx5_umr_ep_buf_sge(uct_mlx5_umr_iface_t *iface,
                        const uct_mlx5_umr_op_t *op, uint64_t length,
                        umr_eng_sge_t *sge)
{
    sge->addr   = (uintptr_t)uct_mlx5_umr_iface_buf(iface, op->buf);
    sge->length = length;
    sge->lkey   = op->buf->lkey;
}

#endif
