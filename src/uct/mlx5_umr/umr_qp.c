/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * mlx5_umr transport: the md's UMR queue pair (see umr_qp.h).
 */
#include "umr_config.h"

#include "umr_qp.h"
#include "engine_fault.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <inttypes.h>
#include <string.h>


static void uct_mlx5_umr_qp_destroy(uct_mlx5_umr_qp_t *qp)
{
    if (qp->qp != NULL) {
        qp->eng->qp_destroy(qp->qp);
        qp->qp = NULL;
    }
    if (qp->cq != NULL) {
        qp->eng->cq_destroy(qp->cq);
        qp->cq = NULL;
    }
}

static ucs_status_t uct_mlx5_umr_qp_create(uct_mlx5_umr_qp_t *qp)
{
    uint64_t dev_addr[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];
    uint64_t qp_addr[UMR_ENG_ADDR_MAX / sizeof(uint64_t)];
    umr_eng_qp_params_t qp_params;
    ucs_status_t status;

    ucs_assert((qp->qp == NULL) && (qp->cq == NULL));
    status = qp->eng->cq_create(qp->dev, qp->config.queue_len * 2, &qp->cq);
    if (status != UCS_OK) {
        qp->cq = NULL;
        goto err;
    }

    memset(&qp_params, 0, sizeof(qp_params));   /* not rdma_only: UMR */
    qp_params.sq_size          = qp->config.queue_len;
    qp_params.max_sge          = 1;
    qp_params.umr_list_entries = qp->config.list_entries;
    status = qp->eng->qp_create(qp->dev, qp->cq, &qp_params, &qp->qp);
    if (status != UCS_OK) {
        qp->qp = NULL;
        goto err_destroy;
    }

    /* A UMR needs a QP in RTS: connect it to itself. */
    qp->eng->dev_get_addr(qp->dev, dev_addr);
    qp->eng->qp_get_addr(qp->qp, qp_addr);
    status = qp->eng->qp_connect(qp->qp, dev_addr, qp_addr);
    if (status != UCS_OK) {
        goto err_destroy;
    }

    return UCS_OK;

err_destroy:
    /* never keep a pointer to what was destroyed */
    uct_mlx5_umr_qp_destroy(qp);
err:
    ucs_error("mlx5_umr md %p: failed to create the UMR queue pair: %s",
              qp->md, ucs_status_string(status));
    return status;
}

ucs_status_t uct_mlx5_umr_qp_init(uct_mlx5_umr_qp_t *qp, const void *md,
                                  const umr_eng_ops_t *eng, umr_eng_dev_t *dev,
                                  const uct_mlx5_umr_qp_config_t *config)
{
    memset(qp, 0, sizeof(*qp));
    qp->eng    = eng;
    qp->dev    = dev;
    qp->md     = md;
    qp->config = *config;
    return uct_mlx5_umr_qp_create(qp);
}

void uct_mlx5_umr_qp_cleanup(uct_mlx5_umr_qp_t *qp)
{
    uct_mlx5_umr_qp_destroy(qp);
}

ucs_status_t uct_mlx5_umr_qp_get(uct_mlx5_umr_qp_t *qp)
{
    if (ucs_likely(qp->qp != NULL)) {
        return UCS_OK;
    }

    /* a reset could not create it: try again */
    return uct_mlx5_umr_qp_create(qp);
}

ucs_status_t uct_mlx5_umr_qp_reset(uct_mlx5_umr_qp_t *qp)
{
    ucs_status_t status;

    uct_mlx5_umr_qp_destroy(qp);
    status = uct_mlx5_umr_qp_create(qp);
    if (status != UCS_OK) {
        ucs_error("mlx5_umr md %p: the UMR queue pair is gone after an error "
                  "and could not be recreated (%s); layout registration "
                  "fails until it can be", qp->md, ucs_status_string(status));
    }
    return status;
}

ucs_status_t uct_mlx5_umr_qp_wait(uct_mlx5_umr_qp_t *qp, unsigned *outstanding,
                                  unsigned until)
{
    ucs_time_t deadline = ucs_get_time() + ucs_time_from_sec(qp->config.timeout);
    ucs_status_t status = UCS_OK;
    umr_eng_wc_t wc[16];
    int i, n;

    if (UMR_ENG_FAULT(UMR_ENG_FAULT_MDWAIT) && (*outstanding > until)) {
        /* (test variant) as a real timeout: the UMRs are still posted */
        ucs_error("mlx5_umr md %p: timed out waiting for %u UMRs (injected)",
                  qp->md, *outstanding);
        return UCS_ERR_TIMED_OUT;
    }
    while (*outstanding > until) {
        n = qp->eng->cq_poll(qp->cq, wc, ucs_min(16, *outstanding));
        if (n < 0) {
            return (ucs_status_t)n;
        }

        for (i = 0; i < n; ++i) {
            --(*outstanding);
            if ((wc[i].status != UMR_ENG_WC_SUCCESS) && (status == UCS_OK)) {
                /* the caller says what follows (a UMR: once, umr_key.c) */
                ucs_diag("mlx5_umr md %p: %s wr_id %" PRIu64 " failed: %s",
                         qp->md, umr_eng_opcode_str(wc[i].opcode),
                         wc[i].wr_id, umr_eng_wc_status_str(wc[i].status));
                status = umr_eng_wc_status_to_ucs(wc[i].status);
                if (qp->wc_error == UMR_ENG_WC_SUCCESS) {
                    qp->wc_error = wc[i].status;
                }
            }
        }

        if ((n == 0) && (ucs_get_time() > deadline)) {
            ucs_error("mlx5_umr md %p: timed out waiting for %u UMRs", qp->md,
                      *outstanding);
            return UCS_ERR_TIMED_OUT;
        }
    }

    return status;
}

ucs_status_t uct_mlx5_umr_qp_invalidate(uct_mlx5_umr_qp_t *qp,
                                        uct_mlx5_umr_mkey_t *const *mkeys,
                                        unsigned num_mkeys)
{
    ucs_status_t status  = UCS_OK;
    unsigned outstanding = 0;
    ucs_status_t wstatus;
    unsigned k;

    if (uct_mlx5_umr_qp_get(qp) != UCS_OK) {
        return UCS_ERR_IO_ERROR;
    }

    for (k = num_mkeys; k-- > 0;) {
        status = qp->eng->post_local_inv(qp->qp, mkeys[k]->eng, qp->sn++,
                                         UMR_ENG_WR_SIGNALED);
        if ((status == UCS_ERR_NO_RESOURCE) && (outstanding > 0)) {
            status = uct_mlx5_umr_qp_wait(qp, &outstanding, 0);
            if (status != UCS_OK) {
                break;
            }
            ++k; /* the queue drained: post this key again */
            continue;
        } else if (status != UCS_OK) {
            break;
        }
        ++outstanding;
    }

    if (status != UCS_OK) {
        ucs_error("mlx5_umr md %p: local invalidate failed: %s", qp->md,
                  ucs_status_string(status));
    }

    wstatus = uct_mlx5_umr_qp_wait(qp, &outstanding, 0);
    if (status == UCS_OK) {
        status = wstatus;
    }
    if (wstatus != UCS_OK) {
        /* also after a timeout: the late completions must not reach the
         * next wait (logged; retried on next use) */
        (void)uct_mlx5_umr_qp_reset(qp);
    }
    if (status == UCS_OK) {
        /* free again: the pool may hand them to a UMR at once */
        for (k = 0; k < num_mkeys; ++k) {
            mkeys[k]->configured = 0;
        }
    }
    return status;
}
