/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: completion queues, RC QPs with the extended
 * send API and UMR, and their connection (INIT -> RTR -> RTS).
 */
#include "umr_config.h"

#include "engine_mlx5.h"
#include "umr_ucs_compat.h"  /* ucs_align_up, ucs_roundup_pow2 */

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <string.h>

/* The retry timeout and counts, traffic class, SL, hop limit, flow label
 * and pkey come from the device parameters (engine_mlx5_dev.c, UCX's
 * defaults: a try waits 1 s, 7 retries, ~8.6 s in all; before, 67 ms and
 * 7 retries gave up after 0.54 s, shorter than a subnet manager sweep). */
enum {
    UMR_ENG_MLX5_QP_MIN_RNR    = 12,   /* this QP receives no SENDs */
    UMR_ENG_MLX5_QP_ACCESS     = IBV_ACCESS_LOCAL_WRITE |
                                 IBV_ACCESS_REMOTE_WRITE |
                                 IBV_ACCESS_REMOTE_READ |
                                 IBV_ACCESS_REMOTE_ATOMIC
};

ucs_status_t umr_eng_mlx5_cq_create(umr_eng_dev_t *ndev, unsigned size,
                                    umr_eng_cq_t **cq_p)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    struct ibv_cq_init_attr_ex attr;
    umr_eng_mlx5_cq_t *cq;

    if (size == 0) {
        ucs_error("%s: cq_create: size must be > 0", dev->caps.name);
        return UCS_ERR_INVALID_PARAM;
    }

    cq = ucs_calloc(1, sizeof(*cq), "umr_eng_mlx5_cq");
    if (cq == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    /* wr_id, status and opcode are always there; nothing else is read */
    memset(&attr, 0, sizeof(attr));
    attr.cqe      = size;
    attr.wc_flags = 0;
    cq->dev       = dev;
    cq->cq        = ibv_create_cq_ex(dev->ctx, &attr);
    if (cq->cq == NULL) {
        ucs_error("%s: ibv_create_cq_ex(cqe %u) failed: %m", dev->caps.name,
                  size);
        ucs_free(cq);
        return (errno == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
    }

    *cq_p = (umr_eng_cq_t*)cq;
    return UCS_OK;
}

void umr_eng_mlx5_cq_destroy(umr_eng_cq_t *ncq)
{
    umr_eng_mlx5_cq_t *cq = (umr_eng_mlx5_cq_t*)ncq;

    if (cq == NULL) {
        return;
    }

    UMR_ENG_MLX5_WARN_IF_FAILED(ibv_destroy_cq(ibv_cq_ex_to_cq(cq->cq)),
                                "%s: ibv_destroy_cq()", cq->dev->caps.name);
    ucs_free(cq);
}

static ucs_status_t
umr_eng_mlx5_qp_check_params(umr_eng_mlx5_dev_t *dev,
                             const umr_eng_qp_params_t *params)
{
    if ((params->sq_size == 0) || (params->sq_size > dev->caps.max_qp_wr)) {
        ucs_error("%s: qp_create: sq_size %u out of range [1, %u]",
                  dev->caps.name, params->sq_size, dev->caps.max_qp_wr);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((params->max_sge == 0) || (params->max_sge > dev->caps.max_sge)) {
        ucs_error("%s: qp_create: max_sge %u out of range [1, %u]",
                  dev->caps.name, params->max_sge, dev->caps.max_sge);
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->rdma_only) {
        return UCS_OK;          /* no UMR room to size */
    }

    /* an interleaved UMR needs room for one entry and its header */
    if (params->umr_list_entries < 2) {
        ucs_error("%s: qp_create: umr_list_entries %u must be >= 2",
                  dev->caps.name, params->umr_list_entries);
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->umr_list_entries > dev->caps.max_list) {
        ucs_error("%s: qp_create: umr_list_entries %u exceeds the inline UMR "
                  "limit %u (1 KiB WQE)", dev->caps.name,
                  params->umr_list_entries, dev->caps.max_list);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    return UCS_OK;
}

/* Inline data the QP asks for: room for the UMR entries, none for RDMA */
static uint32_t umr_eng_mlx5_qp_inline(const umr_eng_qp_params_t *params)
{
    return params->rdma_only ? 0 :
           UMR_ENG_MLX5_INLINE_FOR_LIST(params->umr_list_entries);
}

/* Bytes before the data of the QP's largest WQE (verbs.c _sq_overhead for
 * the send operations qp_create asks for) */
static uint32_t umr_eng_mlx5_qp_overhead(const umr_eng_qp_params_t *params)
{
    return params->rdma_only ? UMR_ENG_MLX5_RDMA_OVERHEAD :
                               UMR_ENG_MLX5_UMR_OVERHEAD;
}

/* A send queue of `wrs` WQEs of `wqe_size` bytes: rdma-core allocates
 * roundup_pow_of_two(wrs * wqe_size) (verbs.c mlx5_calc_sq_size, 44.0:1680,
 * 56.1:1704, 65.0:1819) */
static size_t umr_eng_mlx5_sq_bytes(uint64_t wrs, uint32_t wqe_size)
{
    return ucs_roundup_pow2(wrs * wqe_size);
}

size_t umr_eng_mlx5_qp_sq_bytes(umr_eng_dev_t *ndev,
                                const umr_eng_qp_params_t *params)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    uint32_t overhead, size, inl, wqe_size;
    size_t bytes;

    if ((params == NULL) || (params->sq_size == 0) ||
        (params->sq_size > dev->caps.max_qp_wr) || (params->max_sge == 0) ||
        (params->max_sge > dev->caps.max_sge) ||
        (!params->rdma_only &&
         ((params->umr_list_entries < 2) ||
          (params->umr_list_entries > dev->caps.max_list)))) {
        return 0;
    }

    /* verbs.c mlx5_calc_send_wqe (44.0:1583, 56.1:1607, 65.0:1722): the
     * larger of overhead + SGEs and overhead + inline header and data,
     * in 64 B basic blocks */
    overhead = umr_eng_mlx5_qp_overhead(params);
    inl      = umr_eng_mlx5_qp_inline(params);
    size     = overhead + params->max_sge * UMR_ENG_MLX5_SGE_BYTES;
    if (inl != 0) {
        size = ucs_max(size, overhead + ucs_align_up(4 + inl, 16));
    }
    wqe_size = ucs_align_up(size, UMR_ENG_MLX5_WQE_BB);
    if (wqe_size > dev->wqe_bbs * UMR_ENG_MLX5_WQE_BB) {
        return 0;
    }

    bytes = umr_eng_mlx5_sq_bytes(params->sq_size, wqe_size);
    if ((dev->max_send_wqebb != 0) &&
        (bytes / UMR_ENG_MLX5_WQE_BB > dev->max_send_wqebb)) {
        return 0;
    }
    return bytes;
}

ucs_status_t umr_eng_mlx5_qp_create(umr_eng_dev_t *ndev, umr_eng_cq_t *ncq,
                                    const umr_eng_qp_params_t *params,
                                    umr_eng_qp_t **qp_p)
{
    umr_eng_mlx5_dev_t *dev = (umr_eng_mlx5_dev_t*)ndev;
    umr_eng_mlx5_cq_t *cq   = (umr_eng_mlx5_cq_t*)ncq;
    struct mlx5dv_qp_init_attr dv_attr;
    struct ibv_qp_init_attr_ex attr;
    umr_eng_mlx5_qp_t *qp;
    ucs_status_t status;
    uint32_t inl;

    if ((cq == NULL) || (params == NULL) || (qp_p == NULL)) {
        ucs_error("%s: qp_create: cq/params/qp_p must not be NULL",
                  dev->caps.name);
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_mlx5_qp_check_params(dev, params);
    if (status != UCS_OK) {
        return status;
    }

    qp = ucs_calloc(1, sizeof(*qp), "umr_eng_mlx5_qp");
    if (qp == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    qp->wrs = ucs_calloc(params->sq_size, sizeof(*qp->wrs),
                         "umr_eng_mlx5_wrs");
    if (qp->wrs == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free_qp;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_type             = IBV_QPT_RC;
    attr.send_cq             = ibv_cq_ex_to_cq(cq->cq);
    attr.recv_cq             = ibv_cq_ex_to_cq(cq->cq);
    attr.sq_sig_all          = 0;
    attr.cap.max_send_wr     = params->sq_size;
    attr.cap.max_send_sge    = params->max_sge;
    attr.cap.max_recv_wr     = 1;
    attr.cap.max_recv_sge    = 1;
    /* UMR is posted inline only: the inline size bounds the entries; an
     * RDMA-only QP posts no inline data */
    attr.cap.max_inline_data = umr_eng_mlx5_qp_inline(params);
    attr.pd                  = dev->pd;
    attr.qp_context          = qp;   /* async events name the engine QP */
    attr.comp_mask           = IBV_QP_INIT_ATTR_PD |
                               IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    attr.send_ops_flags      = IBV_QP_EX_WITH_RDMA_WRITE |
                               IBV_QP_EX_WITH_RDMA_READ;

    memset(&dv_attr, 0, sizeof(dv_attr));
    if (!params->rdma_only) {
        /* LOCAL_INV: post_local_inv. The UMR WQE size is counted for the
         * MR_INTERLEAVED / MR_LIST below in every release (verbs.c
         * _sq_overhead), with or without LOCAL_INV. An RDMA-only QP asks
         * for neither: LOCAL_INV alone would size it for UMR WQEs too */
        attr.send_ops_flags   |= IBV_QP_EX_WITH_LOCAL_INV;
        dv_attr.comp_mask      = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
        dv_attr.send_ops_flags = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                                 MLX5DV_QP_EX_WITH_MR_LIST;
    }

    qp->qp = mlx5dv_create_qp(dev->ctx, &attr, &dv_attr);
    if (qp->qp == NULL) {
        ucs_error("%s: mlx5dv_create_qp(RC%s, sq %u, sge %u, inline %u) "
                  "failed: %m", dev->caps.name,
                  params->rdma_only ? " RDMA only" : "", params->sq_size,
                  params->max_sge, umr_eng_mlx5_qp_inline(params));
        status = (errno == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR;
        goto err_free_wrs;
    }

    qp->qpx = ibv_qp_to_qp_ex(qp->qp);
    if (qp->qpx == NULL) {
        ucs_error("%s: ibv_qp_to_qp_ex() failed", dev->caps.name);
        status = UCS_ERR_UNSUPPORTED;
        goto err_destroy_qp;
    }

    qp->mqpx = mlx5dv_qp_ex_from_ibv_qp_ex(qp->qpx);
    if (qp->mqpx == NULL) {
        ucs_error("%s: mlx5dv_qp_ex_from_ibv_qp_ex() failed", dev->caps.name);
        status = UCS_ERR_UNSUPPORTED;
        goto err_destroy_qp;
    }

    /* The provider writes the real capabilities back: trust those */
    inl = attr.cap.max_inline_data;
    if (!params->rdma_only && (((inl + 4) / 16) < 2)) {
        ucs_error("%s: QP 0x%x got max_inline_data %u: no room for UMR",
                  dev->caps.name, qp->qp->qp_num, inl);
        status = UCS_ERR_UNSUPPORTED;
        goto err_destroy_qp;
    }

    qp->dev             = dev;
    qp->cq              = cq;
    qp->rdma_only       = !!params->rdma_only;
    qp->sq_size         = params->sq_size;
    qp->max_sge         = ucs_min(params->max_sge, attr.cap.max_send_sge);
    qp->max_inline_data = inl;
    qp->max_interleaved = qp->rdma_only ? 0 : ((inl + 4) / 16) - 1;
    qp->max_list        = qp->rdma_only ? 0 : (inl + 4) / 16;
    /* what the provider wrote back (verbs.c mlx5_calc_sq_size: inline =
     * WQE - overhead - 4, max_send_wr = queue bytes / WQE) gives the WQE
     * and the queue it allocated */
    qp->sq_bytes        = umr_eng_mlx5_sq_bytes(
            attr.cap.max_send_wr, inl + 4 + umr_eng_mlx5_qp_overhead(params));
    ucs_debug("%s: QP 0x%x: sq %u, sge %u, inline %u -> %s, send queue %zu "
              "B (%u WQEs of %u B)", dev->caps.name, qp->qp->qp_num,
              qp->sq_size, qp->max_sge, inl,
              qp->rdma_only ? "RDMA only" : "UMR", qp->sq_bytes,
              attr.cap.max_send_wr, inl + 4 + umr_eng_mlx5_qp_overhead(params));
    if (!qp->rdma_only) {
        ucs_debug("%s: QP 0x%x: UMR %u interleaved / %u list entries",
                  dev->caps.name, qp->qp->qp_num, qp->max_interleaved,
                  qp->max_list);
    }
    *qp_p = (umr_eng_qp_t*)qp;
    return UCS_OK;

err_destroy_qp:
    ibv_destroy_qp(qp->qp);
err_free_wrs:
    ucs_free(qp->wrs);
err_free_qp:
    ucs_free(qp);
    return status;
}

void umr_eng_mlx5_qp_destroy(umr_eng_qp_t *nqp)
{
    umr_eng_mlx5_qp_t *qp = (umr_eng_mlx5_qp_t*)nqp;

    if (qp == NULL) {
        return;
    }

    /* (qp_num is read only if it failed: then the QP still exists) */
    UMR_ENG_MLX5_WARN_IF_FAILED(ibv_destroy_qp(qp->qp),
                                "%s: ibv_destroy_qp(0x%x)", qp->dev->caps.name,
                                qp->qp->qp_num);
    ucs_free(qp->wrs);
    ucs_free(qp);
}

void umr_eng_mlx5_qp_get_addr(umr_eng_qp_t *nqp, void *addr)
{
    umr_eng_mlx5_qp_t *qp          = (umr_eng_mlx5_qp_t*)nqp;
    umr_eng_mlx5_qp_addr_t *qaddr  = addr;

    memset(qaddr, 0, sizeof(*qaddr));
    qaddr->qp_num    = qp->qp->qp_num;
    qaddr->mtu       = qp->dev->active_mtu;
    qaddr->rd_atomic = qp->dev->max_dest_rd_atomic;
}

void umr_eng_mlx5_qp_fail(umr_eng_qp_t *nqp)
{
    umr_eng_mlx5_qp_t *qp = (umr_eng_mlx5_qp_t*)nqp;
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_ERR;
    UMR_ENG_MLX5_WARN_IF_FAILED(ibv_modify_qp(qp->qp, &attr, IBV_QP_STATE),
                                "%s: ibv_modify_qp(0x%x -> ERR)",
                                qp->dev->caps.name, qp->qp->qp_num);
}

static ucs_status_t umr_eng_mlx5_qp_modify(umr_eng_mlx5_qp_t *qp,
                                           struct ibv_qp_attr *attr,
                                           int mask, const char *state)
{
    int ret;

    ret = ibv_modify_qp(qp->qp, attr, mask);
    if (ret) {
        ucs_error("%s: ibv_modify_qp(0x%x -> %s) failed: %s",
                  qp->dev->caps.name, qp->qp->qp_num, state, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t umr_eng_mlx5_qp_connect(umr_eng_qp_t *nqp,
                                     const void *remote_dev_addr,
                                     const void *remote_qp_addr)
{
    umr_eng_mlx5_qp_t *qp                 = (umr_eng_mlx5_qp_t*)nqp;
    umr_eng_mlx5_dev_t *dev               = qp->dev;
    const umr_eng_mlx5_dev_addr_t *rdev   = remote_dev_addr;
    const umr_eng_mlx5_qp_addr_t *rqp     = remote_qp_addr;
    struct ibv_qp_attr attr;
    enum ibv_mtu path_mtu;
    ucs_status_t status;

    if ((rdev == NULL) || (rqp == NULL)) {
        ucs_error("%s: qp_connect: remote addresses must not be NULL",
                  dev->caps.name);
        return UCS_ERR_INVALID_PARAM;
    }

    if (qp->connected) {
        ucs_error("%s: QP 0x%x is already connected", dev->caps.name,
                  qp->qp->qp_num);
        return UCS_ERR_ALREADY_EXISTS;
    }

    if (rdev->link_layer != dev->link_layer) {
        ucs_error("%s: qp_connect: peer link layer %u differs from ours (%u)",
                  dev->caps.name, rdev->link_layer, dev->link_layer);
        return UCS_ERR_UNREACHABLE;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state        = IBV_QPS_INIT;
    attr.pkey_index      = dev->pkey_index;
    attr.port_num        = dev->port_num;
    attr.qp_access_flags = UMR_ENG_MLX5_QP_ACCESS;
    status = umr_eng_mlx5_qp_modify(qp, &attr,
                                    IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                                    "INIT");
    if (status != UCS_OK) {
        goto err_reset;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state              = IBV_QPS_RTR;
    path_mtu                   = ucs_min(dev->active_mtu,
                                         (enum ibv_mtu)rqp->mtu);
    attr.path_mtu              = path_mtu;
    attr.dest_qp_num           = rqp->qp_num;
    attr.rq_psn                = 0;
    attr.max_dest_rd_atomic    = dev->max_dest_rd_atomic;
    attr.min_rnr_timer         = UMR_ENG_MLX5_QP_MIN_RNR;
    attr.ah_attr.port_num      = dev->port_num;
    attr.ah_attr.sl            = dev->sl;
    if (dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
        /* RoCE: address by GID; the LID is meaningless. The kernel takes
         * the DSCP from the traffic class on RoCE v2 and the priority from
         * the SL (drivers/infiniband/hw/mlx5/qp.c mlx5_set_path) */
        attr.ah_attr.is_global         = 1;
        attr.ah_attr.grh.sgid_index    = dev->gid_index;
        attr.ah_attr.grh.hop_limit     = dev->hop_limit;
        attr.ah_attr.grh.traffic_class = dev->traffic_class;
        attr.ah_attr.grh.flow_label    = dev->flow_label;
        memcpy(attr.ah_attr.grh.dgid.raw, rdev->gid,
               sizeof(attr.ah_attr.grh.dgid.raw));
    } else {
        attr.ah_attr.is_global = 0;
        attr.ah_attr.dlid      = rdev->lid;
    }
    status = umr_eng_mlx5_qp_modify(qp, &attr,
                                    IBV_QP_STATE | IBV_QP_AV |
                                    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                    IBV_QP_RQ_PSN |
                                    IBV_QP_MAX_DEST_RD_ATOMIC |
                                    IBV_QP_MIN_RNR_TIMER, "RTR");
    if (status != UCS_OK) {
        goto err_reset;
    }

    memset(&attr, 0, sizeof(attr));
    attr.qp_state      = IBV_QPS_RTS;
    attr.timeout       = dev->qp_timeout;
    attr.retry_cnt     = dev->retry_cnt;
    attr.rnr_retry     = dev->rnr_retry;
    attr.sq_psn        = 0;
    /* never more reads at once than the peer takes (IBTA: a responder out
     * of read resources NAKs Invalid Request) */
    attr.max_rd_atomic = ucs_min(dev->max_rd_atomic, rqp->rd_atomic);
    status = umr_eng_mlx5_qp_modify(qp, &attr,
                                    IBV_QP_STATE | IBV_QP_TIMEOUT |
                                    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                                    "RTS");
    if (status != UCS_OK) {
        goto err_reset;
    }

    ucs_debug("%s: QP 0x%x connected to QP 0x%x (mtu %d)", dev->caps.name,
              qp->qp->qp_num, rqp->qp_num, path_mtu);
    qp->connected = 1;
    return UCS_OK;

err_reset:
    /* back to RESET so that a later connect can start over */
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RESET;
    (void)umr_eng_mlx5_qp_modify(qp, &attr, IBV_QP_STATE, "RESET");
    return status;
}
