/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: endpoint core - life cycle, connection, keys, flush,
 * fence, pending queue, the completion side of operations and the posting
 * path (RDMA fragments, pack fallback) that both kinds of operations share.
 * The operations are in umr_ep_rma.c (put/get zcopy, short, bcopy) and
 * umr_ep_layout.c (layout operations); hot helpers are in umr_ep.inl.
 */
#include "umr_config.h"

#include "umr_ep.inl"
#include "umr_key.h"

#include <inttypes.h>
#include <string.h>


/* ---- operation life cycle and completion ------------------------------ */

/* Release what an operation holds; no user callback. */
void uct_mlx5_umr_ep_op_release(uct_mlx5_umr_ep_t *ep,
                                uct_mlx5_umr_op_t *op)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if (op->buf != NULL) {
        uct_mlx5_umr_iface_buf_put(op->buf);
    }
    if (op->centry != NULL) {
        uct_mlx5_umr_cache_release(&ep->cache, op->centry);
    }
    if (op->tmp_mr != NULL) {
        iface->eng->mr_dereg(iface->md->dev, op->tmp_mr);
    }
    if (op->own_layout != NULL) {
        umr_layout_free(op->own_layout);
    }
    ucs_mpool_put(op);
}

ucs_status_t uct_mlx5_umr_ep_op_abort(uct_mlx5_umr_ep_t *ep,
                                      uct_mlx5_umr_op_t *op,
                                      ucs_status_t status)
{
    if (op->wrs_left > 0) {
        /* some WRs are in the queue: let progress retire the operation */
        op->status = status;
        op->comp   = NULL;
        uct_mlx5_umr_ep_op_push(ep, op);
    } else {
        uct_mlx5_umr_ep_op_release(ep, op);
    }
    return status;
}

static void uct_mlx5_umr_ep_op_finish(uct_mlx5_umr_ep_t *ep,
                                      uct_mlx5_umr_op_t *op)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_completion_t *comp      = op->comp;
    ucs_status_t status         = op->status;
    void *buf;

    if ((status == UCS_OK) && (op->buf != NULL)) {
        buf = uct_mlx5_umr_iface_buf(iface, op->buf);
        if (op->unpack_cb != NULL) {
            op->unpack_cb(op->unpack_arg, buf, op->length);
        } else if (op->unpack_layout != NULL) {
            status = umr_layout_unpack_range(op->unpack_layout,
                                             op->unpack_count,
                                             op->unpack_base,
                                             op->unpack_offset,
                                             op->length, buf);
        }
    }

    uct_mlx5_umr_ep_op_release(ep, op);
    --iface->outstanding;
    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }
}

void uct_mlx5_umr_ep_wr_done(uct_mlx5_umr_op_t *op, ucs_status_t status)
{
    uct_mlx5_umr_ep_t *ep = op->ep;

    ucs_assert(op->wrs_left > 0);
    --op->wrs_left;
    ++ep->sq_avail;

    if (ucs_unlikely(status != UCS_OK)) {
        if (op->status == UCS_OK) {
            op->status = status;
        }
        if (ep->status == UCS_OK) {
            /* the QP is in error: every later WR fails too. The iface error
             * handler learns it from progress, after the completions
             * polled with this one (it may destroy the ep). */
            ep->status    = status;
            ep->err_state = UCT_MLX5_UMR_EP_ERR_QUEUED;
            ucs_list_add_tail(&uct_mlx5_umr_ep_iface(ep)->failed_eps,
                              &ep->err_list);
        }
    }

    /* retire in posting order: a flush marker waits for all before it */
    while (!ucs_queue_is_empty(&ep->ops)) {
        op = ucs_queue_head_elem_non_empty(&ep->ops, uct_mlx5_umr_op_t, queue);
        if (op->wrs_left != 0) {
            break;
        }
        ucs_queue_pull_non_empty(&ep->ops);
        if (op->is_flush && (op->status == UCS_OK)) {
            /* a flush after a failure reports it */
            op->status = ep->status;
        }
        uct_mlx5_umr_ep_op_finish(ep, op);
    }
}

void uct_mlx5_umr_ep_fail(uct_mlx5_umr_ep_t *ep, ucs_status_t status)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if (ep->status != UCS_OK) {
        return;                 /* failed before: reported once */
    }
    ucs_diag("mlx5_umr ep %p: failed: %s", ep, ucs_status_string(status));
    ep->status    = status;
    ep->err_state = UCT_MLX5_UMR_EP_ERR_QUEUED;
    ucs_list_add_tail(&iface->failed_eps, &ep->err_list);
    iface->eng->qp_fail(ep->qp);
    uct_mlx5_umr_iface_progress_arm(iface);
}

