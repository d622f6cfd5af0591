/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: what is handed back to the wrapped module (see osc_umr_redo.h).
 */
#include "osc_umr_redo.h"

#include <ompi/constants.h>
#include <ompi/datatype/ompi_datatype.h>

#include <stdlib.h>

/* ---------------------------------------------------------------- requests
 * MPI_Rput/MPI_Rget requests of zero-copy operations: complete when the
 * operation is (local and remote completion at once). */

static int mca_osc_umr_request_free(ompi_request_t **req_p)
{
    ompi_request_t *req = *req_p;

    if (!REQUEST_COMPLETE(req)) {
        return MPI_ERR_REQUEST;
    }
    OMPI_REQUEST_FINI(req);
    OBJ_RELEASE(req);
    *req_p = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int mca_osc_umr_request_cancel(ompi_request_t *req, int complete)
{
    return MPI_ERR_REQUEST;   /* as osc/rdma: RMA requests are not cancelled */
}

ompi_request_t *mca_osc_umr_request_new(ompi_win_t *win)
{
    ompi_request_t *req = OBJ_NEW(ompi_request_t);

    if (req == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(req, false);
    req->req_type                  = OMPI_REQUEST_WIN;
    req->req_status._cancelled     = 0;
    req->req_free                  = mca_osc_umr_request_free;
    req->req_cancel                = mca_osc_umr_request_cancel;
    req->req_mpi_object.win        = win;
    req->req_state                 = OMPI_REQUEST_ACTIVE;
    return req;
}

void mca_osc_umr_request_done(ompi_request_t *req, int error)
{
    req->req_status.MPI_ERROR = error;
    ompi_request_complete(req, true);
}

/* ------------------------------------------------------------------ calls */

void mca_osc_umr_call_keep(mca_osc_umr_call_t *c,
                           const mca_osc_umr_call_t *from)
{
    *c = *from;
    OMPI_DATATYPE_RETAIN(c->origin_dt);
    OMPI_DATATYPE_RETAIN(c->target_dt);
}

void mca_osc_umr_call_drop(mca_osc_umr_call_t *c)
{
    OMPI_DATATYPE_RELEASE(c->origin_dt);
    OMPI_DATATYPE_RELEASE(c->target_dt);
}

int mca_osc_umr_call_real(mca_osc_umr_win_t *w, const mca_osc_umr_call_t *c,
                          ompi_request_t **req_p)
{
    if (req_p != NULL) {
        return c->is_put ?
               w->real.osc_rput(c->origin_addr, c->origin_count, c->origin_dt,
                                c->target, c->target_disp, c->target_count,
                                c->target_dt, w->win, req_p) :
               w->real.osc_rget(c->origin_addr, c->origin_count, c->origin_dt,
                                c->target, c->target_disp, c->target_count,
                                c->target_dt, w->win, req_p);
    }
    return c->is_put ?
           w->real.osc_put(c->origin_addr, c->origin_count, c->origin_dt,
                           c->target, c->target_disp, c->target_count,
                           c->target_dt, w->win) :
           w->real.osc_get(c->origin_addr, c->origin_count, c->origin_dt,
                           c->target, c->target_disp, c->target_count,
                           c->target_dt, w->win);
}

/* An operation that carries the user's call, for zero-copy or to redo. */
mca_osc_umr_op_t *mca_osc_umr_op_new(mca_osc_umr_win_t *w,
                                            const mca_osc_umr_call_t *c,
                                            ompi_request_t *req)
{
    mca_osc_umr_op_t *op = calloc(1, sizeof(*op));

    if (op == NULL) {
        return NULL;
    }
    OBJ_CONSTRUCT(&op->super, opal_list_item_t);
    op->w   = w;
    op->req = req;
    mca_osc_umr_call_keep(&op->call, c);
    return op;
}

/* Redo a failed operation through the wrapped module (an MPI_Rput/MPI_Rget
 * through its request form: op->redo_req). */
int mca_osc_umr_op_redo(mca_osc_umr_op_t *op)
{
    return mca_osc_umr_call_real(op->w, &op->call,
                                 (op->req != NULL) ? &op->redo_req : NULL);
}

void mca_osc_umr_op_free(mca_osc_umr_op_t *op, int error)
{
    if (op->req != NULL) {
        mca_osc_umr_request_done(op->req, error);
    }
    mca_osc_umr_call_drop(&op->call);
    OBJ_DESTRUCT(&op->super);
    free(op);
}

/* A failed operation with a request: redone through the wrapped module's
 * request form; the user's request completes with that one. 1 when done. */
int mca_osc_umr_op_redo_step(mca_osc_umr_op_t *op, int wait)
{
    int rc;

    if (op->redo_req == NULL) {
        rc = mca_osc_umr_op_redo(op);
        if ((rc != OMPI_SUCCESS) || (op->redo_req == NULL)) {
            mca_osc_umr_op_free(op, (rc != OMPI_SUCCESS) ? rc : OMPI_SUCCESS);
            return 1;
        }
    }
    if (wait) {
        ompi_request_wait_completion(op->redo_req);
    } else if (!REQUEST_COMPLETE(op->redo_req)) {
        return 0;
    }
    rc = op->redo_req->req_status.MPI_ERROR;
    ompi_request_free(&op->redo_req);
    mca_osc_umr_op_free(op, rc);
    return 1;
}

void mca_osc_umr_redo_progress(mca_osc_umr_win_t *w)
{
    mca_osc_umr_op_t *op, *next;

    OPAL_LIST_FOREACH_SAFE(op, next, &w->failed, mca_osc_umr_op_t) {
        if (op->req != NULL) {
            opal_list_remove_item(&w->failed, &op->super);
            if (!mca_osc_umr_op_redo_step(op, 0)) {
                opal_list_append(&w->failed, &op->super);  /* later */
            }
        }
    }
}

void mca_osc_umr_redo_later(mca_osc_umr_win_t *w,
                                const mca_osc_umr_call_t *c,
                                ompi_request_t *req)
{
    mca_osc_umr_op_t *op = mca_osc_umr_op_new(w, c, req);
    int rc;

    if (op == NULL) {
        /* no memory to wait: redone now, through the wrapped module */
        rc = mca_osc_umr_call_real(w, c, NULL);
        if (req != NULL) {
            if (rc == OMPI_SUCCESS) {
                rc = w->real.osc_flush(c->target, w->win);
            }
            mca_osc_umr_request_done(req, rc);
        }
        return;
    }
    opal_list_append(&w->failed, &op->super);
}
