/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: completion queues and queue pairs, and their
 * connection to a peer's QP.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UMR_ENG_SW_MAX_CQE    (1u << 22)

ucs_status_t umr_eng_sw_cq_create(umr_eng_dev_t *edev, unsigned size,
                                         umr_eng_cq_t **cq_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_cq_t *cq;

    if ((dev == NULL) || (cq_p == NULL) || (size == 0) ||
        (size > UMR_ENG_SW_MAX_CQE)) {
        ucs_error("sw engine: cq_create: invalid size %u (max %u)", size,
                  UMR_ENG_SW_MAX_CQE);
        return UCS_ERR_INVALID_PARAM;
    }

    cq = ucs_calloc(1, sizeof(*cq) + size * sizeof(*cq->ring),
                    "umr_eng_sw cq");
    if (cq == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    cq->dev  = dev;
    cq->size = size;
    ucs_list_head_init(&cq->qps);
    dev->num_objs++;
    *cq_p = cq;
    return UCS_OK;
}

void umr_eng_sw_cq_destroy(umr_eng_cq_t *cq)
{
    umr_eng_qp_t *qp;

    if (cq == NULL) {
        return;
    }

    if (!ucs_list_is_empty(&cq->qps)) {
        ucs_error("sw engine: destroying cq %p with live qps", cq);
        ucs_list_for_each(qp, &cq->qps, list) {
            qp->cq = NULL;
        }
    }

    cq->dev->num_objs--;
    ucs_free(cq);
}

/* SGEs and UMR entries of each work request slot: 0 means the device
 * maximum; an RDMA-only QP has no UMR entries. 0 on success, -1 when out
 * of range. */
static int umr_eng_sw_qp_dims(const umr_eng_qp_params_t *params,
                              unsigned *max_sge_p, unsigned *max_umr_p)
{
    *max_sge_p = params->max_sge ? params->max_sge : UMR_ENG_SW_MAX_SGE;
    if (params->rdma_only) {
        *max_umr_p = 0;
    } else {
        *max_umr_p = params->umr_list_entries ? params->umr_list_entries :
                                                UMR_ENG_SW_MAX_LIST;
    }
    return ((params->sq_size == 0) || (params->sq_size > UMR_ENG_SW_MAX_QP_WR) ||
            (*max_sge_p > UMR_ENG_SW_MAX_SGE) ||
            (*max_umr_p > UMR_ENG_SW_MAX_LIST)) ? -1 : 0;
}

/* The QP's work request slots: each a WR, its SGEs and its UMR entries */
size_t umr_eng_sw_qp_sq_bytes(umr_eng_dev_t *edev,
                              const umr_eng_qp_params_t *params)
{
    unsigned max_sge, max_umr;

    if ((params == NULL) || umr_eng_sw_qp_dims(params, &max_sge, &max_umr)) {
        return 0;
    }
    return (size_t)params->sq_size *
           (sizeof(umr_eng_sw_wr_t) + max_sge * sizeof(umr_eng_sge_t) +
            max_umr * sizeof(umr_eng_sw_desc_t));
}

ucs_status_t umr_eng_sw_qp_create(umr_eng_dev_t *edev,
                                         umr_eng_cq_t *cq,
                                         const umr_eng_qp_params_t *params,
                                         umr_eng_qp_t **qp_p)
{
    umr_eng_sw_dev_t *dev = (umr_eng_sw_dev_t*)edev;
    umr_eng_sw_kentry_t *entry;
    unsigned max_sge, max_umr;
    ucs_status_t status;
    umr_eng_qp_t *qp;

    if ((dev == NULL) || (qp_p == NULL) || (params == NULL) ||
        (cq == NULL) || (cq->dev != dev)) {
        ucs_error("sw engine: qp_create: NULL argument or cq of another "
                  "device");
        return UCS_ERR_INVALID_PARAM;
    }

    if (umr_eng_sw_qp_dims(params, &max_sge, &max_umr)) {
        ucs_error("sw engine: qp_create: sq_size %u (1..%u), max_sge %u "
                  "(<= %u), umr_list_entries %u (<= %u)", params->sq_size,
                  UMR_ENG_SW_MAX_QP_WR, params->max_sge, UMR_ENG_SW_MAX_SGE,
                  params->umr_list_entries, UMR_ENG_SW_MAX_LIST);
        return (params->sq_size == 0) ? UCS_ERR_INVALID_PARAM :
                                        UCS_ERR_EXCEEDS_LIMIT;
    }

    qp = ucs_calloc(1, sizeof(*qp), "umr_eng_sw qp");
    if (qp == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    qp->wrs   = ucs_calloc(params->sq_size, sizeof(*qp->wrs),
                           "umr_eng_sw qp wrs");
    qp->sges  = ucs_calloc((size_t)params->sq_size * max_sge,
                           sizeof(*qp->sges), "umr_eng_sw qp sges");
    qp->descs = (max_umr == 0) ? NULL :
                ucs_calloc((size_t)params->sq_size * max_umr,
                           sizeof(*qp->descs), "umr_eng_sw qp descs");
    if ((qp->wrs == NULL) || (qp->sges == NULL) ||
        ((qp->descs == NULL) && (max_umr != 0))) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }

    entry = umr_eng_sw_entry_new(dev, qp, UMR_ENG_SW_KIND_QP, &qp->index);
    if (entry == NULL) {
        status = UCS_ERR_NO_RESOURCE;
        goto err_free;
    }
    umr_eng_sw_entry_end(dev, entry);

    qp->dev             = dev;
    qp->cq              = cq;
    qp->qpn             = UMR_ENG_SW_KEY(qp->index, entry->tag);
    qp->sq_size         = params->sq_size;
    qp->max_sge         = max_sge;
    qp->max_umr_entries = max_umr;
    qp->rdma_only       = !!params->rdma_only;
    ucs_list_add_tail(&cq->qps, &qp->list);
    dev->num_objs++;
    *qp_p = qp;
    return UCS_OK;

err_free:
    ucs_free(qp->descs);
    ucs_free(qp->sges);
    ucs_free(qp->wrs);
    ucs_free(qp);
    return status;
}

void umr_eng_sw_qp_destroy(umr_eng_qp_t *qp)
{
    if (qp == NULL) {
        return;
    }

    if (qp->cq != NULL) {
        umr_eng_sw_cq_purge_qp(qp->cq, qp);
        ucs_list_del(&qp->list);
    }

    /* the peer sees the QP entry freed: its next operation fails */
    umr_eng_sw_index_free(qp->dev, qp->index);
    umr_eng_sw_space_cleanup(&qp->remote);
    qp->dev->num_objs--;
    ucs_free(qp->descs);
    ucs_free(qp->sges);
    ucs_free(qp->wrs);
    ucs_free(qp);
}

void umr_eng_sw_qp_get_addr(umr_eng_qp_t *qp, void *addr)
{
    umr_eng_sw_qp_addr_t qaddr;

    memset(&qaddr, 0, sizeof(qaddr));
    qaddr.cookie = qp->dev->hdr->cookie;
    qaddr.pid    = getpid();
    qaddr.qpn    = qp->qpn;
    memcpy(addr, &qaddr, sizeof(qaddr));   /* addr may be unaligned */
}

ucs_status_t umr_eng_sw_qp_connect(umr_eng_qp_t *qp,
                                          const void *remote_dev_addr,
                                          const void *remote_qp_addr)
{
    umr_eng_sw_dev_addr_t daddr;
    umr_eng_sw_qp_addr_t qaddr;
    umr_eng_sw_kentry_t *entry;

    if ((qp == NULL) || (remote_dev_addr == NULL) ||
        (remote_qp_addr == NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (qp->connected) {
        ucs_error("sw engine: qp 0x%x is already connected", qp->qpn);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!umr_eng_sw_dev_is_reachable((umr_eng_dev_t*)qp->dev,
                                     remote_dev_addr)) {
        ucs_debug("sw engine: peer on another host or pid namespace");
        return UCS_ERR_UNREACHABLE;
    }

    memcpy(&daddr, remote_dev_addr, sizeof(daddr));
    memcpy(&qaddr, remote_qp_addr, sizeof(qaddr));
    if ((qaddr.cookie != daddr.cookie) || (qaddr.pid != daddr.pid) ||
        (UMR_ENG_SW_KEY_INDEX(qaddr.qpn) == 0) ||
        (UMR_ENG_SW_KEY_INDEX(qaddr.qpn) >= daddr.max_keys)) {
        ucs_error("sw engine: qp address 0x%x does not belong to the "
                  "device address", qaddr.qpn);
        return UCS_ERR_INVALID_PARAM;
    }

    umr_eng_sw_space_init_remote(&qp->remote, &daddr);
    qp->peer_qpn  = qaddr.qpn;
    qp->connected = 1;

    entry              = umr_eng_sw_entry_begin(qp->dev, qp->index);
    entry->valid       = 1;
    entry->peer_cookie = daddr.cookie;
    entry->peer_qpn    = qaddr.qpn;
    umr_eng_sw_entry_end(qp->dev, entry);
    return UCS_OK;
}

void umr_eng_sw_qp_fail(umr_eng_qp_t *qp)
{
    /* what is queued and what comes later completes flushed */
    qp->in_error = 1;
}