void uct_mlx5_umr_ep_report_failure(uct_mlx5_umr_ep_t *ep)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    ucs_status_t status;

    ucs_assert(ep->err_state == UCT_MLX5_UMR_EP_ERR_QUEUED);
    ucs_list_del(&ep->err_list);
    ep->err_state = UCT_MLX5_UMR_EP_ERR_REPORTED;

    /* last use of ep here: the handler may destroy it */
    status = uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
                                     ep->status);
    if ((status != UCS_OK) && (iface->super.err_handler != NULL)) {
        ucs_error("mlx5_umr ep %p: error handler did not handle %s", ep,
                  ucs_status_string(status));
    }
}

void uct_mlx5_umr_ep_dispatch_pending(uct_mlx5_umr_ep_t *ep)
{
    uct_pending_req_priv_queue_t *priv;

    uct_pending_queue_dispatch(priv, &ep->pending,
                               (ep->sq_avail > 0) &&
                               (uct_mlx5_umr_ep_iface(ep)->cq_avail > 0));
    if (ucs_queue_is_empty(&ep->pending)) {
        ucs_list_del(&ep->pending_list);
    }
}


/* ---- posting, shared by RMA (umr_ep_rma.c) and layout operations ------ */

UCS_F_NOINLINE ucs_status_t
uct_mlx5_umr_ep_check_remote_range(const uct_mlx5_umr_rkey_t *rkey,
                                   uint64_t remote_addr, size_t length)
{
    uint64_t start = remote_addr;

    if (!(rkey->flags & UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED)) {
        if (remote_addr < rkey->base) {
            goto err;
        }
        start = remote_addr - rkey->base;
    }

    if ((start > rkey->length) || (length > rkey->length - start)) {
        goto err;
    }
    return UCS_OK;

err:
    ucs_error("mlx5_umr: remote range [0x%" PRIx64 ", +%zu) is outside the "
              "%s key 0x%x (base 0x%" PRIx64 " length %" PRIu64 ")",
              remote_addr, length,
              (rkey->flags & UCT_MLX5_UMR_RKEY_FLAG_ZERO_BASED) ? "layout" :
              "contiguous", rkey->rkey, rkey->base, rkey->length);
    return UCS_ERR_INVALID_PARAM;
}

/* Copy the part [offset, offset + length) of an SGE list into out. */
static unsigned uct_mlx5_umr_sge_slice(const umr_eng_sge_t *sge, unsigned n,
                                       uint64_t offset, uint64_t length,
                                       umr_eng_sge_t *out)
{
    unsigned i, num = 0;
    uint64_t skip, len;

    for (i = 0; (i < n) && (length > 0); ++i) {
        if (offset >= sge[i].length) {
            offset -= sge[i].length;
            continue;
        }

        skip            = offset;
        len             = ucs_min(sge[i].length - skip, length);
        out[num].addr   = sge[i].addr + skip;
        out[num].length = len;
        out[num].lkey   = sge[i].lkey;
        ++num;
        offset  = 0;
        length -= len;
    }

    return num;
}

/* Post the RDMA WRs of one operation, fragmented at max_msg. Slots were
 * checked by the caller. */
