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
#include "common_umr_keys.h"
#include "common_umr_rail.h"

#include <ompi/mca/pml/pml.h>

#include <stdlib.h>
#include <string.h>

mca_osc_umr_attached_t *mca_osc_umr_dyn_find(mca_osc_umr_win_t *w,
                                             uintptr_t lo, uintptr_t hi)
{
    size_t i;

    for (i = 0; i < w->natt; ++i) {
        if ((lo >= (uintptr_t)w->att[i].base) &&
            (hi <= (uintptr_t)w->att[i].base + w->att[i].len)) {
            return &w->att[i];
        }
    }
    return NULL;
}

static void mca_osc_umr_att_release(mca_osc_umr_attached_t *att)
{
    int i;

    for (i = 0; i < MCA_COMMON_UMR_MAX_RAILS; ++i) {
        if (att->regions[i] != NULL) {
            mca_common_umr_region_put(att->regions[i]);
            att->regions[i] = NULL;
        }
    }
}

int mca_osc_umr_attach(ompi_win_t *win, void *base, size_t len)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    mca_osc_umr_attached_t att = {.base = base, .len = len}, *p;
    int rc, i;

    rc = w->real.osc_win_attach(win, base, len);
    if ((rc != OMPI_SUCCESS) || (len < MCA_OSC_UMR_DYN_MIN_ATTACH)) {
        /* small regions stay the wrapped module's: no allocation of ours
         * between the user's (see osc_umr_dyn.h) */
        return rc;
    }
    for (i = 0; i < mca_common_umr_rails.nrails; ++i) {
        if (mca_common_umr_region_get(&mca_common_umr_rails.rails[i], base,
                                      len, PROT_READ | PROT_WRITE,
                                      &att.regions[i], NULL) != OMPI_SUCCESS) {
            att.regions[i] = NULL;
            goto unregistered;
        }
    }
    if (w->natt == w->att_cap) {
        size_t cap = w->att_cap ? 2 * w->att_cap : 8;

        p = realloc(w->att, cap * sizeof(*p));
        if (p == NULL) {
            goto unregistered;
        }
        w->att     = p;
        w->att_cap = cap;
    }
    w->att[w->natt++] = att;
    ++mca_osc_umr.cnt.attached;
    MCA_OSC_UMR_VERBOSE(10, "attached %zu bytes at %p", len, base);
    return OMPI_SUCCESS;

unregistered:
    /* the wrapped module has it: keys for it are refused */
    MCA_OSC_UMR_VERBOSE(5, "attached %zu bytes at %p not registered: "
                        "through the wrapped module", len, base);
    mca_osc_umr_att_release(&att);
    return OMPI_SUCCESS;
}

/* Tell every origin that got a key since the last detach to drop them, and
 * wait until each has matched it. */
static void mca_osc_umr_dyn_invalidate(mca_osc_umr_win_t *w,
                                       const mca_osc_umr_attached_t *att)
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
        if (MCA_PML_CALL(isend(msg, sizeof(*msg), MPI_BYTE, i,
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
    size_t i, k;

    for (i = w->natt; i-- > 0;) {
        if (w->att[i].base != base) {
            continue;
        }
        mca_osc_umr_dyn_invalidate(w, &w->att[i]);
        mca_osc_umr_packed_dst_detach(w, base);
        for (k = w->ntkeys; k-- > 0;) {
            if (w->tkeys[k].att_base == base) {
                mca_common_umr_lkey_drop(w->tkeys[k].region,
                                         w->tkeys[k].lkey);
                w->tkeys[k] = w->tkeys[--w->ntkeys];
            }
        }
        mca_osc_umr_att_release(&w->att[i]);
        w->att[i] = w->att[--w->natt];
        MCA_OSC_UMR_VERBOSE(10, "detached %p: keys over it given back",
                            base);
        break;
    }
    return w->real.osc_win_detach(win, base);
}

static int mca_osc_umr_inval_post(mca_osc_umr_win_t *w)
{
    return MCA_PML_CALL(irecv(&w->inval, sizeof(w->inval), MPI_BYTE,
                              MPI_ANY_SOURCE, MCA_OSC_UMR_TAG_INVAL, w->comm,
                              &w->inval_req));
}

int mca_osc_umr_dyn_init(mca_osc_umr_win_t *w)
{
    if (mca_osc_umr_inval_post(w) != OMPI_SUCCESS) {
        w->inval_req = NULL;
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
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
    size_t i;

    if (w->inval_req != NULL) {
        ompi_request_cancel(w->inval_req);
        ompi_request_wait_completion(w->inval_req);
        ompi_request_free(&w->inval_req);
    }
    for (i = 0; i < w->natt; ++i) {
        mca_osc_umr_att_release(&w->att[i]);
    }
    w->natt = 0;
}
