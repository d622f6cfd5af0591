/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr: put and get (see osc_umr_rma.h).
 */
#include "osc_umr_rma.h"
#include "osc_umr_dyn.h"
#include "osc_umr_key.h"
#include "common_umr_dtype.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_keys.h"
#include "umr_mpi_peer.h"

#include "uct_umr.h"

#include <ompi/constants.h>
#include <ompi/datatype/ompi_datatype.h>

#include <stdlib.h>

/* One zero-copy operation in flight (posted, or waiting for room on its
 * queue); kept on failure to be redone. */
typedef struct mca_osc_umr_op {
    opal_list_item_t        super;     /* in w->failed */
    umr_mpi_work_t          work;      /* its post again, in progress */
    uct_completion_t        comp;
    mca_osc_umr_win_t       *w;
    mca_osc_umr_key_t       *key;
    umr_mpi_peer_t          *peer;
    umr_mpi_region_t        *region;
    const umr_layout_t      *layout;   /* the origin's (its type retained) */
    size_t                  length;
    int                     is_put;
    int                     target;
    void                    *origin_addr;
    umr_ompi_osc_count_t    origin_count, target_count;
    ompi_datatype_t         *origin_dt, *target_dt;
    ptrdiff_t               target_disp;
    ompi_request_t          *req;      /* MPI_Rput/MPI_Rget: the user's */
    ompi_request_t          *redo_req; /* the wrapped module's, when redone */
} mca_osc_umr_op_t;

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

static ompi_request_t *mca_osc_umr_request_new(ompi_win_t *win)
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

static void mca_osc_umr_request_done(ompi_request_t *req, int error)
{
    req->req_status.MPI_ERROR = error;
    ompi_request_complete(req, true);
}

/* Redo a failed operation through the wrapped module (an MPI_Rput/MPI_Rget
 * through its request form: op->redo_req). */
static int mca_osc_umr_op_redo(mca_osc_umr_op_t *op)
{
    mca_osc_umr_win_t *w = op->w;

    if (op->req != NULL) {
        return op->is_put ?
               w->real.osc_rput(op->origin_addr, op->origin_count,
                                op->origin_dt, op->target, op->target_disp,
                                op->target_count, op->target_dt, w->win,
                                &op->redo_req) :
               w->real.osc_rget(op->origin_addr, op->origin_count,
                                op->origin_dt, op->target, op->target_disp,
                                op->target_count, op->target_dt, w->win,
                                &op->redo_req);
    }
    return op->is_put ?
           w->real.osc_put(op->origin_addr, op->origin_count, op->origin_dt,
                           op->target, op->target_disp, op->target_count,
                           op->target_dt, w->win) :
           w->real.osc_get(op->origin_addr, op->origin_count, op->origin_dt,
                           op->target, op->target_disp, op->target_count,
                           op->target_dt, w->win);
}

static void mca_osc_umr_op_free(mca_osc_umr_op_t *op, int error)
{
    if (op->req != NULL) {
        mca_osc_umr_request_done(op->req, error);
    }
    OMPI_DATATYPE_RELEASE(op->origin_dt);
    OMPI_DATATYPE_RELEASE(op->target_dt);
    OBJ_DESTRUCT(&op->super);
    free(op);
}

static void mca_osc_umr_op_done(uct_completion_t *comp)
{
    mca_osc_umr_op_t *op  = ucs_container_of(comp, mca_osc_umr_op_t, comp);
    mca_osc_umr_win_t *w  = op->w;

    --w->inflight[op->target];
    --w->inflight_total;
    umr_mpi_region_put(op->region);
    op->region = NULL;
    if (comp->status == UCS_OK) {
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        return;
    }
    /* redone through the wrapped module by the next synchronisation; the
     * key is not used again */
    ++mca_osc_umr.cnt.zcopy_errors;
    MCA_OSC_UMR_VERBOSE(1, "%s to %d failed (%s): redone through the wrapped "
                        "module", op->is_put ? "put" : "get", op->target,
                        ucs_status_string(comp->status));
    mca_osc_umr_key_refuse(op->key);
    opal_list_append(&w->failed, &op->super);
}

/* Post `op` once: UCS_INPROGRESS (completion from progress), UCS_OK
 * (done), UCS_ERR_NO_RESOURCE (its queue is full), or an error (nothing
 * moved). Called, not taken by address: the module that defines the
 * transport's functions is loaded by the core after this component (lazy
 * binding). */