static ucs_status_t
uct_mlx5_umr_ep_post_rdma(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                          umr_eng_opcode_t opcode, const umr_eng_sge_t *sge,
                          unsigned num_sge, uint64_t total,
                          uint64_t remote_addr, uint32_t rkey)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uint64_t max_msg            = iface->config.max_msg;
    umr_eng_sge_t frag[iface->config.max_sge];
    uint64_t offset, len;
    unsigned n, flags;
    ucs_status_t status;

    for (offset = 0; offset < total; offset += len) {
        len   = ucs_min(total - offset, max_msg);
        n     = uct_mlx5_umr_sge_slice(sge, num_sge, offset, len, frag);
        flags = UMR_ENG_WR_SIGNALED | (ep->fence ? UMR_ENG_WR_FENCE : 0);
        if (ucs_log_is_enabled(UCS_LOG_LEVEL_TRACE_DATA)) {
            ucs_trace_data("ep %p: %s %u sge [0x%" PRIx64 " len %u lkey 0x%x"
                           "%s] %" PRIu64 " bytes -> 0x%" PRIx64 " rkey 0x%x%s",
                           ep, umr_eng_opcode_str(opcode), n, frag[0].addr,
                           frag[0].length, frag[0].lkey, (n > 1) ? " ..." : "",
                           len, remote_addr + offset, rkey,
                           (flags & UMR_ENG_WR_FENCE) ? " fence" : "");
        }
        status = iface->eng->post_rdma(ep->qp, opcode, frag, n,
                                       remote_addr + offset, rkey,
                                       (uintptr_t)op, flags);
        if (ucs_unlikely(status != UCS_OK)) {
            /* a full queue is retried through pending: not an error */
            ucs_log((status == UCS_ERR_NO_RESOURCE) ? UCS_LOG_LEVEL_DEBUG :
                                                      UCS_LOG_LEVEL_ERROR,
                    "mlx5_umr ep %p: post %s of %" PRIu64 " bytes failed: %s",
                    ep, umr_eng_opcode_str(opcode), len,
                    ucs_status_string(status));
            return status;
        }
        ep->fence = 0;
        uct_mlx5_umr_ep_wr_posted(ep, op);
        ++ep->stats.rdma_wrs;
    }

    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_ep_op_post(uct_mlx5_umr_ep_t *ep,
                                     uct_mlx5_umr_op_t *op,
                                     umr_eng_opcode_t opcode,
                                     const umr_eng_sge_t *sge,
                                     unsigned num_sge, uint64_t total,
                                     uint64_t remote_addr, uint32_t rkey)
{
    ucs_status_t status;

    status = uct_mlx5_umr_ep_post_rdma(ep, op, opcode, sge, num_sge, total,
                                       remote_addr, rkey);
    if (ucs_unlikely(status != UCS_OK)) {
        return uct_mlx5_umr_ep_op_abort(ep, op, status);
    }

    if (op->wrs_left == 0) {
        /* nothing to move: complete now, nothing will be polled */
        uct_mlx5_umr_ep_op_release(ep, op);
        return UCS_OK;
    }

    uct_mlx5_umr_ep_op_push(ep, op);
    return UCS_INPROGRESS;
}

ucs_status_t uct_mlx5_umr_ep_pack_layout(uct_mlx5_umr_ep_t *ep,
                                         uct_mlx5_umr_op_t *op,
                                         umr_eng_opcode_t opcode,
                                         const umr_layout_t *layout,
                                         int keep_copy, size_t count,
                                         void *base, uint64_t offset,
                                         uint64_t length, umr_eng_sge_t *sge)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    ucs_status_t status         = UCS_OK;

    op->buf = uct_mlx5_umr_iface_buf_get(iface);
    if (op->buf == NULL) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (opcode == UMR_ENG_OP_RDMA_WRITE) {
        status = umr_layout_pack_range(layout, count, base, offset, length,
                                       uct_mlx5_umr_iface_buf(iface,
                                                                  op->buf));
    } else {
        if (keep_copy) {
            status = umr_layout_dup(layout, &op->own_layout);
            layout = op->own_layout;
        }
        op->unpack_layout = layout;
        op->unpack_count  = count;
        op->unpack_base   = base;
        op->unpack_offset = offset;
        op->length        = length;
    }
    if (status != UCS_OK) {
        return status;
    }

    uct_mlx5_umr_ep_buf_sge(iface, op, length, sge);
    ++ep->stats.pack_fallbacks;
    return UCS_OK;
}


/* ---- local keys -------------------------------------------------------- */

