/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr sw engine: posting and polling. Posting only validates and queues;
 * the work is done by cq_poll (engine_sw_exec.c), like a NIC that runs while
 * the host polls.
 */
#include "umr_config.h"

#include "engine_sw.h"

#include <ucs/debug/log.h>

#include <string.h>

#define UMR_ENG_SW_WR_FLAGS   (UMR_ENG_WR_SIGNALED | UMR_ENG_WR_FENCE)

/* Common checks; returns the WR to fill or NULL with *status_p set. */
static umr_eng_sw_wr_t *
umr_eng_sw_post_begin(umr_eng_qp_t *qp, umr_eng_opcode_t opcode,
                      uint64_t wr_id, unsigned flags, ucs_status_t *status_p)
{
    umr_eng_sw_wr_t *wr;

    if (qp == NULL) {
        *status_p = UCS_ERR_INVALID_PARAM;
        return NULL;
    }

    if (flags & ~UMR_ENG_SW_WR_FLAGS) {
        ucs_error("sw engine: qp 0x%x: unknown wr flags 0x%x", qp->qpn, flags);
        *status_p = UCS_ERR_INVALID_PARAM;
        return NULL;
    }

    if (!qp->connected) {
        /* an RC QP accepts work only in RTS */
        ucs_error("sw engine: qp 0x%x: post before connect", qp->qpn);
        *status_p = UCS_ERR_NOT_CONNECTED;
        return NULL;
    }

    if ((qp->sq_pi - qp->sq_ci) >= qp->sq_size) {
        *status_p = UCS_ERR_NO_RESOURCE;
        return NULL;
    }

    wr            = &qp->wrs[qp->sq_pi % qp->sq_size];
    memset(wr, 0, sizeof(*wr));
    wr->wr_id     = wr_id;
    wr->seq       = qp->sq_pi;
    wr->opcode    = opcode;
    wr->flags     = flags;
    *status_p     = UCS_OK;
    return wr;
}

/* Checks shared by every UMR WQE (LOCAL_INV included). What the mlx5
 * engine refuses on a QP created for RDMA only (no UMR send operations, no
 * UMR room in its WQEs): the same contract here. */