static ucs_status_t mca_osc_umr_op_post(mca_osc_umr_op_t *op)
{
    if (op->is_put) {
        return uct_umr_ep_put_layout(op->peer->ep, op->region->memh,
                                     op->origin_addr, op->layout,
                                     op->origin_count, 0, op->length, 0,
                                     op->key->rkey, &op->comp);
    }
    return uct_umr_ep_get_layout(op->peer->ep, op->region->memh,
                                 op->origin_addr, op->layout,
                                 op->origin_count, 0, op->length, 0,
                                 op->key->rkey, &op->comp);
}

/* An operation whose queue was full, posted again from progress: it stays
 * in flight until then (a synchronisation waits for it), never spins. */
static void mca_osc_umr_op_retry(umr_mpi_work_t *work)
{
    mca_osc_umr_op_t *op = ucs_container_of(work, mca_osc_umr_op_t, work);
    ucs_status_t status  = mca_osc_umr_op_post(op);

    if (status == UCS_ERR_NO_RESOURCE) {
        umr_mpi_work_post(&op->work);   /* at the next progress */
        return;
    }
    umr_mpi_progress_ref(-1);
    if (status != UCS_INPROGRESS) {
        op->comp.status = status;
        mca_osc_umr_op_done(&op->comp);
    }
}

/* Start the operation zero-copy: 1 (taken; *op_p the operation in flight,
 * or NULL when it completed at once), or 0 (the caller uses the wrapped
 * module). */
static int mca_osc_umr_rma_start(mca_osc_umr_win_t *w, int is_put,
                                 void *origin_addr,
                                 umr_ompi_osc_count_t origin_count,
                                 ompi_datatype_t *origin_dt, int target,
                                 ptrdiff_t target_disp,
                                 umr_ompi_osc_count_t target_count,
                                 ompi_datatype_t *target_dt,
                                 mca_osc_umr_op_t **op_p)
{
    const umr_mpi_dtype_t *oinfo, *tinfo;
    umr_mpi_peer_t *peer;
    umr_mpi_region_t *region;
    mca_osc_umr_key_t *key;
    mca_osc_umr_op_t *op;
    ucs_status_t status;
    size_t length;

    if ((target == w->rank) || (origin_count <= 0) || (target_count <= 0) ||
        (target < 0) || (target >= w->size)) {
        goto real;
    }
    length = origin_dt->super.size * (size_t)origin_count;
    if ((length != target_dt->super.size * (size_t)target_count) ||
        (length < mca_osc_umr.min_size)) {
        goto real;
    }
    if (w->dynamic) {
        ptrdiff_t lb, extent, tlb, textent;

        /* dynamic windows: nothing below one page of target span (never
         * registered by the target, osc_umr_dyn.h; and keys of tiny
         * accesses at ever new addresses, as linked lists make, would
         * only fill the cache) */
        ompi_datatype_get_extent(target_dt, &lb, &extent);
        ompi_datatype_get_true_extent(target_dt, &tlb, &textent);
        if (textent + (ptrdiff_t)(target_count - 1) * extent <
            MCA_OSC_UMR_DYN_MIN_ATTACH) {
            goto real;
        }
    }
    if ((mca_osc_umr.zcopy_mode == MCA_OSC_UMR_ZCOPY_AUTO) &&
        ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count) &&
        ompi_datatype_is_contiguous_memory_layout(target_dt, target_count)) {
        goto real;   /* one block: the wrapped module does as well */
    }
    oinfo = mca_common_umr_type(origin_dt);
    tinfo = mca_common_umr_type(target_dt);
    if ((oinfo == NULL) || (oinfo->layout == NULL) || (tinfo == NULL) ||
        (tinfo->layout == NULL)) {
        goto real;
    }
    peer = umr_mpi_peer_get(mca_common_umr_world_rank(w->comm, target));
    if (peer == NULL) {
        goto real;
    }
    if (umr_mpi_choose_rma(is_put ? UMR_MPI_OP_PUT : UMR_MPI_OP_GET,
                           w->osc_costs, mca_osc_umr.zcopy_mode,
                           mca_common_umr_type_key(origin_dt), oinfo,
                           origin_count, mca_common_umr_type_key(target_dt),
                           tinfo, target_count, peer) != UMR_MPI_ZCOPY) {
        goto pass;   /* the wrapped module is as fast (umr_mpi_choice.h) */
    }
    if (w->dynamic) {
        /* a detach the target told us about drops its keys first */
        mca_osc_umr_keys_check_detach(w);
        if (w->dynamic_broken) {
            goto pass;
        }
    }
    key = mca_osc_umr_key_get(w, peer, target, target_disp, target_dt,
                              tinfo->layout, target_count);
    if ((key == NULL) || !peer->ready) {
        goto pass;
    }
    if (umr_mpi_region_acquire(peer->rail, origin_addr, oinfo, origin_count,
                               &region) != UCS_OK) {
        goto pass;
    }
    op = malloc(sizeof(*op));
    if (op == NULL) {
        umr_mpi_region_put(region);
        goto pass;
    }
    OBJ_CONSTRUCT(&op->super, opal_list_item_t);
    op->work.run      = mca_osc_umr_op_retry;
    op->comp.func     = mca_osc_umr_op_done;
    op->comp.count    = 1;
    op->comp.status   = UCS_OK;
    op->w             = w;
    op->key           = key;
    op->peer          = peer;
    op->region        = region;
    op->layout        = oinfo->layout;
    op->length        = length;
    op->is_put        = is_put;
    op->target        = target;
    op->origin_addr   = origin_addr;
    op->origin_count  = origin_count;
    op->origin_dt     = origin_dt;
    op->target_count  = target_count;
    op->target_dt     = target_dt;
    op->target_disp   = target_disp;
    op->req           = NULL;
    op->redo_req      = NULL;
    OMPI_DATATYPE_RETAIN(origin_dt);
    OMPI_DATATYPE_RETAIN(target_dt);
    /* in flight from now: its completion (maybe at once) counts it out */
    ++w->inflight[target];
    ++w->inflight_total;
    status = mca_osc_umr_op_post(op);
    if (status == UCS_ERR_NO_RESOURCE) {
        /* its queue is full: posted again from progress */
        umr_mpi_work_post(&op->work);
        umr_mpi_progress_ref(1);
        *op_p = op;
    } else if (status == UCS_INPROGRESS) {
        *op_p = op;
    } else if (status == UCS_OK) {
        mca_osc_umr_op_done(&op->comp);
        *op_p = NULL;
    } else {
        MCA_OSC_UMR_VERBOSE(1, "%s to %d not posted (%s): through the wrapped "
                            "module", is_put ? "put" : "get", target,
                            ucs_status_string(status));
        --w->inflight[target];
        --w->inflight_total;
        ++mca_osc_umr.cnt.zcopy_errors;
        mca_osc_umr_key_refuse(key);
        umr_mpi_region_put(region);
        mca_osc_umr_op_free(op, OMPI_SUCCESS);
        goto pass;
    }
    if (is_put) {
        ++mca_osc_umr.cnt.zcopy_puts;
    } else {
        ++mca_osc_umr.cnt.zcopy_gets;
    }
    mca_osc_umr.cnt.zcopy_bytes += length;
    return 1;

