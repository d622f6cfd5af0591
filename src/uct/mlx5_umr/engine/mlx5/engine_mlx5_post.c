/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr engine, mlx5 backend: the data path. Posts UMR, LOCAL_INV and
 * RDMA work requests through the extended send API and polls completions.
 *
 * Every limit is checked before ibv_wr_start(): a descriptor the NIC cannot
 * take never reaches it (rdma-core would either reject it inside the WR
 * builder or, for the 16-bit fields, truncate it silently).
 */
#include "umr_config.h"

#include "engine_mlx5.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/math.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

/* The engine descriptors mirror the verbs ones: pass them through as is. */
#define UMR_ENG_MLX5_SAME_FIELD(_a, _b, _f) \
    _Static_assert(offsetof(_a, _f) == offsetof(_b, _f), \
                   #_a "." #_f " mirrors " #_b)
_Static_assert(sizeof(umr_eng_sge_t) == sizeof(struct ibv_sge),
               "umr_eng_sge_t mirrors struct ibv_sge");
UMR_ENG_MLX5_SAME_FIELD(umr_eng_sge_t, struct ibv_sge, addr);
UMR_ENG_MLX5_SAME_FIELD(umr_eng_sge_t, struct ibv_sge, length);
UMR_ENG_MLX5_SAME_FIELD(umr_eng_sge_t, struct ibv_sge, lkey);
_Static_assert(sizeof(umr_eng_interleaved_t) ==
               sizeof(struct mlx5dv_mr_interleaved),
               "umr_eng_interleaved_t mirrors struct mlx5dv_mr_interleaved");
UMR_ENG_MLX5_SAME_FIELD(umr_eng_interleaved_t, struct mlx5dv_mr_interleaved,
                        addr);
UMR_ENG_MLX5_SAME_FIELD(umr_eng_interleaved_t, struct mlx5dv_mr_interleaved,
                        bytes_count);
UMR_ENG_MLX5_SAME_FIELD(umr_eng_interleaved_t, struct mlx5dv_mr_interleaved,
                        bytes_skip);
UMR_ENG_MLX5_SAME_FIELD(umr_eng_interleaved_t, struct mlx5dv_mr_interleaved,
                        lkey);
_Static_assert(((int)UMR_ENG_ACCESS_LOCAL_WRITE ==
                (int)IBV_ACCESS_LOCAL_WRITE) &&
               ((int)UMR_ENG_ACCESS_REMOTE_WRITE ==
                (int)IBV_ACCESS_REMOTE_WRITE) &&
               ((int)UMR_ENG_ACCESS_REMOTE_READ ==
                (int)IBV_ACCESS_REMOTE_READ) &&
               ((int)UMR_ENG_ACCESS_REMOTE_ATOMIC ==
                (int)IBV_ACCESS_REMOTE_ATOMIC),
               "UMR_ENG_ACCESS_* equal IBV_ACCESS_*");

/* A UMR completes with IBV_WC_DRIVER1 (qp.c _common_wqe_init_op stores it
 * for IBV_WR_DRIVER1, cq.c returns it for MLX5_OPCODE_UMR), which mlx5dv.h
 * names MLX5DV_WC_UMR: the same value in every release (engine_mlx5_compat.h). */
_Static_assert((int)MLX5DV_WC_UMR == (int)IBV_WC_DRIVER1,
               "MLX5DV_WC_UMR is IBV_WC_DRIVER1");

#define UMR_ENG_MLX5_WR_FLAGS (UMR_ENG_WR_SIGNALED | UMR_ENG_WR_FENCE)

/* Checks shared by every post: connection, flags. */
static ucs_status_t umr_eng_mlx5_post_check(umr_eng_mlx5_qp_t *qp,
                                            unsigned flags, const char *what)
{
    if (!qp->connected) {
        ucs_error("%s: %s on QP 0x%x before qp_connect", qp->dev->caps.name,
                  what, qp->qp->qp_num);
        return UCS_ERR_NOT_CONNECTED;
    }

    if (flags & ~UMR_ENG_MLX5_WR_FLAGS) {
        ucs_error("%s: %s: unknown WR flags 0x%x", qp->dev->caps.name, what,
                  flags & ~UMR_ENG_MLX5_WR_FLAGS);
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* A QP created for RDMA only has neither the UMR builders (rdma-core leaves
 * them NULL without mlx5 send operations: calling one would crash) nor the
 * room of a UMR WQE (LOCAL_INV included): refused before rdma-core. */
static ucs_status_t umr_eng_mlx5_umr_allowed(umr_eng_mlx5_qp_t *qp,
                                             const char *what)
{
    if (ucs_unlikely(qp->rdma_only)) {
        ucs_error("%s: %s on QP 0x%x, which was created for RDMA only (no "
                  "UMR send operations, WQEs without UMR room)",
                  qp->dev->caps.name, what, qp->qp->qp_num);
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

/* Checks shared by both UMR kinds, before their own entries are checked. */
static ucs_status_t umr_eng_mlx5_umr_check(umr_eng_mlx5_qp_t *qp,
                                           umr_eng_mlx5_mkey_t *mkey,
                                           unsigned access, unsigned num,
                                           uint32_t max, unsigned header,
                                           unsigned flags, const char *what)
{
    ucs_status_t status;

    status = umr_eng_mlx5_post_check(qp, flags, what);
    if (status != UCS_OK) {
        return status;
    }

    status = umr_eng_mlx5_umr_allowed(qp, what);
    if (status != UCS_OK) {
        return status;
    }

    if (mkey == NULL) {
        ucs_error("%s: %s: mkey must not be NULL", qp->dev->caps.name, what);
        return UCS_ERR_INVALID_PARAM;
    }

    if (access & ~UMR_ENG_MLX5_ACCESS_MASK) {
        ucs_error("%s: %s: access 0x%x not allowed on a UMR key (only "
                  "LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC)",
                  qp->dev->caps.name, what, access);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((access & UMR_ENG_ACCESS_REMOTE_ATOMIC) &&
        qp->dev->hca.umr_modify_atomic_disabled) {
        ucs_error("%s: %s: REMOTE_ATOMIC access on a UMR key: the device "
                  "does not let a UMR set it (umr_modify_atomic_disabled)",
                  qp->dev->caps.name, what);
        return UCS_ERR_UNSUPPORTED;
    }

    if (num == 0) {
        ucs_error("%s: %s: no entries", qp->dev->caps.name, what);
        return UCS_ERR_INVALID_PARAM;
    }

    /* rdma-core checks num against the key's descriptors but writes
     * num + header of them (qp.c mlx5_send_wr_set_mkey_layout,
     * umr_strided_seg_create): check what the NIC gets */
    if ((num > max) || (num + header > mkey->super.max_entries)) {
        ucs_error("%s: %s: %u entries (+%u header) exceed the limit (QP "
                  "inline %u, mkey 0x%x max_entries %u)", qp->dev->caps.name,
                  what, num, header, max, mkey->super.lkey,
                  mkey->super.max_entries);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    return UCS_OK;
}

static ucs_status_t umr_eng_mlx5_slot_check(umr_eng_mlx5_qp_t *qp)
{
    if ((qp->sq_head - qp->sq_tail) >= qp->sq_size) {
        ucs_trace_data("%s: QP 0x%x send queue full (%u)", qp->dev->caps.name,
                       qp->qp->qp_num, qp->sq_size);
        return UCS_ERR_NO_RESOURCE;
    }
    return UCS_OK;
}

/* The slot of the next WR; its address is the verbs wr_id. */
static umr_eng_mlx5_wr_t *umr_eng_mlx5_slot_get(umr_eng_mlx5_qp_t *qp,
                                                uint64_t wr_id,
                                                umr_eng_opcode_t opcode)
{
    umr_eng_mlx5_wr_t *wr = &qp->wrs[qp->sq_head % qp->sq_size];

    wr->qp     = qp;
    wr->seq    = qp->sq_head;
    wr->wr_id  = wr_id;
    wr->opcode = opcode;
    return wr;
}

static void umr_eng_mlx5_wr_begin(umr_eng_mlx5_qp_t *qp,
                                  umr_eng_mlx5_wr_t *wr, unsigned wr_flags,
                                  unsigned flags)
{
    ibv_wr_start(qp->qpx);
    qp->qpx->wr_id    = (uintptr_t)wr;
    qp->qpx->wr_flags = wr_flags |
                        ((flags & UMR_ENG_WR_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
                        ((flags & UMR_ENG_WR_FENCE) ? IBV_SEND_FENCE : 0);
}

/* rdma-core rolls the WR back on error: then nothing was posted. */
static ucs_status_t umr_eng_mlx5_wr_end(umr_eng_mlx5_qp_t *qp,
                                        const char *what)
{
    int ret;

    ret = ibv_wr_complete(qp->qpx);
    if (ucs_unlikely(ret == ENOMEM)) {
        /* the provider's send queue is full (qp.c mlx5_wq_overflow): a
         * resource shortage the caller retries after progress */
        ucs_trace_data("%s: %s on QP 0x%x: send queue full (ENOMEM)",
                       qp->dev->caps.name, what, qp->qp->qp_num);
        return UCS_ERR_NO_RESOURCE;
    } else if (ret) {
        ucs_error("%s: %s on QP 0x%x: ibv_wr_complete() failed: %s",
                  qp->dev->caps.name, what, qp->qp->qp_num, strerror(ret));
        return UCS_ERR_IO_ERROR;
    }

    ++qp->sq_head;
    return UCS_OK;
}

/* The fence a UMR WQE (LOCAL_INV included) carries: the device asks one
 * (umr_fence small or strong) against the work before it on the QP; the
 * kernel puts it on its own UMRs, rdma-core only with IBV_SEND_FENCE (the
 * small fence and the fence, engine_mlx5_hca.c). Nothing in flight: none
 * needed. A strong fence rdma-core cannot give: the transport then waits
 * for each UMR (caps.umr_wait), and the fence still orders what it can. */
static unsigned umr_eng_mlx5_umr_fence(umr_eng_mlx5_qp_t *qp, unsigned flags)
{
    if ((qp->dev->hca.umr_fence != UMR_ENG_MLX5_FENCE_NONE) &&
        (qp->sq_head != qp->sq_tail)) {
        return flags | UMR_ENG_WR_FENCE;
    }
    return flags;
}

/* Each UMR moves the key's tag to the next value, or, without UPDATE_TAG
 * support, configures the next hardware mkey of the ring (engine_mlx5.h).
 * rdma-core reads the tag from the mlx5dv_mkey while building the WQE. */
static struct mlx5dv_mkey *
umr_eng_mlx5_mkey_next(umr_eng_mlx5_mkey_t *mkey, unsigned *index_p)
{
    struct mlx5dv_mkey *hw;
    uint32_t key;

    if (mkey->update_tag) {
        hw       = mkey->ring[0];
        key      = (hw->lkey & ~0xffu) | ((hw->lkey + 1) & 0xffu);
        hw->lkey = key;
        hw->rkey = key;
        *index_p = 0;
        return hw;
    }

    *index_p = (mkey->cur + 1) % UMR_ENG_MLX5_MKEY_RING;
    return mkey->ring[*index_p];
}

/* The UMR was not posted: the key keeps its tag. */
static void umr_eng_mlx5_mkey_unnext(umr_eng_mlx5_mkey_t *mkey)
{
    if (mkey->update_tag) {
        mkey->ring[0]->lkey = mkey->super.lkey;
        mkey->ring[0]->rkey = mkey->super.rkey;
    }
}

static void umr_eng_mlx5_mkey_rotate(umr_eng_mlx5_mkey_t *mkey,
                                     unsigned index)
{
    mkey->cur        = index;
    mkey->super.lkey = mkey->ring[index]->lkey;
    mkey->super.rkey = mkey->ring[index]->rkey;
}

/*
 * The posting sequence shared by both UMR kinds, once their own entries are
 * checked: exactly one of entries (interleaved) and sge (list) is set.
 */
static ucs_status_t
umr_eng_mlx5_umr_post(umr_eng_mlx5_qp_t *qp, umr_eng_mlx5_mkey_t *mkey,
                      unsigned access, uint32_t repeat, unsigned num,
                      const umr_eng_interleaved_t *entries,
                      const umr_eng_sge_t *sge, uint64_t wr_id, unsigned flags,
                      const char *what)
{
    struct mlx5dv_mkey *hw_mkey;
    umr_eng_mlx5_wr_t *wr;
    ucs_status_t status;
    unsigned i, index;

    status = umr_eng_mlx5_slot_check(qp);
    if (status != UCS_OK) {
        return status;
    }

    if (ucs_log_is_enabled(UCS_LOG_LEVEL_TRACE_DATA)) {
        for (i = 0; i < num; ++i) {
            if (entries != NULL) {
                ucs_trace_data("UMR ilv [%u] addr 0x%lx count %u skip %u "
                               "lkey 0x%x", i, entries[i].addr,
                               entries[i].bytes_count, entries[i].bytes_skip,
                               entries[i].lkey);
            } else {
                ucs_trace_data("UMR list [%u] addr 0x%lx length %u lkey 0x%x",
                               i, sge[i].addr, sge[i].length, sge[i].lkey);
            }
        }
    }

    hw_mkey = umr_eng_mlx5_mkey_next(mkey, &index);
    wr      = umr_eng_mlx5_slot_get(qp, wr_id, UMR_ENG_OP_UMR);
    umr_eng_mlx5_wr_begin(qp, wr, IBV_SEND_INLINE,
                          umr_eng_mlx5_umr_fence(qp, flags));
    if (entries != NULL) {
        mlx5dv_wr_mr_interleaved(qp->mqpx, hw_mkey, access, repeat, num,
                                 (struct mlx5dv_mr_interleaved*)entries);
    } else {
        mlx5dv_wr_mr_list(qp->mqpx, hw_mkey, access, num,
                          (struct ibv_sge*)sge);
    }
    status = umr_eng_mlx5_wr_end(qp, what);
    if (status != UCS_OK) {
        umr_eng_mlx5_mkey_unnext(mkey);
        return status;
    }

    umr_eng_mlx5_mkey_rotate(mkey, index);
    if (entries != NULL) {
        ucs_trace_data("%s: QP 0x%x: UMR interleaved %u x %u -> key 0x%x",
                       qp->dev->caps.name, qp->qp->qp_num, num, repeat,
                       mkey->super.lkey);
    } else {
        ucs_trace_data("%s: QP 0x%x: UMR list %u -> key 0x%x",
                       qp->dev->caps.name, qp->qp->qp_num, num,
                       mkey->super.lkey);
    }
    return UCS_OK;
}

ucs_status_t umr_eng_mlx5_post_umr_interleaved(
        umr_eng_qp_t *nqp, umr_eng_mkey_t *umkey, unsigned access,
        uint32_t repeat, unsigned num_entries,
        const umr_eng_interleaved_t *entries, uint64_t wr_id, unsigned flags)
{
    static const char *what = "UMR interleaved";
    umr_eng_mlx5_qp_t *qp     = (umr_eng_mlx5_qp_t*)nqp;
    umr_eng_mlx5_mkey_t *mkey = ucs_derived_of(umkey, umr_eng_mlx5_mkey_t);
    uint64_t row_bytes        = 0;
    ucs_status_t status;
    unsigned i;

    status = umr_eng_mlx5_umr_check(qp, mkey, access, num_entries,
                                    qp->max_interleaved, 1, flags, what);
    if (status != UCS_OK) {
        return status;
    }

    if ((repeat == 0) || (entries == NULL)) {
        ucs_error("%s: %s: repeat %u / entries %p invalid", qp->dev->caps.name,
                  what, repeat, entries);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < num_entries; ++i) {
        if (entries[i].bytes_count == 0) {
            ucs_error("%s: %s: entry %u has bytes_count 0", qp->dev->caps.name,
                      what, i);
            return UCS_ERR_INVALID_PARAM;
        }
        /* 16-bit hardware fields: the NIC would truncate, not fail */
        if ((entries[i].bytes_count > UMR_ENG_MLX5_MAX_BYTES_COUNT) ||
            (((uint64_t)entries[i].bytes_count + entries[i].bytes_skip) >
             UMR_ENG_MLX5_MAX_STRIDE)) {
            ucs_error("%s: %s: entry %u bytes_count %u + bytes_skip %u "
                      "exceeds the 16-bit limit %u", qp->dev->caps.name, what,
                      i, entries[i].bytes_count, entries[i].bytes_skip,
                      UMR_ENG_MLX5_MAX_STRIDE);
            return UCS_ERR_EXCEEDS_LIMIT;
        }
        row_bytes += entries[i].bytes_count;
    }

    /* row_bytes * repeat < 2^54: no key size limit (UMR_ENG_MLX5_MAX_ILV_
     * BYTES); rdma-core sums it in 64 bits (44.0, 56.1, 65.0) */
    ucs_assert(row_bytes <= (uint64_t)num_entries * UINT16_MAX);

    return umr_eng_mlx5_umr_post(qp, mkey, access, repeat, num_entries,
                                 entries, NULL, wr_id, flags, what);
}

ucs_status_t umr_eng_mlx5_post_umr_list(umr_eng_qp_t *nqp,
                                        umr_eng_mkey_t *umkey,
                                        unsigned access, unsigned num_sge,
                                        const umr_eng_sge_t *sge,
                                        uint64_t wr_id, unsigned flags)
{
    static const char *what = "UMR list";
    umr_eng_mlx5_qp_t *qp     = (umr_eng_mlx5_qp_t*)nqp;
    umr_eng_mlx5_mkey_t *mkey = ucs_derived_of(umkey, umr_eng_mlx5_mkey_t);
    uint64_t total            = 0;
    ucs_status_t status;
    unsigned i;

    status = umr_eng_mlx5_umr_check(qp, mkey, access, num_sge, qp->max_list,
                                    0, flags, what);
    if (status != UCS_OK) {
        return status;
    }

    if (sge == NULL) {
        ucs_error("%s: %s: sge must not be NULL", qp->dev->caps.name, what);
        return UCS_ERR_INVALID_PARAM;
    }

    for (i = 0; i < num_sge; ++i) {
        /* a zero length means 2 GiB to the NIC */
        if (sge[i].length == 0) {
            ucs_error("%s: %s: entry %u has length 0", qp->dev->caps.name,
                      what, i);
            return UCS_ERR_INVALID_PARAM;
        }
        total += sge[i].length;
    }

    if (total > UMR_ENG_MLX5_MAX_LIST_BYTES) {
        ucs_error("%s: %s: %lu bytes exceed %lu bytes", qp->dev->caps.name,
                  what, total, UMR_ENG_MLX5_MAX_LIST_BYTES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    return umr_eng_mlx5_umr_post(qp, mkey, access, 1, num_sge, NULL, sge,
                                 wr_id, flags, what);
}

ucs_status_t umr_eng_mlx5_post_local_inv(umr_eng_qp_t *nqp,
                                         umr_eng_mkey_t *umkey,
                                         uint64_t wr_id, unsigned flags)
{
    static const char *what = "LOCAL_INV";
    umr_eng_mlx5_qp_t *qp   = (umr_eng_mlx5_qp_t*)nqp;
    umr_eng_mlx5_wr_t *wr;
    ucs_status_t status;

    status = umr_eng_mlx5_post_check(qp, flags, what);
    if (status != UCS_OK) {
        return status;
    }

    status = umr_eng_mlx5_umr_allowed(qp, what);
    if (status != UCS_OK) {
        return status;
    }

    if (umkey == NULL) {
        ucs_error("%s: %s: mkey must not be NULL", qp->dev->caps.name, what);
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_mlx5_slot_check(qp);
    if (status != UCS_OK) {
        return status;
    }

    wr = umr_eng_mlx5_slot_get(qp, wr_id, UMR_ENG_OP_LOCAL_INV);
    umr_eng_mlx5_wr_begin(qp, wr, 0, umr_eng_mlx5_umr_fence(qp, flags));
    ibv_wr_local_inv(qp->qpx, umkey->lkey);
    return umr_eng_mlx5_wr_end(qp, what);
}

ucs_status_t umr_eng_mlx5_post_rdma(umr_eng_qp_t *nqp,
                                    umr_eng_opcode_t opcode,
                                    const umr_eng_sge_t *sge,
                                    unsigned num_sge, uint64_t remote_addr,
                                    uint32_t rkey, uint64_t wr_id,
                                    unsigned flags)
{
    umr_eng_mlx5_qp_t *qp = (umr_eng_mlx5_qp_t*)nqp;
    uint64_t total        = 0;
    const char *what;
    umr_eng_mlx5_wr_t *wr;
    ucs_status_t status;
    unsigned i;

    if (opcode == UMR_ENG_OP_RDMA_WRITE) {
        what = "RDMA_WRITE";
    } else if (opcode == UMR_ENG_OP_RDMA_READ) {
        what = "RDMA_READ";
    } else {
        ucs_error("%s: post_rdma: opcode %d is not an RDMA opcode",
                  qp->dev->caps.name, opcode);
        return UCS_ERR_INVALID_PARAM;
    }

    status = umr_eng_mlx5_post_check(qp, flags, what);
    if (status != UCS_OK) {
        return status;
    }

    if ((num_sge > 0) && (sge == NULL)) {
        ucs_error("%s: %s: sge must not be NULL", qp->dev->caps.name, what);
        return UCS_ERR_INVALID_PARAM;
    }

    if (num_sge > qp->max_sge) {
        ucs_error("%s: %s: %u SGEs exceed the QP limit %u",
                  qp->dev->caps.name, what, num_sge, qp->max_sge);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    for (i = 0; i < num_sge; ++i) {
        total += sge[i].length;
    }

    if (total > qp->dev->caps.max_msg) {
        ucs_error("%s: %s: %lu bytes exceed the message limit %lu",
                  qp->dev->caps.name, what, total, qp->dev->caps.max_msg);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    status = umr_eng_mlx5_slot_check(qp);
    if (status != UCS_OK) {
        return status;
    }

    wr = umr_eng_mlx5_slot_get(qp, wr_id, opcode);
    umr_eng_mlx5_wr_begin(qp, wr, 0, flags);
    if (opcode == UMR_ENG_OP_RDMA_WRITE) {
        ibv_wr_rdma_write(qp->qpx, rkey, remote_addr);
    } else {
        ibv_wr_rdma_read(qp->qpx, rkey, remote_addr);
    }
    ibv_wr_set_sge_list(qp->qpx, num_sge, (const struct ibv_sge*)sge);
    status = umr_eng_mlx5_wr_end(qp, what);
    if (status != UCS_OK) {
        return status;
    }

    ucs_trace_data("%s: QP 0x%x: %s %lu bytes -> 0x%lx rkey 0x%x",
                   qp->dev->caps.name, qp->qp->qp_num, what, total,
                   remote_addr, rkey);
    return UCS_OK;
}

umr_eng_wc_status_t umr_eng_mlx5_wc_status(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_SUCCESS:
        return UMR_ENG_WC_SUCCESS;
    case IBV_WC_LOC_LEN_ERR:
        return UMR_ENG_WC_LOC_LEN_ERR;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
        return UMR_ENG_WC_LOC_PROT_ERR;
    case IBV_WC_REM_ACCESS_ERR:
        return UMR_ENG_WC_REM_ACCESS_ERR;
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return UMR_ENG_WC_REM_OP_ERR;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR:
        return UMR_ENG_WC_RETRY_EXC_ERR;
    case IBV_WC_WR_FLUSH_ERR:
        return UMR_ENG_WC_WR_FLUSH_ERR;
    case IBV_WC_MW_BIND_ERR:
        return UMR_ENG_WC_MW_BIND_ERR;
    default:
        return UMR_ENG_WC_GENERAL_ERR;
    }
}

int umr_eng_mlx5_wc_opcode(enum ibv_wc_opcode opcode,
                           umr_eng_opcode_t *opcode_p)
{
    switch ((int)opcode) {
    case IBV_WC_RDMA_WRITE:
        *opcode_p = UMR_ENG_OP_RDMA_WRITE;
        return 1;
    case IBV_WC_RDMA_READ:
        *opcode_p = UMR_ENG_OP_RDMA_READ;
        return 1;
    case IBV_WC_LOCAL_INV:
        *opcode_p = UMR_ENG_OP_LOCAL_INV;
        return 1;
    case MLX5DV_WC_UMR:
        *opcode_p = UMR_ENG_OP_UMR;
        return 1;
    default:
        return 0;
    }
}

static void umr_eng_mlx5_wc_fill(umr_eng_mlx5_cq_t *cq, umr_eng_wc_t *wc)
{
    struct ibv_cq_ex *cqx = cq->cq;
    umr_eng_mlx5_wr_t *wr = (umr_eng_mlx5_wr_t*)(uintptr_t)cqx->wr_id;
    umr_eng_mlx5_qp_t *qp = wr->qp;
    enum ibv_wc_opcode hw_opcode;
    umr_eng_opcode_t opcode;

    wc->wr_id  = wr->wr_id;
    wc->qp     = (umr_eng_qp_t*)qp;
    wc->opcode = wr->opcode;
    wc->status = umr_eng_mlx5_wc_status(cqx->status);

    if (cqx->status == IBV_WC_SUCCESS) {
        /* the opcode is only valid on success */
        hw_opcode = ibv_wc_read_opcode(cqx);
        if (!umr_eng_mlx5_wc_opcode(hw_opcode, &opcode)) {
            ucs_error("%s: QP 0x%x: completion with unexpected opcode %d",
                      cq->dev->caps.name, qp->qp->qp_num, hw_opcode);
            wc->status = UMR_ENG_WC_GENERAL_ERR;
        } else if (opcode != wr->opcode) {
            ucs_error("%s: QP 0x%x: completion opcode %s, posted %s",
                      cq->dev->caps.name, qp->qp->qp_num,
                      umr_eng_opcode_str(opcode),
                      umr_eng_opcode_str(wr->opcode));
            wc->status = UMR_ENG_WC_GENERAL_ERR;
        }
    } else {
        if ((cqx->status == IBV_WC_LOC_QP_OP_ERR) &&
            (wr->opcode == UMR_ENG_OP_UMR)) {
            wc->status = UMR_ENG_WC_MW_BIND_ERR;
        }
        ucs_debug("%s: QP 0x%x: %s wr_id 0x%lx failed: %s (vendor 0x%x)",
                  cq->dev->caps.name, qp->qp->qp_num,
                  umr_eng_opcode_str(wr->opcode), wr->wr_id,
                  ibv_wc_status_str(cqx->status),
                  ibv_wc_read_vendor_err(cqx));
    }

    /* completions are in order: this one frees every earlier slot too */
    if (wr->seq >= qp->sq_tail) {
        qp->sq_tail = wr->seq + 1;
    }
}

int umr_eng_mlx5_cq_poll(umr_eng_cq_t *ncq, umr_eng_wc_t *wcs, int max)
{
    umr_eng_mlx5_cq_t *cq          = (umr_eng_mlx5_cq_t*)ncq;
    struct ibv_poll_cq_attr attr   = {};
    int n                          = 0;
    int ret;

    if ((max < 0) || ((wcs == NULL) && (max > 0))) {
        ucs_error("%s: cq_poll: invalid wcs %p / max %d", cq->dev->caps.name,
                  wcs, max);
        return UCS_ERR_INVALID_PARAM;
    }

    if (max == 0) {
        return 0;
    }

    ret = ibv_start_poll(cq->cq, &attr);
    if (ret == ENOENT) {
        return 0;
    } else if (ret) {
        ucs_error("%s: ibv_start_poll() failed: %s", cq->dev->caps.name,
                  strerror(ret));
        return UCS_ERR_IO_ERROR;
    }

    for (;;) {
        umr_eng_mlx5_wc_fill(cq, &wcs[n++]);
        if (n == max) {
            break;
        }
        ret = ibv_next_poll(cq->cq);
        if (ret) {
            break;
        }
    }
    ibv_end_poll(cq->cq);

    if (ret && (ret != ENOENT)) {
        /* keep what was polled: those completions are real */
        ucs_error("%s: ibv_next_poll() failed: %s", cq->dev->caps.name,
                  strerror(ret));
    }
    return n;
}