static inline ucs_status_t
umr_eng_sw_umr_check(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey, unsigned access,
                     const char *op)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (ucs_unlikely(qp->rdma_only)) {
        ucs_error("sw engine: %s on qp 0x%x, which was created for RDMA only "
                  "(no UMR, no LOCAL_INV)", op, qp->qpn);
        return UCS_ERR_UNSUPPORTED;
    }

    if ((mkey == NULL) || !umr_eng_sw_owns(qp->dev, mkey->super.lkey, mkey)) {
        ucs_error("sw engine: %s: %p is not an mkey of the qp's device", op,
                  mkey);
        return UCS_ERR_INVALID_PARAM;
    }

    if (access & ~UMR_ENG_SW_ACCESS_ALL) {
        ucs_error("sw engine: %s: access 0x%x not allowed on a UMR key", op,
                  access);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* Rotate the tag: keys packed before this UMR stop working once it runs. */
static uint32_t umr_eng_sw_mkey_rotate(umr_eng_sw_mkey_t *mkey)
{
    uint32_t key = UMR_ENG_SW_KEY(mkey->index,
                                  UMR_ENG_SW_KEY_TAG(mkey->super.lkey) + 1);

    mkey->super.lkey = key;
    mkey->super.rkey = key;
    return key;
}

/* Takes the WR of a UMR of num descriptors on mkey (its tag rotated) and
 * returns the descriptors for the caller to fill before it counts the WR
 * posted, or NULL with *status_p set. */
static inline umr_eng_sw_desc_t *
umr_eng_sw_umr_begin(umr_eng_qp_t *qp, umr_eng_sw_mkey_t *mkey,
                     unsigned access, uint32_t repeat,
                     umr_eng_sw_layout_t layout, unsigned num, uint64_t wr_id,
                     unsigned flags, ucs_status_t *status_p)
{
    umr_eng_sw_wr_t *wr;

    wr = umr_eng_sw_post_begin(qp, UMR_ENG_OP_UMR, wr_id, flags, status_p);
    if (wr == NULL) {
        return NULL;
    }

    wr->mkey   = mkey;
    wr->access = access;
    wr->key    = umr_eng_sw_mkey_rotate(mkey);
    wr->layout = layout;
    wr->num    = num;
    wr->repeat = repeat;
    return umr_eng_sw_wr_descs(qp, wr);
}

ucs_status_t
umr_eng_sw_post_umr_interleaved(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey,
                                unsigned access, uint32_t repeat,
                                unsigned num_entries,
                                const umr_eng_interleaved_t *entries,
                                uint64_t wr_id, unsigned flags)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;
    umr_eng_sw_desc_t *descs;
    ucs_status_t status;
    unsigned i, max;

    status = umr_eng_sw_umr_check(qp, emkey, access, "umr_interleaved");
    if (status != UCS_OK) {
        return status;
    }

    if ((repeat == 0) || (num_entries == 0) || (entries == NULL)) {
        ucs_error("sw engine: umr_interleaved: repeat %u, num_entries %u, "
                  "entries %p", repeat, num_entries, entries);
        return UCS_ERR_INVALID_PARAM;
    }

    /* n interleaved entries take n + 1 descriptors, the strided header
     * included (rdma-core 44 qp.c umr_strided_seg_create), of the WQE and
     * of the key */
    max = ucs_min(ucs_min(UMR_ENG_SW_MAX_INTERLEAVED, qp->max_umr_entries - 1),
                  mkey->super.max_entries - 1);
    if (num_entries > max) {
        ucs_error("sw engine: umr_interleaved: %u entries > %u", num_entries,
                  max);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_entries; ++i) {
        if (entries[i].bytes_count == 0) {
            ucs_error("sw engine: umr_interleaved: entry %u: bytes_count 0",
                      i);
            return UCS_ERR_INVALID_PARAM;
        }

        /* 16-bit fields: a NIC would silently truncate them */
        if ((entries[i].bytes_count > UMR_ENG_SW_MAX_BYTES_COUNT) ||
            (((uint64_t)entries[i].bytes_count + entries[i].bytes_skip) >
             UMR_ENG_SW_MAX_STRIDE)) {
            ucs_error("sw engine: umr_interleaved: entry %u: bytes_count %u "
                      "bytes_skip %u exceed 16-bit fields", i,
                      entries[i].bytes_count, entries[i].bytes_skip);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
    }

    descs = umr_eng_sw_umr_begin(qp, mkey, access, repeat,
                                 UMR_ENG_SW_LAYOUT_INTERLEAVED, num_entries,
                                 wr_id, flags, &status);
    if (descs == NULL) {
        return status;
    }

    for (i = 0; i < num_entries; ++i) {
        descs[i].addr        = entries[i].addr;
        descs[i].bytes_count = entries[i].bytes_count;
        descs[i].bytes_skip  = entries[i].bytes_skip;
        descs[i].lkey        = entries[i].lkey;
        descs[i].reserved    = 0;
    }

    qp->sq_pi++;
    return UCS_OK;
}

ucs_status_t
umr_eng_sw_post_umr_list(umr_eng_qp_t *qp, umr_eng_mkey_t *emkey,
                         unsigned access, unsigned num_sge,
                         const umr_eng_sge_t *sge, uint64_t wr_id,
                         unsigned flags)
{
    umr_eng_sw_mkey_t *mkey = (umr_eng_sw_mkey_t*)emkey;
    umr_eng_sw_desc_t *descs;
    ucs_status_t status;
    uint64_t total = 0;
    unsigned i, max;

    status = umr_eng_sw_umr_check(qp, emkey, access, "umr_list");
    if (status != UCS_OK) {
        return status;
    }

    if ((num_sge == 0) || (sge == NULL)) {
        ucs_error("sw engine: umr_list: num_sge %u, sge %p", num_sge, sge);
        return UCS_ERR_INVALID_PARAM;
    }

    max = ucs_min(ucs_min(UMR_ENG_SW_MAX_LIST, qp->max_umr_entries),
                  mkey->super.max_entries);
    if (num_sge > max) {
        ucs_error("sw engine: umr_list: %u entries > %u", num_sge, max);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_sge; ++i) {
        if (sge[i].length == 0) {
            ucs_error("sw engine: umr_list: entry %u: length 0", i);
            return UCS_ERR_INVALID_PARAM;
        }

        total += sge[i].length;
    }

    if (total > UMR_ENG_SW_MAX_LIST_BYTES) {
        ucs_error("sw engine: umr_list: %" PRIu64 " bytes exceed %llu",
                  total, UMR_ENG_SW_MAX_LIST_BYTES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    descs = umr_eng_sw_umr_begin(qp, mkey, access, 1, UMR_ENG_SW_LAYOUT_LIST,
                                 num_sge, wr_id, flags, &status);
    if (descs == NULL) {
        return status;
    }

    for (i = 0; i < num_sge; ++i) {
        descs[i].addr        = sge[i].addr;
        descs[i].bytes_count = sge[i].length;
        descs[i].bytes_skip  = 0;
        descs[i].lkey        = sge[i].lkey;
        descs[i].reserved    = 0;
    }

    qp->sq_pi++;
    return UCS_OK;
}

ucs_status_t umr_eng_sw_post_local_inv(umr_eng_qp_t *qp,
                                              umr_eng_mkey_t *emkey,
                                              uint64_t wr_id, unsigned flags)
{
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;

    status = umr_eng_sw_umr_check(qp, emkey, 0, "local_inv");
    if (status != UCS_OK) {
        return status;
    }

    wr = umr_eng_sw_post_begin(qp, UMR_ENG_OP_LOCAL_INV, wr_id, flags,
                               &status);
    if (wr == NULL) {
        return status;
    }

    wr->mkey = (umr_eng_sw_mkey_t*)emkey;
    wr->key  = emkey->lkey;
    qp->sq_pi++;
    return UCS_OK;
}

ucs_status_t
umr_eng_sw_post_rdma(umr_eng_qp_t *qp, umr_eng_opcode_t opcode,
                     const umr_eng_sge_t *sge, unsigned num_sge,
                     uint64_t remote_addr, uint32_t rkey, uint64_t wr_id,
                     unsigned flags)
{
    uint64_t total = 0;
    umr_eng_sw_wr_t *wr;
    ucs_status_t status;
    unsigned i;

    if (qp == NULL) {
        return UCS_ERR_INVALID_PARAM;
    }

    if ((opcode != UMR_ENG_OP_RDMA_WRITE) && (opcode != UMR_ENG_OP_RDMA_READ)) {
        ucs_error("sw engine: post_rdma: opcode %d is not an RDMA", opcode);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((num_sge > 0) && (sge == NULL)) {
        ucs_error("sw engine: post_rdma: NULL sge list");
        return UCS_ERR_INVALID_PARAM;
    }

    if (num_sge > qp->max_sge) {
        ucs_error("sw engine: post_rdma: %u sges > max_sge %u", num_sge,
                  qp->max_sge);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_sge; ++i) {
        total += sge[i].length;
    }

    if (total > UMR_ENG_SW_MAX_MSG) {
        ucs_error("sw engine: post_rdma: %" PRIu64 " bytes > max_msg %llu",
                  total, UMR_ENG_SW_MAX_MSG);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    wr = umr_eng_sw_post_begin(qp, opcode, wr_id, flags, &status);
    if (wr == NULL) {
        return status;
    }

    if (num_sge > 0) {
        memcpy(umr_eng_sw_wr_sges(qp, wr), sge, num_sge * sizeof(*sge));
    }

    wr->num         = num_sge;
    wr->key         = rkey;
    wr->remote_addr = remote_addr;
    qp->sq_pi++;
    return UCS_OK;
}

int umr_eng_sw_cq_poll(umr_eng_cq_t *cq, umr_eng_wc_t *wcs, int max)
{
    umr_eng_sw_wc_t *swc;
    int n;

    if ((cq == NULL) || (max < 0) || ((max > 0) && (wcs == NULL))) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (cq->count < (unsigned)max) {
        umr_eng_sw_cq_progress(cq);
    }

    for (n = 0; (n < max) && (cq->count > 0); ++n) {
        swc    = &cq->ring[cq->head];
        wcs[n] = swc->wc;
        /* this WR and the unsignaled ones before it release their slots */
        swc->wc.qp->sq_ci = swc->seq + 1;
        cq->head          = (cq->head + 1) % cq->size;
        cq->count--;
    }

    return n;
}
