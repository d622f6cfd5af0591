/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * libumr_mpich.so: MPI_Put, MPI_Get, MPI_Rput, MPI_Rget on the binding's
 * windows (umr_mpich_win.h), and the calls that end an epoch or flush,
 * which complete the binding's operations first.
 *
 * An operation the core takes (umr_mpi_rma.h: a ready target key, the
 * choice) moves zero-copy; every other goes to MPICH untouched (the first
 * use of a target access, whose key is asked for then; accumulate
 * operations, which are MPICH's always). Its datatypes are held until it
 * ends (umr_mpich_types.h): one that fails in flight is done again through
 * MPICH, with the same arguments, before the epoch ends.
 *
 * MPI_Rput and MPI_Rget taken zero-copy return a generalized request
 * (MPIX_Grequest_start) that completes when the operation does, from
 * progress: the origin buffer is free again (Rput) or holds the data
 * (Rget). Its poll function runs the binding's progress; one that failed
 * is done again as MPICH's Put/Get followed by MPI_Win_flush_local to its
 * target (not MPICH's Rget: over UCX it completes a noncontiguous one's
 * request before the data is there, pmodels/mpich#7896).
 */
#include "umr_config.h"

#include "umr_mpich.h"
#include "umr_mpich_core.h"
#include "umr_mpich_types.h"
#include "umr_mpich_win.h"

#include "umr_mpi_choice.h"
#include "umr_mpi_dtype.h"

#include <stdlib.h>

/* where an operation is (an Rput/Rget's request completes at DONE) */
enum {
    UMR_MPICH_RMA_FLIGHT,          /* zero-copy, in flight */
    UMR_MPICH_RMA_FAILED,          /* in its window's redo */
    UMR_MPICH_RMA_DONE
};

typedef struct umr_mpich_rma_op {
    umr_mpi_rma_op_t core;
    ucs_list_link_t  list;         /* in its window's redo while FAILED */
    umr_mpich_win_t  *uw;
    int              is_put;
    void             *origin_addr;
    int              origin_count;
    MPI_Datatype     origin_type;
    int              target;
    MPI_Aint         target_disp;
    int              target_count;
    MPI_Datatype     target_type;
    int              state;        /* UMR_MPICH_RMA_* */
    int              error;        /* of the redo */
    /* an Rput/Rget's */
    int              is_req;
    int              returned;     /* its call returned */
    int              released;     /* MPICH is done with greq */
    MPI_Request      greq;         /* the user's */
} umr_mpich_rma_op_t;

static void umr_mpich_rma_release_types(umr_mpich_rma_op_t *op)
{
    if (op->origin_type != MPI_DATATYPE_NULL) {
        umr_mpich_type_release(op->origin_type);
        umr_mpich_type_release(op->target_type);
        op->origin_type = op->target_type = MPI_DATATYPE_NULL;
    }
}

static void umr_mpich_rma_op_free(umr_mpich_rma_op_t *op)
{
    umr_mpich_rma_release_types(op);
    free(op);
}

/* An Rput/Rget's request is complete; the operation freed once MPICH is
 * done with the request too. */
static void umr_mpich_rma_finish(umr_mpich_rma_op_t *op)
{
    op->state = UMR_MPICH_RMA_DONE;
    umr_mpich_rma_release_types(op);
    if (op->returned) {
        ++umr_mpich.cnt.rma_requests_later;
    }
    if (op->greq != MPI_REQUEST_NULL) {
        PMPI_Grequest_complete(op->greq);
    }
    if (op->released) {
        umr_mpich_rma_op_free(op);
    }
}

static void umr_mpich_rma_done(umr_mpi_rma_op_t *core, int ok)
{
    umr_mpich_rma_op_t *op = ucs_container_of(core, umr_mpich_rma_op_t,
                                              core);

    if (!ok) {
        op->state = UMR_MPICH_RMA_FAILED;
        umr_mpich_win_redo_add(op->uw, &op->list);
    } else if (op->is_req) {
        umr_mpich_rma_finish(op);
    } else {
        umr_mpich_rma_op_free(op);
    }
}

void umr_mpich_rma_redo(ucs_list_link_t *link)
{
    umr_mpich_rma_op_t *op = ucs_container_of(link, umr_mpich_rma_op_t, list);
    const umr_mpich_next_t *n = umr_mpich_next();

    ucs_list_del(link);
    op->error = op->is_put ?
                n->Put(op->origin_addr, op->origin_count, op->origin_type,
                       op->target, op->target_disp, op->target_count,
                       op->target_type, op->uw->win) :
                n->Get(op->origin_addr, op->origin_count, op->origin_type,
                       op->target, op->target_disp, op->target_count,
                       op->target_type, op->uw->win);
    if (!op->is_req) {
        umr_mpich_rma_op_free(op);
        return;
    }
    /* the request's meaning (a passive epoch: Rput/Rget are only there) */
    if (op->error == MPI_SUCCESS) {
        op->error = n->Win_flush_local(op->target, op->uw->win);
    }
    umr_mpich_rma_finish(op);
}

/* ---- an Rput/Rget's generalized request ------------------------------- */

static int umr_mpich_rma_query(void *extra, MPI_Status *status)
{
    umr_mpich_rma_op_t *op = extra;

    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG    = MPI_UNDEFINED;
    status->MPI_ERROR  = op->error;
    return op->error;
}

/* (MPICH frees a generalized request once it is complete) */
static int umr_mpich_rma_gfree(void *extra)
{
    umr_mpich_rma_op_t *op = extra;

    op->released = 1;
    op->greq     = MPI_REQUEST_NULL;
    if (op->state == UMR_MPICH_RMA_DONE) {
        umr_mpich_rma_op_free(op);
    }
    return MPI_SUCCESS;
}

static int umr_mpich_rma_gcancel(void *extra, int complete)
{
    return MPI_SUCCESS;   /* one-sided requests cannot be cancelled */
}

static int umr_mpich_rma_poll(void *extra, MPI_Status *status)
{
    umr_mpich_rma_op_t *op = extra;

    if (op->state == UMR_MPICH_RMA_FLIGHT) {
        umr_mpich_progress();
    }
    if (op->state == UMR_MPICH_RMA_FAILED) {
        umr_mpich_rma_redo(&op->list);
    }
    return MPI_SUCCESS;
}

static int umr_mpich_rma_gwait(int count, void **extras, double timeout,
                               MPI_Status *status)
{
    int i;

    for (i = 0; i < count; ++i) {
        umr_mpich_rma_poll(extras[i], status);
    }
    return MPI_SUCCESS;
}

/* ---- put and get ------------------------------------------------------ */

/* 1: taken zero-copy (`req_p`, when asked: the binding's request), 0: the
 * caller hands it to MPICH. */
static int umr_mpich_rma_try(int is_put, void *origin_addr, int origin_count,
                             MPI_Datatype origin_type, int target,
                             MPI_Aint target_disp, int target_count,
                             MPI_Datatype target_type, MPI_Win win,
                             MPI_Request *req_p)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(win);
    umr_mpi_rma_call_t c;
    umr_mpi_rma_key_t *key;
    umr_mpich_rma_op_t *op;

    if ((uw == NULL) || !umr_mpich.active || (origin_count <= 0) ||
        (target_count <= 0) ||
        !pthread_equal(pthread_self(), umr_mpich.thread)) {
        return 0;
    }
    c.is_put      = is_put;
    c.target      = target;
    c.origin_addr = origin_addr;
    c.okey        = (uintptr_t)origin_type;
    c.oinfo       = umr_mpi_dtype_get(origin_type);
    c.ocount      = (size_t)origin_count;
    c.disp        = target_disp;
    c.tkey        = (uintptr_t)target_type;
    c.tinfo       = umr_mpi_dtype_get(target_type);
    c.tcount      = (size_t)target_count;
    c.mode        = umr_mpich.cfg.zcopy;
    key = umr_mpi_rma_ready(uw->core, &c);
    if ((key == NULL) || (NULL == (op = malloc(sizeof(*op))))) {
        return 0;
    }
    op->core.done    = umr_mpich_rma_done;
    op->uw           = uw;
    op->is_put       = is_put;
    op->origin_addr  = origin_addr;
    op->origin_count = origin_count;
    op->origin_type  = origin_type;
    op->target       = target;
    op->target_disp  = target_disp;
    op->target_count = target_count;
    op->target_type  = target_type;
    op->state        = UMR_MPICH_RMA_FLIGHT;
    op->error        = MPI_SUCCESS;
    op->is_req       = (req_p != NULL);
    op->returned     = 0;
    op->released     = 0;
    op->greq         = MPI_REQUEST_NULL;
    /* the request before the start (nothing to undo if MPICH has none) */
    if (op->is_req &&
        (PMPIX_Grequest_start(umr_mpich_rma_query, umr_mpich_rma_gfree,
                              umr_mpich_rma_gcancel, umr_mpich_rma_poll,
                              umr_mpich_rma_gwait, op, &op->greq) !=
         MPI_SUCCESS)) {
        free(op);
        return 0;
    }
    /* held before the start: its completion may run inside it */
    umr_mpich_type_hold(origin_type);
    umr_mpich_type_hold(target_type);
    if (!umr_mpi_rma_post(uw->core, &op->core, &c, key)) {
        if (op->is_req) {
            /* MPICH's request the user gets; ours completed and freed */
            op->state = UMR_MPICH_RMA_DONE;
            PMPI_Grequest_complete(op->greq);
            PMPI_Request_free(&op->greq);
        } else {
            umr_mpich_rma_op_free(op);
        }
        return 0;
    }
    if (op->is_req) {
        ++umr_mpich.cnt.rma_requests;
        *req_p       = op->greq;
        op->returned = 1;
    }
    return 1;
}

/* The binding's (zero-copy), or MPICH's: its Rput/Rget when `req_p` is
 * not NULL, its Put/Get otherwise. */
static int umr_mpich_rma_call(int is_put, void *origin_addr, int origin_count,
                              MPI_Datatype origin_type, int target,
                              MPI_Aint target_disp, int target_count,
                              MPI_Datatype target_type, MPI_Win win,
                              MPI_Request *req_p)
{
    const umr_mpich_next_t *n;

    if (umr_mpich_rma_try(is_put, origin_addr, origin_count, origin_type,
                          target, target_disp, target_count, target_type,
                          win, req_p)) {
        return MPI_SUCCESS;
    }
    n = umr_mpich_next();
    if (req_p != NULL) {
        return is_put ?
               n->Rput(origin_addr, origin_count, origin_type, target,
                       target_disp, target_count, target_type, win, req_p) :
               n->Rget(origin_addr, origin_count, origin_type, target,
                       target_disp, target_count, target_type, win, req_p);
    }
    return is_put ?
           n->Put(origin_addr, origin_count, origin_type, target, target_disp,
                  target_count, target_type, win) :
           n->Get(origin_addr, origin_count, origin_type, target, target_disp,
                  target_count, target_type, win);
}

int MPI_Put(const void *origin_addr, int origin_count,
            MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win)
{
    return umr_mpich_rma_call(1, (void*)origin_addr, origin_count,
                              origin_type, target, target_disp, target_count,
                              target_type, win, NULL);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win)
{
    return umr_mpich_rma_call(0, origin_addr, origin_count, origin_type,
                              target, target_disp, target_count, target_type,
                              win, NULL);
}

int MPI_Rput(const void *origin_addr, int origin_count,
             MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win,
             MPI_Request *request)
{
    return umr_mpich_rma_call(1, (void*)origin_addr, origin_count,
                              origin_type, target, target_disp, target_count,
                              target_type, win, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request *request)
{
    return umr_mpich_rma_call(0, origin_addr, origin_count, origin_type,
                              target, target_disp, target_count, target_type,
                              win, request);
}

/* ---- the calls that end an epoch or flush ------------------------------ */

static void umr_mpich_rma_complete(MPI_Win win, int target)
{
    umr_mpich_win_t *uw = umr_mpich_win_find(win);

    if (uw != NULL) {
        umr_mpich_win_complete(uw, target);
    }
}

/* MPI_Win_<name>: the binding's operations to `_target` (-1: every target)
 * complete, then MPICH's call */
#define UMR_MPICH_RMA_SYNC(_name, _target, _params, ...) \
    int MPI_Win_##_name _params \
    { \
        umr_mpich_rma_complete(win, _target); \
        return umr_mpich_next()->Win_##_name(__VA_ARGS__); \
    }

UMR_MPICH_RMA_SYNC(fence, -1, (int assert, MPI_Win win), assert, win)
UMR_MPICH_RMA_SYNC(unlock, rank, (int rank, MPI_Win win), rank, win)
UMR_MPICH_RMA_SYNC(unlock_all, -1, (MPI_Win win), win)
UMR_MPICH_RMA_SYNC(flush, rank, (int rank, MPI_Win win), rank, win)
UMR_MPICH_RMA_SYNC(flush_all, -1, (MPI_Win win), win)
UMR_MPICH_RMA_SYNC(flush_local, rank, (int rank, MPI_Win win), rank, win)
UMR_MPICH_RMA_SYNC(flush_local_all, -1, (MPI_Win win), win)
UMR_MPICH_RMA_SYNC(complete, -1, (MPI_Win win), win)