pass:
    ++mca_osc_umr.cnt.passthrough;
real:
    return 0;
}

/* Whether the bytes `count` elements of `dt` touch at displacement `disp`
 * of a created window's target lie in that target's window (as osc/rdma
 * checks, both ends here; osc/ucx checks nothing and would write past the
 * window). Nothing is touched by an empty operation; an unknown target and
 * dynamic windows are the wrapped module's to judge. A few loads and
 * compares: the in-window path pays nothing measurable. */
static inline int mca_osc_umr_rma_in_range(const mca_osc_umr_win_t *w,
                                           int target, ptrdiff_t disp,
                                           umr_ompi_osc_count_t count,
                                           const ompi_datatype_t *dt)
{
    const opal_datatype_t *d = &dt->super;
    const mca_osc_umr_extent_t *ext;
    ptrdiff_t rep, off, first, last, lo, hi;

    if (w->dynamic || (count <= 0) || (d->size == 0) || (target < 0) ||
        (target >= w->size)) {
        return 1;
    }
    ext = &w->extents[target];
    /* the touched bytes of count elements: [true_lb, true_ub) of the first
     * one, stretched by (count - 1) extents (either sign) */
    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), d->ub - d->lb, &rep) ||
        __builtin_add_overflow(d->true_lb, (rep < 0) ? rep : 0, &first) ||
        __builtin_add_overflow(d->true_ub, (rep > 0) ? rep : 0, &last) ||
        __builtin_mul_overflow(disp, (ptrdiff_t)ext->disp_unit, &off) ||
        __builtin_add_overflow(off, first, &lo) ||
        __builtin_add_overflow(off, last, &hi)) {
        return 0;   /* no window reaches that far */
    }
    return (lo >= 0) && (hi <= (ptrdiff_t)ext->size);
}