ucs_status_t
uct_mlx5_umr_ep_key_configure(uct_mlx5_umr_ep_t *ep, uct_mlx5_umr_op_t *op,
                              const umr_layout_plan_t *plan, void *base,
                              const uint32_t *lkeys, unsigned frags,
                              const void *blob, size_t blob_len,
                              const umr_layout_t *layout,
                              const uint64_t *memh_ids, unsigned num_memhs,
                              unsigned access)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    uct_mlx5_umr_cache_entry_t *entry;
    ucs_status_t status;
    unsigned next;
    int on_ep_qp;

    if (iface->md->umr_broken != UCS_OK) {
        return UCS_ERR_UNSUPPORTED;   /* said once, when it broke */
    }

    /* an RDMA-only endpoint QP (EP_UMR=n) takes no UMR; nor does a device
     * whose UMR needs a fence rdma-core cannot give (md's QP, waited for) */
    on_ep_qp = iface->config.ep_umr && !iface->md->caps.umr_wait &&
               (frags + plan->num_keys <= iface->config.tx_queue_len);
    if (on_ep_qp && !uct_mlx5_umr_ep_has_slots(ep, frags + plan->num_keys)) {
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    status = uct_mlx5_umr_cache_insert(&ep->cache, blob, blob_len, layout,
                                       memh_ids, num_memhs, plan->num_keys,
                                       &entry);
    if (status != UCS_OK) {
        return status;
    }

    if (on_ep_qp) {
        /* the RDMA posted after the UMRs is fenced behind them by the QP */
        next   = 0;
        status = uct_mlx5_umr_key_post(iface->md, ep->qp, plan, base, lkeys,
                                       entry->mkeys, access, (uintptr_t)op,
                                       &next);
        while (next-- > 0) {
            uct_mlx5_umr_ep_wr_posted(ep, op);
        }
    } else {
        status = uct_mlx5_umr_key_configure(iface->md, plan, base, lkeys,
                                            entry->mkeys, access);
    }
    if (status != UCS_OK) {
        ucs_log((status == UCS_ERR_NO_RESOURCE) ? UCS_LOG_LEVEL_DEBUG :
                                                  UCS_LOG_LEVEL_ERROR,
                "mlx5_umr ep %p: configuring a local key (%u UMRs) failed: %s",
                ep, plan->num_keys, ucs_status_string(status));
        /* the new entry must not stay half-built */
        uct_mlx5_umr_cache_remove(&ep->cache, entry);
        return status;
    }

    entry->length = plan->cost.total_bytes;
    entry->lkey   = uct_mlx5_umr_key_lkey(plan, entry->mkeys);
    op->centry    = entry;
    return UCS_OK;
}


/* ---- flush, fence, pending --------------------------------------------- */

ucs_status_t uct_mlx5_umr_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                   uct_completion_t *comp)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_op_t *op;

    if (!ucs_queue_is_empty(&ep->pending)) {
        /* pending work is not posted yet: the flush cannot cover it */
        return uct_mlx5_umr_ep_no_resource(ep);
    }

    if (ucs_queue_is_empty(&ep->ops)) {
        UCT_TL_EP_STAT_FLUSH(&ep->super);
        return ep->status;
    }

    if (comp != NULL) {
        /* a marker retired after every operation posted before it */
        op = uct_mlx5_umr_ep_op_get(ep, comp);
        if (op == NULL) {
            return uct_mlx5_umr_ep_no_resource(ep);
        }
        op->is_flush = 1;
        uct_mlx5_umr_ep_op_push(ep, op);
    }

    UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
    return UCS_INPROGRESS;
}

ucs_status_t uct_mlx5_umr_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);

    /* RC keeps writes in order; only reads may be overtaken */
    ep->fence = 1;
    UCT_TL_EP_STAT_FENCE(&ep->super);
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                         unsigned flags)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    if ((ep->sq_avail > 0) && (iface->cq_avail > 0) &&
        uct_mlx5_umr_iface_has_buf(iface) &&
        ucs_queue_is_empty(&ep->pending) && (ep->status == UCS_OK)) {
        return UCS_ERR_BUSY;
    }

    if (ucs_queue_is_empty(&ep->pending)) {
        ucs_list_add_tail(&iface->pending_eps, &ep->pending_list);
        uct_mlx5_umr_iface_progress_arm(iface);
    }
    uct_pending_req_queue_push(&ep->pending, req);
    UCT_TL_EP_STAT_PEND(&ep->super);
    return UCS_OK;
}

static void uct_mlx5_umr_ep_purge_noop(uct_pending_req_t *req, void *arg)
{
}

void uct_mlx5_umr_ep_pending_purge(uct_ep_h tl_ep,
                                   uct_pending_purge_callback_t cb, void *arg)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_pending_req_priv_queue_t *priv;

    if (cb == NULL) {
        cb = uct_mlx5_umr_ep_purge_noop;
    }
    if (!ucs_queue_is_empty(&ep->pending)) {
        ucs_list_del(&ep->pending_list);
    }
    uct_pending_queue_purge(priv, &ep->pending, 1, cb, arg);
}


/* ---- connection -------------------------------------------------------- */

