/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: dynamic windows (see osc_umr_dyn.h).
 */
#include "osc_umr_dyn.h"
#include "osc_umr_key.h"
#include "osc_umr_packed.h"

#include <ompi/mca/pml/pml.h>

#include <stdlib.h>
#include <string.h>

int mca_osc_umr_attach(ompi_win_t *win, void *base, size_t len)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    int rc;

    rc = w->real.osc_win_attach(win, base, len);
    if ((rc != OMPI_SUCCESS) || (len < MCA_OSC_UMR_DYN_MIN_ATTACH)) {
        /* small regions stay the wrapped module's: no allocation of ours
         * between the user's (see osc_umr_dyn.h) */
        return rc;
    }
    if (umr_mpi_rma_mem_attach(&w->mem, base, len) != 0) {
        /* the wrapped module has it: keys for it are refused */
        MCA_OSC_UMR_VERBOSE(5, "attached %zu bytes at %p not registered: "
                            "through the wrapped module", len, base);
        return OMPI_SUCCESS;
    }
    ++mca_osc_umr.cnt.attached;
    MCA_OSC_UMR_VERBOSE(10, "attached %zu bytes at %p", len, base);
    return OMPI_SUCCESS;
}

/* Tell every origin that got a key since the last detach to drop them, and
 * wait until each has matched it. */
static void mca_osc_umr_dyn_invalidate(mca_osc_umr_win_t *w,
                                       const umr_mpi_rma_att_t *att)
{
    ompi_request_t **reqs = calloc(w->size, sizeof(*reqs));
    mca_osc_umr_inval_t *msg = calloc(1, sizeof(*msg));
    int i, n = 0;

    if ((reqs == NULL) || (msg == NULL)) {
        goto out;
    }
    msg->magic = MCA_OSC_UMR_INVAL_MAGIC;
    msg->base  = (uintptr_t)att->base;
    msg->len   = att->len;
    for (i = 0; i < w->size; ++i) {
        if (!w->tkey_given[i]) {
            continue;
        }
        if (MCA_OSC_UMR_PML_CALL(isend(msg, sizeof(*msg), MPI_BYTE, i,
                                       MCA_OSC_UMR_TAG_INVAL,
                                       MCA_PML_BASE_SEND_SYNCHRONOUS, w->comm,
                                       &reqs[n])) == OMPI_SUCCESS) {
            ++n;
            ++mca_osc_umr.cnt.invals_sent;
        }
        w->tkey_given[i] = 0;
    }
    if (n > 0) {
        (void)ompi_request_wait_all(n, reqs, MPI_STATUSES_IGNORE);
    }
out:
    free(reqs);
    free(msg);
}

int mca_osc_umr_detach(ompi_win_t *win, const void *base)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    const umr_mpi_rma_att_t *att = umr_mpi_rma_mem_attached(&w->mem, base);

    if (att != NULL) {
        mca_osc_umr_dyn_invalidate(w, att);
        mca_osc_umr_packed_dst_detach(w, base);
        umr_mpi_rma_mem_detach(&w->mem, base);
        MCA_OSC_UMR_VERBOSE(10, "detached %p: keys over it given back",
                            base);
    }
    return w->real.osc_win_detach(win, base);
}

static int mca_osc_umr_inval_post(mca_osc_umr_win_t *w)
{
    return mca_osc_umr_win_listen(w, &w->inval, sizeof(w->inval),
                                  MCA_OSC_UMR_TAG_INVAL, &w->inval_req);
}

int mca_osc_umr_dyn_init(mca_osc_umr_win_t *w)
{
    return mca_osc_umr_inval_post(w);
}

int mca_osc_umr_dyn_check(mca_osc_umr_win_t *w)
{
    ompi_request_t *req = w->inval_req;
    int src, detached = -1;

    if ((req == NULL) || !REQUEST_COMPLETE(req)) {
        return -1;
    }
    w->inval_req = NULL;
    src = req->req_status.MPI_SOURCE;
    if (!req->req_status._cancelled && (src >= 0) && (src < w->size) &&
        (w->inval.magic == MCA_OSC_UMR_INVAL_MAGIC)) {
        MCA_OSC_UMR_VERBOSE(10, "rank %d detached %p (%lu bytes): its keys "
                            "dropped", src, (void*)(uintptr_t)w->inval.base,
                            (unsigned long)w->inval.len);
        ++mca_osc_umr.cnt.invals_received;
        detached = src;
    }
    ompi_request_free(&req);
    if (mca_osc_umr_inval_post(w) != OMPI_SUCCESS) {
        /* no more invalidations can arrive: never use a key again */
        w->inval_req = NULL;
        w->dynamic_broken = 1;
        MCA_OSC_UMR_VERBOSE(1, "window %p: the receive of detach notices "
                            "cannot be posted again: its keys are never "
                            "used again", (void*)w->win);
    }
    return detached;
}

void mca_osc_umr_dyn_fini(mca_osc_umr_win_t *w)
{
    if (w->inval_req != NULL) {
        ompi_request_cancel(w->inval_req);
        ompi_request_wait_completion(w->inval_req);
        ompi_request_free(&w->inval_req);
    }
}
