/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Fault injection under an mlx5_umr md (see umr_test_eng_fault.h).
 */
#include "umr_config.h"

#include "umr_test_eng_fault.h"

#include "umr_md.h"

#include <string.h>

#define UMR_TEST_FAULT_MAX_LIVE 64

static const umr_eng_ops_t *umr_test_fault_real;
static umr_eng_ops_t       umr_test_fault_ops;
static umr_test_eng_fault_t *umr_test_fault;
static void *umr_test_fault_live[UMR_TEST_FAULT_MAX_LIVE];

static void umr_test_fault_add_live(void *obj)
{
    unsigned i;

    for (i = 0; i < UMR_TEST_FAULT_MAX_LIVE; ++i) {
        if (umr_test_fault_live[i] == NULL) {
            umr_test_fault_live[i] = obj;
            return;
        }
    }
}

/* Was obj alive (and now is not)? */
static int umr_test_fault_del_live(void *obj)
{
    unsigned i;

    for (i = 0; (obj != NULL) && (i < UMR_TEST_FAULT_MAX_LIVE); ++i) {
        if (umr_test_fault_live[i] == obj) {
            umr_test_fault_live[i] = NULL;
            return 1;
        }
    }
    return 0;
}

static ucs_status_t umr_test_fault_cq_create(umr_eng_dev_t *dev, unsigned size,
                                             umr_eng_cq_t **cq_p)
{
    ucs_status_t status = umr_test_fault_real->cq_create(dev, size, cq_p);

    if (status == UCS_OK) {
        ++umr_test_fault->cq_created;
        umr_test_fault_add_live(*cq_p);
    }
    return status;
}

static void umr_test_fault_cq_destroy(umr_eng_cq_t *cq)
{
    if (!umr_test_fault_del_live(cq)) {
        ++umr_test_fault->bad_destroys; /* never hand it to the engine */
        return;
    }
    ++umr_test_fault->cq_destroyed;
    umr_test_fault_real->cq_destroy(cq);
}

/* wr_ids posted while completions were held (late when polled after) */
#define UMR_TEST_FAULT_MAX_HELD 256
static uint64_t umr_test_fault_held[UMR_TEST_FAULT_MAX_HELD];
static unsigned umr_test_fault_nheld;

static void umr_test_fault_posted(ucs_status_t status, uint64_t wr_id)
{
    if ((status == UCS_OK) && umr_test_fault->hold_wcs &&
        (umr_test_fault_nheld < UMR_TEST_FAULT_MAX_HELD)) {
        umr_test_fault_held[umr_test_fault_nheld++] = wr_id;
    }
}

static int umr_test_fault_cq_poll(umr_eng_cq_t *cq, umr_eng_wc_t *wcs, int max)
{
    unsigned j;
    int i, n;

    if (umr_test_fault->hold_wcs) {
        return 0;
    }

    n = umr_test_fault_real->cq_poll(cq, wcs, max);
    for (i = 0; i < n; ++i) {
        for (j = 0; j < umr_test_fault_nheld; ++j) {
            umr_test_fault->late_wcs += (wcs[i].wr_id == umr_test_fault_held[j]);
        }
    }
    for (i = 0; (i < n) && (umr_test_fault->fail_wcs > 0); ++i) {
        wcs[i].status = UMR_ENG_WC_GENERAL_ERR;
        --umr_test_fault->fail_wcs;
    }
    return n;
}

static ucs_status_t
umr_test_fault_post_umr_interleaved(umr_eng_qp_t *qp, umr_eng_mkey_t *mkey,
                                    unsigned access, uint32_t repeat,
                                    unsigned num_entries,
                                    const umr_eng_interleaved_t *entries,
                                    uint64_t wr_id, unsigned flags)
{
    ucs_status_t status = umr_test_fault_real->post_umr_interleaved(
            qp, mkey, access, repeat, num_entries, entries, wr_id, flags);

    umr_test_fault_posted(status, wr_id);
    return status;
}