static int mca_osc_umr_rma(int is_put, void *origin_addr,
                           umr_ompi_osc_count_t origin_count,
                           ompi_datatype_t *origin_dt, int target,
                           ptrdiff_t target_disp,
                           umr_ompi_osc_count_t target_count,
                           ompi_datatype_t *target_dt, ompi_win_t *win,
                           ompi_request_t **req_p)
{
    mca_osc_umr_win_t *w = mca_osc_umr_win_lookup(win);
    mca_osc_umr_op_t *op;
    ompi_request_t *req;

    if (OPAL_UNLIKELY((origin_count > 0) &&
                      !mca_osc_umr_rma_in_range(w, target, target_disp,
                                                target_count, target_dt))) {
        ++mca_osc_umr.cnt.range_refused;
        MCA_OSC_UMR_VERBOSE(5, "%s to %d refused: displacement %ld, %lu "
                            "element(s) reach outside the target's window "
                            "(%lu bytes, unit %ld)", is_put ? "put" : "get",
                            target, (long)target_disp,
                            (unsigned long)target_count,
                            (unsigned long)w->extents[target].size,
                            (long)w->extents[target].disp_unit);
        return OMPI_ERR_RMA_RANGE;
    }
    if (mca_osc_umr_rma_start(w, is_put, origin_addr, origin_count, origin_dt,
                              target, target_disp, target_count, target_dt,
                              &op)) {
        if (req_p == NULL) {
            return OMPI_SUCCESS;
        }
        /* completions run from progress only: the request is in time */
        req = mca_osc_umr_request_new(win);
        if (req == NULL) {
            mca_osc_umr_rma_complete(w, target);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        *req_p = req;
        if (op != NULL) {
            op->req = req;
        } else {
            mca_osc_umr_request_done(req, OMPI_SUCCESS);
        }
        return OMPI_SUCCESS;
    }
    if (req_p != NULL) {
        return is_put ?
               w->real.osc_rput(origin_addr, origin_count, origin_dt, target,
                                target_disp, target_count, target_dt, win,
                                req_p) :
               w->real.osc_rget(origin_addr, origin_count, origin_dt, target,
                                target_disp, target_count, target_dt, win,
                                req_p);
    }
    return is_put ?
           w->real.osc_put(origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win) :
           w->real.osc_get(origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win);
}

int mca_osc_umr_put(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win)
{
    return mca_osc_umr_rma(1, (void*)origin_addr, origin_count, origin_dt,
                           target, target_disp, target_count, target_dt, win,
                           NULL);
}

int mca_osc_umr_get(void *origin_addr, umr_ompi_osc_count_t origin_count,
                    ompi_datatype_t *origin_dt, int target,
                    ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                    ompi_datatype_t *target_dt, ompi_win_t *win)
{
    return mca_osc_umr_rma(0, origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win, NULL);
}

int mca_osc_umr_rput(const void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request)
{
    return mca_osc_umr_rma(1, (void*)origin_addr, origin_count, origin_dt,
                           target, target_disp, target_count, target_dt, win,
                           request);
}

int mca_osc_umr_rget(void *origin_addr, umr_ompi_osc_count_t origin_count,
                     ompi_datatype_t *origin_dt, int target,
                     ptrdiff_t target_disp, umr_ompi_osc_count_t target_count,
                     ompi_datatype_t *target_dt, ompi_win_t *win,
                     ompi_request_t **request)
{
    return mca_osc_umr_rma(0, origin_addr, origin_count, origin_dt, target,
                           target_disp, target_count, target_dt, win, request);
}

/* A failed operation with a request: redone through the wrapped module's
 * request form; the user's request completes with that one. 1 when done. */
static int mca_osc_umr_op_redo_step(mca_osc_umr_op_t *op, int wait)
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

void mca_osc_umr_rma_progress(mca_osc_umr_win_t *w)
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

void mca_osc_umr_rma_complete(mca_osc_umr_win_t *w, int target)
{
    mca_osc_umr_op_t *op, *next;

    while (((target < 0) ? w->inflight_total : w->inflight[target]) > 0) {
        umr_mpi_progress();
    }
    OPAL_LIST_FOREACH_SAFE(op, next, &w->failed, mca_osc_umr_op_t) {
        if ((target < 0) || (op->target == target)) {
            opal_list_remove_item(&w->failed, &op->super);
            if (op->req != NULL) {
                (void)mca_osc_umr_op_redo_step(op, 1);
            } else {
                (void)mca_osc_umr_op_redo(op);
                mca_osc_umr_op_free(op, OMPI_SUCCESS);
            }
        }
    }
}