ucs_status_t uct_mlx5_umr_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_mlx5_umr_ep_t *ep = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);

    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);

    uint64_t buf[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    /* QP address, then the device address the connection needs; the engine
     * writes aligned buffers, UCP packs addresses at any offset */
    iface->eng->qp_get_addr(ep->qp, buf);
    memcpy(addr, buf, iface->md->caps.qp_addr_len);
    iface->eng->dev_get_addr(iface->md->dev, buf);
    memcpy(UCS_PTR_BYTE_OFFSET(addr, iface->md->caps.qp_addr_len), buf,
           iface->md->caps.dev_addr_len);
    return UCS_OK;
}

ucs_status_t uct_mlx5_umr_ep_connect_to_ep(uct_ep_h tl_ep,
                                           const uct_device_addr_t *dev_addr,
                                           const uct_ep_addr_t *ep_addr)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    ucs_status_t status;

    uint64_t peer_dev[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];
    uint64_t peer_qp[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];

    if (ep_addr == NULL) {
        ucs_error("mlx5_umr ep %p: connect_to_ep: NULL ep address", ep);
        return UCS_ERR_INVALID_PARAM;
    }

    /* the ep address carries the engine device address (see umr_iface.h);
     * addresses come unaligned off the wire: the engine gets aligned copies */
    memcpy(peer_qp, ep_addr, iface->md->caps.qp_addr_len);
    memcpy(peer_dev, UCS_PTR_BYTE_OFFSET(ep_addr, iface->md->caps.qp_addr_len),
           iface->md->caps.dev_addr_len);
    uct_mlx5_umr_md_check_events(iface->md, 0);
    if (iface->md->failed != UCS_OK) {
        ucs_error("mlx5_umr ep %p: the rail is retired (port down or "
                  "address changed): no peer is reachable", ep);
        return UCS_ERR_UNREACHABLE;
    }
    if (!iface->eng->dev_is_reachable(iface->md->dev, peer_dev)) {
        ucs_error("mlx5_umr ep %p: peer device is not reachable", ep);
        return UCS_ERR_UNREACHABLE;
    }

    status = iface->eng->qp_connect(ep->qp, peer_dev, peer_qp);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr ep %p: connect failed: %s", ep,
                  ucs_status_string(status));
        return status;
    }

    memcpy(ep->peer_ep_addr, ep_addr,
           iface->md->caps.qp_addr_len + iface->md->caps.dev_addr_len);
    ep->peer_dev_hash = uct_mlx5_umr_hash(peer_dev,
                                          iface->md->caps.dev_addr_len);
    ep->connected     = 1;
    return UCS_OK;
}

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_CONNECT_TO_EP_V2
/* The v2 form UCP uses since 1.14: the address lengths in params, when
 * given, must hold what our ep address is. */
ucs_status_t
uct_mlx5_umr_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *params)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    size_t ep_addr_len          = iface->md->caps.qp_addr_len +
                                  iface->md->caps.dev_addr_len;

    if ((params != NULL) &&
        (params->field_mask & UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH) &&
        (params->ep_addr_length < ep_addr_len)) {
        ucs_error("mlx5_umr ep %p: connect_to_ep: ep address of %zu bytes, "
                  "%zu expected", ep, params->ep_addr_length, ep_addr_len);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_mlx5_umr_ep_connect_to_ep(tl_ep, dev_addr, ep_addr);
}
#endif

#ifdef HAVE_UCT_IFACE_INTERNAL_OPS_T_EP_IS_CONNECTED
/* Connected to the peer whose addresses params gives: each address that is
 * given must be the one this endpoint connected to. */
int uct_mlx5_umr_ep_is_connected(uct_ep_h tl_ep,
                                 const uct_ep_is_connected_params_t *params)
{
    uct_mlx5_umr_ep_t *ep       = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(ep);
    size_t qp_len               = iface->md->caps.qp_addr_len;
    size_t dev_len              = iface->md->caps.dev_addr_len;
    const uct_mlx5_umr_iface_addr_t *iface_addr;

    if (!ep->connected) {
        return 0;
    }

    if ((params->field_mask & UCT_EP_IS_CONNECTED_FIELD_DEVICE_ADDR) &&
        memcmp(params->device_addr, &ep->peer_dev_hash,
               sizeof(ep->peer_dev_hash))) {
        return 0;
    }

    if (params->field_mask & UCT_EP_IS_CONNECTED_FIELD_IFACE_ADDR) {
        iface_addr = (const void*)params->iface_addr;
        if ((iface_addr->engine != (uint8_t)iface->eng->id) ||
            memcmp(iface_addr->dev_addr, ep->peer_ep_addr + qp_len, dev_len)) {
            return 0;
        }
    }

    if ((params->field_mask & UCT_EP_IS_CONNECTED_FIELD_EP_ADDR) &&
        memcmp(params->ep_addr, ep->peer_ep_addr, qp_len + dev_len)) {
        return 0;
    }

    return 1;
}
#endif