static ucs_status_t
umr_test_fault_post_umr_list(umr_eng_qp_t *qp, umr_eng_mkey_t *mkey,
                             unsigned access, unsigned num_sge,
                             const umr_eng_sge_t *sge, uint64_t wr_id,
                             unsigned flags)
{
    ucs_status_t status = umr_test_fault_real->post_umr_list(
            qp, mkey, access, num_sge, sge, wr_id, flags);

    umr_test_fault_posted(status, wr_id);
    return status;
}

static ucs_status_t
umr_test_fault_post_local_inv(umr_eng_qp_t *qp, umr_eng_mkey_t *mkey,
                              uint64_t wr_id, unsigned flags)
{
    ucs_status_t status = umr_test_fault_real->post_local_inv(qp, mkey, wr_id,
                                                              flags);

    umr_test_fault_posted(status, wr_id);
    return status;
}

static ucs_status_t
umr_test_fault_qp_create(umr_eng_dev_t *dev, umr_eng_cq_t *cq,
                         const umr_eng_qp_params_t *params, umr_eng_qp_t **qp_p)
{
    ucs_status_t status;

    if (umr_test_fault->fail_qp_create > 0) {
        --umr_test_fault->fail_qp_create;
        return UCS_ERR_NO_MEMORY;
    }

    status = umr_test_fault_real->qp_create(dev, cq, params, qp_p);
    if (status == UCS_OK) {
        ++umr_test_fault->qp_created;
        umr_test_fault_add_live(*qp_p);
    }
    return status;
}

static void umr_test_fault_qp_destroy(umr_eng_qp_t *qp)
{
    if (!umr_test_fault_del_live(qp)) {
        ++umr_test_fault->bad_destroys;
        return;
    }
    ++umr_test_fault->qp_destroyed;
    umr_test_fault_real->qp_destroy(qp);
}

ucs_status_t umr_test_eng_fault_install(uct_md_h uct_md,
                                        umr_test_eng_fault_t *f)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);

    if ((md == NULL) || (f == NULL) || (umr_test_fault != NULL)) {
        return UCS_ERR_INVALID_PARAM;
    }

    umr_test_fault_real          = md->eng;
    umr_test_fault_ops           = *md->eng;
    umr_test_fault_ops.cq_create  = umr_test_fault_cq_create;
    umr_test_fault_ops.cq_destroy = umr_test_fault_cq_destroy;
    umr_test_fault_ops.cq_poll    = umr_test_fault_cq_poll;
    umr_test_fault_ops.qp_create  = umr_test_fault_qp_create;
    umr_test_fault_ops.qp_destroy = umr_test_fault_qp_destroy;
    umr_test_fault_ops.post_umr_interleaved =
            umr_test_fault_post_umr_interleaved;
    umr_test_fault_ops.post_umr_list  = umr_test_fault_post_umr_list;
    umr_test_fault_ops.post_local_inv = umr_test_fault_post_local_inv;
    umr_test_fault_nheld              = 0;
    umr_test_fault                = f;
    memset(umr_test_fault_live, 0, sizeof(umr_test_fault_live));
    /* the md's current QP and CQ were created before: alive */
    umr_test_fault_add_live(md->umr.qp);
    umr_test_fault_add_live(md->umr.cq);
    md->eng     = &umr_test_fault_ops;
    md->umr.eng = &umr_test_fault_ops;   /* the md's UMR QP (umr_qp.h) */
    return UCS_OK;
}

void umr_test_eng_fault_remove(uct_md_h uct_md)
{
    uct_mlx5_umr_md_t *md = uct_mlx5_umr_md_from_handle(uct_md);

    if ((md != NULL) && (md->eng == &umr_test_fault_ops)) {
        md->eng     = umr_test_fault_real;
        md->umr.eng = umr_test_fault_real;
    }
    umr_test_fault = NULL;
}