ucs_status_t uct_umr_ep_get_stats(uct_ep_h tl_ep, uct_umr_ep_stats_t *stats)
{
    uct_mlx5_umr_ep_t *ep;

    if ((stats == NULL) || !uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_get_stats: ep %p is not an mlx5_umr endpoint "
                  "(or stats is NULL)", tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    ep     = ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t);
    *stats = ep->stats;
    return UCS_OK;
}

ucs_status_t uct_umr_ep_rkey_unpack(uct_ep_h tl_ep, const void *rkey_buffer,
                                    uct_rkey_t *rkey_p)
{
    if (!uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_rkey_unpack: ep %p is not an mlx5_umr endpoint",
                  tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_mlx5_umr_rkey_cache_get(
            &ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t)->rkey_cache, rkey_buffer,
            rkey_p);
}

ucs_status_t uct_umr_ep_rkey_release(uct_ep_h tl_ep, uct_rkey_t rkey)
{
    if (!uct_mlx5_umr_ep_is_ours(tl_ep)) {
        ucs_error("uct_umr_ep_rkey_release: ep %p is not an mlx5_umr endpoint",
                  tl_ep);
        return UCS_ERR_INVALID_PARAM;
    }

    return uct_mlx5_umr_rkey_cache_put(
            &ucs_derived_of(tl_ep, uct_mlx5_umr_ep_t)->rkey_cache, rkey);
}

static UCS_CLASS_INIT_FUNC(uct_mlx5_umr_ep_t, const uct_ep_params_t *params)
{
    uct_mlx5_umr_iface_t *iface = ucs_derived_of(params->iface,
                                                 uct_mlx5_umr_iface_t);
    umr_eng_qp_params_t qp_params;
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

    if (params->field_mask & (UCT_EP_PARAM_FIELD_DEV_ADDR |
                              UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("mlx5_umr: connects ep to ep only (UCT_IFACE_FLAG_CONNECT_"
                  "TO_EP); create the ep with the iface alone");
        return UCS_ERR_UNSUPPORTED;
    }

    uct_mlx5_umr_iface_ep_qp_params(iface, &qp_params);
    status = iface->eng->qp_create(iface->md->dev, iface->cq, &qp_params,
                                   &self->qp);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr: failed to create a QP: %s",
                  ucs_status_string(status));
        return status;
    }

    self->sq_avail  = iface->config.tx_queue_len;
    self->connected = 0;
    self->fence     = 0;
    self->status    = UCS_OK;
    self->err_state = UCT_MLX5_UMR_EP_ERR_NONE;
    memset(&self->stats, 0, sizeof(self->stats));
    ucs_queue_head_init(&self->ops);
    ucs_queue_head_init(&self->pending);
    uct_mlx5_umr_cache_init(&self->cache, iface->md, iface->config.cache_size,
                            &self->stats);
    uct_mlx5_umr_rkey_cache_init(&self->rkey_cache, iface->config.rcache_size,
                                 &self->stats);
    ucs_list_add_tail(&iface->eps, &self->list);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_mlx5_umr_ep_t)
{
    uct_mlx5_umr_iface_t *iface = uct_mlx5_umr_ep_iface(self);
    uct_mlx5_umr_op_t *op;

    ucs_list_del(&self->list);
    if (self->err_state == UCT_MLX5_UMR_EP_ERR_QUEUED) {
        ucs_list_del(&self->err_list); /* destroyed before it was reported */
    }
    /* the engine drops this QP's completions from the shared CQ */
    iface->eng->qp_destroy(self->qp);

    ucs_queue_for_each_extract(op, &self->ops, queue, 1) {
        iface->cq_avail += op->wrs_left; /* purged, never polled */
        uct_mlx5_umr_ep_op_release(self, op);
        --iface->outstanding;
    }

    uct_mlx5_umr_ep_pending_purge(&self->super.super, NULL, NULL);
    uct_mlx5_umr_cache_cleanup(&self->cache);
    uct_mlx5_umr_rkey_cache_cleanup(&self->rkey_cache);
}

UCS_CLASS_DEFINE(uct_mlx5_umr_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_mlx5_umr_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_mlx5_umr_ep_t, uct_ep_t);
